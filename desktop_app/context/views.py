"""Each message as it would be sent if kept — its "view": exclusions applied (a tool
call and its result together), old thinking cleared, tool results cleared or trimmed —
with each block's state marked for the plan, and the view's raw token cost.

Separate from `projection.py`, which decides which messages are kept and assembles the
request, because views are per message and cached across projections (`ViewEntry`,
kept by `Projector`): a re-projection of an unchanged chat (the live meter, while the
user types) rebuilds none of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from desktop_app.context.chat_settings import ContextSettings
from desktop_app.context.known_prefix import KnownPrefix
from desktop_app.context.plan import WHOLE_EXCLUDED, BlockState
from desktop_app.context.state import ContextState
from desktop_app.context.trimming import TrimPolicy, trim_text
from desktop_app.core.blocks import (
    Block,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from desktop_app.core.messages import Message
from desktop_app.tokens.counter import MESSAGE_OVERHEAD, TokenCounter

# A message's cached view: the blocks it was made from, whether old thinking was
# dropped, the view (None: nothing sent), the block states it marked, and its tool ids
# excluded with their partner in another message — or, for a message sent as it is with
# no thinking (whose view does not change as turns pass: most of a long chat), the
# message itself: a 100,000-message chat keeps ~25 MB less.
ViewEntry = (
    tuple[
        tuple[Block, ...],
        bool,
        Message | None,
        tuple[tuple[tuple[str, int], tuple[BlockState, int]], ...],
        frozenset[str],
    ]
    | Message
)


class MessageViews:
    """The views of one projection's messages. It marks the states they make in the
    projection's own `message_states` (whole messages) and `block_states` (shared, not
    copied), and keeps new views in `view_cache` (the `Projector`'s). What it knows of the
    transcript as a whole — the turns, the tools' names, the calls excluded with their
    results — is `known`'s."""

    def __init__(
        self,
        counter: TokenCounter,
        messages: Sequence[Message],
        state: ContextState,
        settings: ContextSettings,
        trim_policies: Mapping[str, TrimPolicy],
        view_cache: dict[str, ViewEntry],
        known: KnownPrefix,
        message_states: dict[str, tuple[BlockState, int | None]],
        block_states: dict[tuple[str, int], tuple[BlockState, int]],
    ) -> None:
        self.counter = counter
        self.messages = messages
        self.state = state
        self.settings = settings
        self.trim_policies = trim_policies
        self.view_cache = view_cache
        self.known = known
        self.message_states = message_states
        self.block_states = block_states
        self.touched = {message_id for message_id, _ in state.excluded_blocks}

    def views(self, start: int) -> list[Message | None]:
        """Each message from `start` on as it would be sent if kept (None: nothing of it
        is sent)."""
        state, messages, starts = self.state, self.messages, self.known.starts
        paired_out = self.known.pairs_out(state.excluded_messages, state.excluded_blocks)
        current_turn = starts[-1] if starts else 0
        if messages and messages[-1].role == "assistant":
            # A finished reply: the next request carries the user's next message, so this
            # turn is an earlier one then, and its thinking goes like the others'.
            current_turn = len(messages)
        return [
            self.cached_view(i, messages[i], paired_out, current_turn)
            for i in range(start, len(messages))
        ]

    def tool_name(self, tool_id: str) -> str:
        """The name of the tool a call id belongs to."""
        return self.known.tool_names.get(tool_id, "a tool")

    def cached_view(
        self, index: int, msg: Message, paired_out: set[str], current_turn: int
    ) -> Message | None:
        drop_thinking = (
            self.settings.drop_old_thinking and msg.role == "assistant" and index < current_turn
        )
        # (a partner's exclusion may change with the transcript: another branch, a cut)
        paired = _paired(msg, paired_out) if paired_out else _NONE_PAIRED
        entry = self.view_cache.get(msg.id)
        if entry is msg and not paired:
            return msg
        if (
            type(entry) is tuple
            and entry[0] is msg.blocks
            and entry[1] == drop_thinking
            and entry[4] == paired
        ):
            self.block_states.update(entry[3])
            return entry[2]
        view = self.view(msg, paired_out, drop_thinking)
        if msg.id not in self.message_states:  # whole-message states depend on more than the view
            keys = ((msg.id, j) for j in range(len(msg.blocks)))
            marks = tuple((key, self.block_states[key]) for key in keys if key in self.block_states)
            as_is = view is msg and not marks and not any(map(_is_thinking, msg.blocks))
            entry = (msg.blocks, drop_thinking, view, marks, paired)
            self.view_cache[msg.id] = msg if as_is and not paired else entry
        return view

    def view(self, msg: Message, paired_out: set[str], drop_thinking: bool) -> Message | None:
        if msg.id in self.state.excluded_messages:
            self.message_states[msg.id] = WHOLE_EXCLUDED
            return None
        if msg.id not in self.touched and all(type(b) is TextBlock for b in msg.blocks):
            return msg  # the common case: plain text, nothing to change
        blocks: list[Block] = []
        changed = False
        for j, block in enumerate(msg.blocks):
            new = self.view_block(msg, j, block, paired_out, drop_thinking)
            changed = changed or new is not block
            if new is not None:
                blocks.append(new)
        if not changed:
            return msg
        return replace(msg, blocks=tuple(blocks)) if blocks else None

    def view_block(
        self,
        msg: Message,
        j: int,
        block: Block,
        paired_out: set[str],
        drop_thinking: bool,
    ) -> Block | None:
        key = (msg.id, j)
        if key in self.state.excluded_blocks:
            self.block_states[key] = (BlockState.EXCLUDED, 0)
            return None
        if isinstance(block, ToolUseBlock | ToolResultBlock):
            tool_id = block.id if isinstance(block, ToolUseBlock) else block.tool_use_id
            if tool_id in paired_out:  # a call and its result are sent together or not at all
                self.block_states[key] = (BlockState.EXCLUDED, 0)
                return None
        if drop_thinking and isinstance(block, ThinkingBlock | RedactedThinkingBlock):
            self.block_states[key] = (BlockState.CLEARED, 0)
            return None
        if isinstance(block, ToolResultBlock):
            # its size as the message's own count has it (kept with the chat, not counted
            # again on a long chat's first plan)
            size = self.counter.blocks_of(msg)[j]
            return self.view_result(key, block, self.tool_name(block.tool_use_id), size)
        return block

    def view_result(
        self, key: tuple[str, int], block: ToolResultBlock, tool: str, size: int
    ) -> Block:
        counter = self.counter
        if block.tool_use_id in self.state.cleared_results:
            note = (
                f"[Result cleared to save context: {tool} returned about {size:,} tokens here. "
                "Run the tool again if it is needed.]"
            )
            cleared = ToolResultBlock(block.tool_use_id, note, block.is_error)
            self.block_states[key] = (BlockState.CLEARED, counter.block(cleared))
            return cleared
        if not isinstance(block.content, str):
            return block  # rich results (images, documents) enter whole
        policy = self.trim_policies.get(tool, TrimPolicy(cap_tokens=self.settings.tool_result_cap))
        if not policy.fields and size <= policy.cap_tokens:
            return block
        text = trim_text(block.content, policy, counter.text)
        if text == block.content:
            return block
        trimmed = ToolResultBlock(block.tool_use_id, text, block.is_error)
        self.block_states[key] = (BlockState.TRIMMED, counter.block(trimmed))
        return trimmed

    def cost(self, msg: Message, view: Message) -> int:
        """Raw tokens of a message's view; blocks kept from the original reuse its counts."""
        if view is msg:
            return self.counter.message(msg)
        known = {id(b): c for b, c in zip(msg.blocks, self.counter.blocks_of(msg), strict=True)}
        return MESSAGE_OVERHEAD + sum(
            known.get(id(b)) or self.counter.block(b) for b in view.blocks
        )


_NONE_PAIRED: frozenset[str] = frozenset()


def _paired(msg: Message, paired_out: set[str]) -> frozenset[str]:
    """The tool ids of `msg`'s calls and results that are excluded with their partner."""
    ids = (
        b.id if isinstance(b, ToolUseBlock) else b.tool_use_id
        for b in msg.blocks
        if isinstance(b, ToolUseBlock | ToolResultBlock)
    )
    return frozenset(i for i in ids if i in paired_out)


def _is_thinking(block: Block) -> bool:
    return isinstance(block, ThinkingBlock | RedactedThinkingBlock)
