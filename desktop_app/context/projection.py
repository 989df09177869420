"""The projection: transcript + context state → the exact next request, and an account of it.

One pure function decides what Claude is sent. Request layout (docs/architecture.md):

    system    base prompt (+ where the workspace is), then the pinned facts, verbatim;
              a cache breakpoint after the facts
    messages  the first user message, the active summary (marked as one, naming its
              turns), then the most recent turns, whole tool groups only; same-role
              neighbours merged explicitly; a cache breakpoint on the last message

Nothing here deletes: policies change the view. Every block of the transcript gets a
state in the plan — in context, summarized in #k, trimmed, excluded, cleared, not sent —
so the UI can show, block by block, what the model will see.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from itertools import pairwise

from desktop_app.context.chat_settings import ContextSettings
from desktop_app.context.facts import facts_block
from desktop_app.context.project import ProjectLayers
from desktop_app.context.state import ContextState, Summary
from desktop_app.context.trimming import TrimPolicy, trim_text
from desktop_app.core.binding import PrefixDigest, sendable_thinking
from desktop_app.core.blocks import (
    THINKING_TYPES,
    Block,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from desktop_app.core.history import merge_same_role, without_trailing_whitespace
from desktop_app.core.messages import Message
from desktop_app.core.model_facts import ModelFacts, facts_for
from desktop_app.core.protocol import is_clean_start, thinking_problems
from desktop_app.core.repair import repair
from desktop_app.core.request import ChatRequest, SystemPart, ToolSpec
from desktop_app.core.thinking import ThinkingSetup
from desktop_app.tokens.counter import (
    MESSAGE_OVERHEAD,
    REQUEST_OVERHEAD,
    TokenCounter,
    TokenFigure,
)

FORECAST_TURNS = 5  # turns averaged for "auto-compaction in about N turns"
NO_THINKING = ThinkingSetup(None, "", False)


class BlockState(StrEnum):
    IN_CONTEXT = "in context"
    SUMMARIZED = "summarized"
    TRIMMED = "trimmed"
    EXCLUDED = "excluded"
    CLEARED = "cleared"
    NOT_SENT = "not sent"


# A whole message's state, shared by every message in it (a 100,000-message chat's plan
# marks most of its messages not sent: one tuple, not one each).
_WHOLE_NOT_SENT: tuple[BlockState, int | None] = (BlockState.NOT_SENT, None)
_WHOLE_EXCLUDED: tuple[BlockState, int | None] = (BlockState.EXCLUDED, None)


@dataclass(frozen=True, slots=True)
class BlockStatus:
    state: BlockState
    tokens: int  # the block as stored: its own local estimate, never calibrated
    sent_tokens: int  # what it costs in the request: 0 unless in context or trimmed
    summary: int | None = None  # k of "summarized in #k"
    why: str = ""  # why a block is not sent, where one says (a thinking block's binding)

    @property
    def label(self) -> str:
        if self.state is BlockState.SUMMARIZED:
            return f"summarized in #{self.summary}"
        if self.state is BlockState.TRIMMED:
            return f"trimmed {self.tokens:,} → {self.sent_tokens:,} tokens"
        if self.why:
            return f"{self.state.value}: {self.why}"
        return self.state.value


class Section(StrEnum):
    PROJECT_INSTRUCTIONS = "project instructions"
    PROJECT_FACTS = "project facts"
    PROJECT_KNOWLEDGE = "project knowledge"
    SYSTEM = "system"
    FACTS = "facts"
    TOOLS = "tools"
    SUMMARY = "summary"
    MESSAGES = "messages"
    RESERVED = "reserved output"
    FREE = "free"


@dataclass(frozen=True, slots=True)
class Plan:
    request: ChatRequest
    sections: Mapping[Section, int]  # calibrated token estimates; they add up to the window
    context_window: int
    estimated_input: int  # calibrated estimate of the whole prompt
    calibration: float  # the factor applied to totals, for this request's mix of content
    threshold: int  # tokens at which auto-compaction is due
    compaction_due: bool
    due_reason: str
    fits: bool  # estimated input + max_tokens ≤ window
    forecast_turns: int | None  # "auto-compaction in about N turns" (None: no rate yet)
    first_sent_after_head: str | None  # where the context "starts" after the first message
    not_sent_count: int
    last_reported: TokenFigure | None  # the last reply's prompt, as the API counted it (exact)
    # Per-message and per-block states that differ from "in context, unchanged".
    message_states: Mapping[str, tuple[BlockState, int | None]] = field(repr=False)
    block_states: Mapping[tuple[str, int], tuple[BlockState, int]] = field(repr=False)
    counter: TokenCounter = field(repr=False, compare=False)
    project: ProjectLayers | None = field(default=None, repr=False, compare=False)
    # What the chat's thinking choice became for this model (its `note` says any change).
    thinking: ThinkingSetup = field(default=NO_THINKING, repr=False, compare=False)
    # Why each thinking block "not sent" is not sent (core/binding.py).
    unsent_reasons: Mapping[tuple[str, int], str] = field(
        default_factory=dict, repr=False, compare=False
    )
    # The whole prompt as the server's count_tokens counted this very request (exact).
    exact_input: TokenFigure | None = field(default=None, compare=False)
    # Why nothing can be compacted now ("" when something can; planner.compaction_blocked).
    compaction_blocked: str = field(default="", compare=False)
    # The message this request's last one is a new version of ("": none — not an edit).
    edit_of: str = field(default="", compare=False)
    # The failed or interrupted reply this request answers again, beside it (Retry).
    retries: str = field(default="", compare=False)
    # The words standing for an empty composer's draft ("": the draft is the user's own),
    # so that the next request can be shown as one that can be sent (Chat.next_planning).
    stand_in: str = field(default="", compare=False)

    @property
    def input_figure(self) -> TokenFigure:
        """The whole prompt of this request: the server's count where it counted it,
        else the local estimate."""
        return self.exact_input or TokenFigure(self.estimated_input, exact=False)

    def block_status(self, message: Message, index: int) -> BlockStatus:
        """The state of one block of the transcript in this request, with its own local
        estimate (calibration scales totals, never a block: its number must not move when
        a factor is learned)."""
        tokens = self.counter.blocks_of(message)[index]
        if message.id == self.retries:  # Retry's request answers again, beside it
            return BlockStatus(BlockState.NOT_SENT, tokens, 0, why="Retry answers again")
        whole = self.message_states.get(message.id)
        if whole is not None:
            return BlockStatus(whole[0], tokens, 0, whole[1])
        special = self.block_states.get((message.id, index))
        if special is not None:
            state, sent_raw = special
            why = self.unsent_reasons.get((message.id, index), "")
            return BlockStatus(state, tokens, sent_raw, why=why)
        return BlockStatus(BlockState.IN_CONTEXT, tokens, tokens)

    @property
    def forecast(self) -> str:
        if self.compaction_due:
            return "auto-compaction is due now"
        if self.forecast_turns is None:
            return "not enough turns yet to forecast auto-compaction"
        turns = self.forecast_turns
        return (
            f"at the recent rate, auto-compaction in about {turns} turn{'s' if turns != 1 else ''}"
        )


def summary_text(summary: Summary, turns: tuple[int, int] | None) -> str:
    span = f"turns {turns[0]}–{turns[1]}" if turns else f"{len(summary.covers)} messages"
    return (
        f"[Summary #{summary.number} of the earlier conversation ({span}), written by ContextDesk "
        "so the conversation fits the context window. The full messages are kept in the chat.]\n\n"
        f"{summary.text}"
    )


def omission_note(count: int, turns: tuple[int, int]) -> str:
    return (
        f"[ContextDesk note: {count} earlier message{'s' if count != 1 else ''} (turns {turns[0]}–"
        f"{turns[1]}) are not included in this request, to fit the context window.]"
    )


def workspace_note(workspace: str) -> str:
    return f"The user's workspace folder is {workspace}. File tools take paths relative to it."


def turn_numbers(messages: Sequence[Message], clean: Sequence[bool] | None = None) -> list[int]:
    """1-based turn number of every message: a turn starts at each clean user message."""
    if clean is None:
        clean = [is_clean_start(messages, i) for i in range(len(messages))]
    numbers, turn = [], 0
    for index, starts_turn in enumerate(clean):
        if index == 0 or starts_turn:
            turn += 1
        numbers.append(turn)
    return numbers


_ViewEntry = tuple[
    tuple[Block, ...], bool, "Message | None", list[tuple[tuple[str, int], tuple[BlockState, int]]]
]


class Projector:
    """Projects with one `TokenCounter`. It and the view cache here make a re-projection
    of an unchanged chat (the live meter, while the user types) cheap."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.views: dict[str, _ViewEntry] = {}
        self._views_for: tuple[object, ...] = ()

    def view_cache(
        self, state: ContextState, settings: ContextSettings, policies: Mapping[str, TrimPolicy]
    ) -> dict[str, _ViewEntry]:
        """The cache of message views, emptied whenever anything that shapes a view changed."""
        shapers = (state.excluded_messages, state.excluded_blocks, state.cleared_results, policies)
        scalars = (settings.tool_result_cap, settings.drop_old_thinking)
        old = self._views_for
        if (
            not old
            # Equal, not only identical: a state read back from disk after a turn holds
            # new but equal sets, and rebuilding 5,000 views costs ~0.4 s.
            or any(a is not b and a != b for a, b in zip(shapers, old[:4], strict=True))
            or scalars != old[4:]
        ):
            self.views = {}
            self._views_for = (*shapers, *scalars)
        return self.views

    def project(
        self,
        messages: Sequence[Message],
        state: ContextState,
        settings: ContextSettings,
        *,
        model: str,
        system: str = "",
        tools: Sequence[ToolSpec] = (),
        trim_policies: Mapping[str, TrimPolicy] | None = None,
        workspace: str | None = None,
        thinking: ThinkingSetup | None = None,
        facts: ModelFacts | None = None,
        project: ProjectLayers | None = None,
    ) -> Plan:
        """`thinking`: the fields the chat's choice becomes for this model (None: none
        sent); `facts`: the model's rules (None: the built-in table's for `model`)."""
        policies = trim_policies or _NO_POLICIES
        cache = self.view_cache(state, settings, policies)
        projection = _Projection(self.counter, messages, state, settings, model, policies, cache)
        projection.facts = facts or facts_for(model)
        return projection.run(system, tuple(tools), workspace, thinking or NO_THINKING, project)


class _Projection:
    def __init__(
        self,
        counter: TokenCounter,
        messages: Sequence[Message],
        state: ContextState,
        settings: ContextSettings,
        model: str,
        trim_policies: Mapping[str, TrimPolicy],
        view_cache: dict[str, _ViewEntry],
    ) -> None:
        self.view_cache = view_cache
        self.counter = counter
        self.messages = messages
        self.state = state
        self.settings = settings
        self.model = model
        self.trim_policies = trim_policies
        self.factor = counter.calibration.factor(model)
        self.message_states: dict[str, tuple[BlockState, int | None]] = {}
        self.block_states: dict[tuple[str, int], tuple[BlockState, int]] = {}
        self.clean = [is_clean_start(messages, i) for i in range(len(messages))]
        self.touched = {message_id for message_id, _ in state.excluded_blocks}
        self.recount = False  # set when repair or stripping changed blocks after costing
        self.project: ProjectLayers | None = None
        self.facts: ModelFacts = facts_for(model)
        self.unsent_reasons: dict[tuple[str, int], str] = {}  # why a thinking block is not sent
        self._owners: dict[int, tuple[str, int]] | None = None
        self._tool_names: dict[str, str] | None = None

    def run(
        self,
        system: str,
        tools: tuple[ToolSpec, ...],
        workspace: str | None,
        thinking: ThinkingSetup,
        project: ProjectLayers | None = None,
    ) -> Plan:
        messages, settings, counter = self.messages, self.settings, self.counter
        n = len(messages)
        turns = turn_numbers(messages, self.clean)
        views = self.views()
        costs = [0 if v is None else self.cost(m, v) for m, v in zip(messages, views, strict=True)]

        # The opening question is kept; a history that opens with the assistant has none
        # (and a call there must stay with its result).
        head = [0] if settings.keep_first_message and n and self.clean[0] else []
        summary = self.state.active_summary
        summarized_until = self.mark_summarized(summary, head)
        tail_from = summarized_until + 1 if summary else (1 if head else 0)
        if summary:  # the kept part must start cleanly, even if the summary's span does not end so
            clean = next((i for i in range(tail_from, n) if self.clean[i]), n)
            for i in range(tail_from, clean):
                self.message_states.setdefault(messages[i].id, _WHOLE_NOT_SENT)
            tail_from = clean

        # The system prompt, facts, tools and summary are fixed; the tail is what may shrink.
        base = "\n\n".join(p for p in (system, workspace_note(workspace) if workspace else "") if p)
        facts = facts_block(self.state.facts)
        # The project's layers first, one cache breakpoint after them: every chat of the
        # project shares that prefix.
        shared = SystemPart(project.text if project else "", cache=True)
        system_parts = tuple(
            p
            for p in (shared, SystemPart(base, cache=not facts), SystemPart(facts, cache=True))
            if p.text
        )
        self.project = project
        summary_message = self.summary_message(summary, turns) if summary else None
        fixed = (
            REQUEST_OVERHEAD
            + counter.system(system_parts)
            + counter.tools(tools)
            + sum(costs[i] for i in head)
            + (counter.message(summary_message) if summary_message else 0)
        )
        starts = [i for i in range(tail_from, n) if i == tail_from or self.clean[i]]
        keep_from = self.window_start(starts, tail_from, n, len(head))
        untrimmed = fixed + sum(costs[tail_from:])
        keep_from = self.trim_to_budget(starts, keep_from, costs, fixed)

        for i in range(tail_from, keep_from):
            self.message_states[messages[i].id] = _WHOLE_NOT_SENT
        # What is sent, in order, each with its raw cost (reused below: no recount).
        kept = [(views[i], costs[i]) for i in [*head, *range(keep_from, n)]]
        synthetic = [summary_message] if summary_message else []
        if keep_from > tail_from:
            turns_cut = (turns[tail_from], turns[keep_from - 1])
            synthetic.append(_user_note(omission_note(keep_from - tail_from, turns_cut)))
        kept[len(head) : len(head)] = [(m, counter.message(m)) for m in synthetic]
        sent = self.sendable([m for m, _ in kept if m is not None])
        sent = self.bound_thinking(sent, system_parts, tools)
        if self.recount:
            messages_raw = counter.messages(sent)
        else:  # merging regroups blocks: the same block costs, one overhead per sent message
            blocks_raw = sum(cost - MESSAGE_OVERHEAD for m, cost in kept if m is not None)
            messages_raw = blocks_raw + MESSAGE_OVERHEAD * len(sent)

        if thinking.thinks is True and thinking_problems(sent, enabled=True):
            # The turn in progress began without thinking (a budget turned on mid-loop, an
            # import, a block not sent): with a budget on the API refuses that, so this
            # request goes without; the next turn has it again.
            thinking = replace(
                thinking,
                thinking=None,
                thinks=False,
                note="this request goes without thinking: the turn in progress began without it",
            )
        request = ChatRequest(
            model=self.model,
            messages=sent,
            max_tokens=settings.max_tokens,
            system=system_parts,
            tools=tools,
            thinking=thinking.thinking,
            effort=thinking.effort,
            cache_last_message=True,
        )
        plan = self.plan(request, summary_message, messages_raw, untrimmed, starts, costs, facts)
        return replace(plan, thinking=thinking)

    def bound_thinking(
        self, sent: tuple[Message, ...], system: tuple[SystemPart, ...], tools: tuple[ToolSpec, ...]
    ) -> tuple[Message, ...]:
        """`sent` without the thinking blocks the model would not take: written by a
        model it cannot read, or bound to a prefix that has changed since
        (core/binding.py). Each block left out is marked "not sent", with why."""
        facts = self.facts
        if not any(m.role == "assistant" and _has_thinking(m) for m in sent):
            return sent  # the usual case: nothing to check, nothing hashed
        digest = PrefixDigest((p.text for p in system), (t.to_api() for t in tools))
        out: list[Message] = []
        for message in sent:
            if message.role == "assistant" and _has_thinking(message):
                unsent = sendable_thinking(message, digest.value, facts)
                if unsent is not None:
                    message = self.without_thinking(message, unsent.reason)
            out.append(message)
            digest.extend((message,))
        return tuple(out)

    def without_thinking(self, message: Message, reason: str) -> Message:
        """`message` without its thinking, each block marked "not sent" (the blocks are
        found in the transcript by identity: the view shares them)."""
        owners = self.thinking_owners()
        for block in message.blocks:
            if isinstance(block, THINKING_TYPES) and id(block) in owners:
                key = owners[id(block)]
                self.block_states[key] = (BlockState.NOT_SENT, 0)
                self.unsent_reasons[key] = reason
        self.recount = True
        kept = tuple(b for b in message.blocks if not isinstance(b, THINKING_TYPES))
        return replace(message, blocks=kept)

    def thinking_owners(self) -> dict[int, tuple[str, int]]:
        """Each thinking block of the transcript: its message and index (built on need)."""
        if self._owners is None:
            self._owners = {
                id(b): (m.id, j)
                for m in self.messages
                if m.role == "assistant"
                for j, b in enumerate(m.blocks)
                if isinstance(b, THINKING_TYPES)
            }
        return self._owners

    def sendable(self, kept: list[Message]) -> tuple[Message, ...]:
        """Merge same-role neighbours; where exclusions or an assistant-after-assistant
        merge may have broken a rule, repair (reported by the validator if it ever fails)."""
        risky = bool(self.state.excluded_messages or self.state.excluded_blocks) or any(
            a.role == b.role == "assistant" for a, b in pairwise(kept)
        )
        sent = merge_same_role(kept)
        if sent and sent[0].role != "user":
            sent = (
                _user_note("[ContextDesk note: the conversation's first message is excluded.]"),
                *sent,
            )
            self.recount = True
        if risky:
            sent = repair(sent).messages
            self.recount = True
        if sent and sent[-1].role == "assistant":
            last = without_trailing_whitespace(sent[-1])
            self.recount = self.recount or last is not sent[-1]
            sent = (*sent[:-1], last)
        return sent

    # -- the view of each message ------------------------------------------------------------

    def views(self) -> list[Message | None]:
        """Each message as it would be sent if kept (None: nothing of it is sent)."""
        state, messages = self.state, self.messages
        paired_out: set[str] = set()  # tool ids excluded with their partner
        if state.excluded_messages or state.excluded_blocks:
            for msg in messages:
                for j, block in enumerate(msg.blocks):
                    out = msg.id in state.excluded_messages or (msg.id, j) in state.excluded_blocks
                    if out and isinstance(block, ToolUseBlock):
                        paired_out.add(block.id)
                    elif out and isinstance(block, ToolResultBlock):
                        paired_out.add(block.tool_use_id)
        current_turn = max((i for i, clean in enumerate(self.clean) if clean), default=0)
        if messages and messages[-1].role == "assistant":
            # A finished reply: the next request carries the user's next message, so this
            # turn is an earlier one then, and its thinking goes like the others'.
            current_turn = len(messages)
        return [
            self.cached_view(i, msg, paired_out, current_turn) for i, msg in enumerate(messages)
        ]

    def tool_name(self, tool_id: str) -> str:
        """The name of the tool a call id belongs to (the map is built on first need)."""
        if self._tool_names is None:
            self._tool_names = {
                b.id: b.name for m in self.messages for b in m.blocks if isinstance(b, ToolUseBlock)
            }
        return self._tool_names.get(tool_id, "a tool")

    def cached_view(
        self, index: int, msg: Message, paired_out: set[str], current_turn: int
    ) -> Message | None:
        drop_thinking = (
            self.settings.drop_old_thinking and msg.role == "assistant" and index < current_turn
        )
        entry = self.view_cache.get(msg.id)
        if entry is not None and entry[0] is msg.blocks and entry[1] == drop_thinking:
            self.block_states.update(entry[3])
            return entry[2]
        view = self.view(msg, paired_out, drop_thinking)
        if msg.id not in self.message_states:  # whole-message states depend on more than the view
            keys = ((msg.id, j) for j in range(len(msg.blocks)))
            marks = [(key, self.block_states[key]) for key in keys if key in self.block_states]
            self.view_cache[msg.id] = (msg.blocks, drop_thinking, view, marks)
        return view

    def view(self, msg: Message, paired_out: set[str], drop_thinking: bool) -> Message | None:
        if msg.id in self.state.excluded_messages:
            self.message_states[msg.id] = _WHOLE_EXCLUDED
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

    # -- which messages are kept ------------------------------------------------------------

    def mark_summarized(self, summary: Summary | None, head: list[int]) -> int:
        """Mark what the active summary stands for; return the last index it covers."""
        if summary is None:
            return head[-1] if head else -1
        covered = set(summary.covers)
        indices = [i for i, m in enumerate(self.messages) if m.id in covered]
        until = max(indices, default=head[-1] if head else -1)
        for i in range(head[-1] + 1 if head else 0, until + 1):
            msg = self.messages[i]
            if msg.id not in self.message_states:
                state = BlockState.SUMMARIZED if msg.id in covered else BlockState.NOT_SENT
                self.message_states[msg.id] = (state, summary.number if msg.id in covered else None)
        return until

    def window_start(self, starts: list[int], tail_from: int, n: int, head_count: int) -> int:
        """Seed 000's sliding window by message count: first + the latest N−1 (cut at a
        clean start, so the kept part may hold fewer)."""
        limit = self.settings.max_context_messages
        if limit <= 0 or n - tail_from <= limit - head_count:
            return tail_from
        candidate = n - max(1, limit - head_count)
        return next((s for s in starts if s >= candidate), starts[-1] if starts else tail_from)

    def trim_to_budget(
        self, starts: list[int], keep_from: int, costs: list[int], fixed: int
    ) -> int:
        """Seed 001's trim, when the request would not fit: keep the first message and the
        most recent N turns, dropping the whole middle at once (a stable cut keeps the
        prompt cache useful); if that is still too much, drop recent turns oldest first,
        always keeping the latest one."""
        budget = self.settings.context_window - self.settings.max_tokens
        if self.calibrated(fixed + sum(costs[keep_from:])) <= budget:
            return keep_from
        fixed += self.counter.message(_user_note(omission_note(10**6, (10**5, 10**5))))  # its note
        recent = self.settings.keep_recent_turns
        later = [s for s in starts if s > keep_from]
        if recent > 0 and len(later) >= recent:
            keep_from = later[-recent]
        for cut in (s for s in starts if s > keep_from):
            if self.calibrated(fixed + sum(costs[keep_from:])) <= budget:
                break
            keep_from = cut
        return keep_from

    # -- the account -------------------------------------------------------------------------

    def summary_message(self, summary: Summary, turns: list[int]) -> Message:
        covered = [i for i, m in enumerate(self.messages) if m.id in set(summary.covers)]
        span = (turns[covered[0]], turns[covered[-1]]) if covered else None
        return Message(
            role="user",
            blocks=(TextBlock(summary_text(summary, span)),),
            id=f"summary-{summary.id}",
        )

    def calibrated(self, raw: int) -> int:
        return round(raw * self.factor)

    def plan(
        self,
        request: ChatRequest,
        summary_message: Message | None,
        messages_raw: int,
        untrimmed_raw: int,
        starts: list[int],
        costs: list[int],
        facts: str,
    ) -> Plan:
        counter, settings = self.counter, self.settings
        window = settings.context_window
        self.factor = counter.request_factor(request)  # this body's mix of content
        project = self.project.text if self.project else ""
        system_raw = counter.system(
            tuple(p for p in request.system if p.text not in (facts, project))
        )
        facts_raw = counter.system((SystemPart(facts),)) if facts else 0
        project_raw = counter.system((SystemPart(project),)) if project else 0
        layers_raw = _layer_costs(self.project, project_raw, counter)
        tools_raw = counter.tools(request.tools)
        summary_raw = (
            sum(counter.block(b) for b in summary_message.blocks) if summary_message else 0
        )
        total_raw = REQUEST_OVERHEAD + counter.system(request.system) + tools_raw + messages_raw
        estimated = self.calibrated(total_raw)
        sections = {
            Section.SYSTEM: self.calibrated(system_raw),
            Section.FACTS: self.calibrated(facts_raw),
            Section.TOOLS: self.calibrated(tools_raw),
            Section.SUMMARY: self.calibrated(summary_raw),
            Section.PROJECT_INSTRUCTIONS: self.calibrated(layers_raw.get("instructions", 0)),
            Section.PROJECT_FACTS: self.calibrated(layers_raw.get("facts", 0)),
            Section.PROJECT_KNOWLEDGE: self.calibrated(layers_raw.get("knowledge", 0)),
            Section.MESSAGES: estimated
            - sum(
                self.calibrated(x)
                for x in (system_raw, facts_raw, tools_raw, summary_raw, project_raw)
            ),
            Section.RESERVED: settings.max_tokens,
        }
        sections[Section.FREE] = max(0, window - sum(sections.values()))

        threshold = int(window * settings.compaction_threshold)
        untrimmed = self.calibrated(untrimmed_raw)
        due_reason = ""
        if untrimmed >= threshold:
            share = f"{settings.compaction_threshold:.0%}"
            due_reason = f"the input (≈{untrimmed:,} tokens) reached {share} of the window"
        elif untrimmed + settings.max_tokens > window:
            due_reason = "the input plus the reserved reply would not fit the window"
        first_after_head = next(
            (m.id for m in self.messages[1:] if m.id not in self.message_states), None
        )
        return Plan(
            request=request,
            sections=sections,
            context_window=window,
            estimated_input=estimated,
            calibration=self.factor,
            threshold=threshold,
            compaction_due=bool(due_reason),
            due_reason=due_reason,
            fits=estimated + settings.max_tokens <= window,
            forecast_turns=self.forecast(starts, costs, threshold - untrimmed),
            first_sent_after_head=first_after_head,
            last_reported=next(
                (
                    TokenFigure(m.usage.prompt_tokens, exact=True)
                    for m in reversed(self.messages)
                    if m.role == "assistant" and m.usage and m.usage.prompt_tokens
                ),
                None,
            ),
            not_sent_count=sum(
                1 for s, _ in self.message_states.values() if s is BlockState.NOT_SENT
            ),
            message_states=self.message_states,
            block_states=self.block_states,
            counter=counter,
            project=self.project,
            unsent_reasons=self.unsent_reasons,
        )

    def forecast(self, starts: list[int], costs: list[int], headroom: int) -> int | None:
        if headroom <= 0:
            return 0
        recent = starts[-FORECAST_TURNS:]  # the turns of the tail, newest last
        if len(recent) < 2:
            return None
        rate = self.calibrated(sum(costs[recent[0] :])) / len(recent)
        return math.ceil(headroom / rate) if rate > 0 else None


_NO_POLICIES: Mapping[str, TrimPolicy] = {}


def _layer_costs(
    project: ProjectLayers | None, whole: int, counter: TokenCounter
) -> dict[str, int]:
    """Each project layer's share of the project's part (`whole`, raw): its own text,
    with the part's framing and joins given to the first layer sent."""
    if project is None or not whole:
        return {}
    costs = {layer.name: counter.text(layer.text) for layer in project.layers if layer.text}
    first = next(iter(costs))
    costs[first] += whole - sum(costs.values())
    return costs


def _has_thinking(message: Message) -> bool:
    return any(isinstance(b, THINKING_TYPES) for b in message.blocks)


def _user_note(text: str) -> Message:
    return Message(role="user", blocks=(TextBlock(text),), id="context-note")
