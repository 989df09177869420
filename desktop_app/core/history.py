"""Small facts about a history that the loop and the projection both need."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from desktop_app.core.blocks import Block, TextBlock, ToolResultBlock, ToolUseBlock
from desktop_app.core.messages import Message


def merge_same_role(messages: Sequence[Message]) -> tuple[Message, ...]:
    """Merge neighbours of the same role, as the projection must do explicitly (invariant 1).

    A user message typed after a run of tool results joins the results' message; the
    results stay first. The first message's id and metadata are kept.
    """
    out: list[Message] = []
    for msg in messages:
        if out and out[-1].role == msg.role:
            prev = out[-1]
            blocks: tuple[Block, ...] = prev.blocks + msg.blocks
            if msg.role == "user":
                results = [b for b in blocks if isinstance(b, ToolResultBlock)]
                rest = [b for b in blocks if not isinstance(b, ToolResultBlock)]
                blocks = (*results, *rest)
            out[-1] = replace(prev, blocks=blocks)
        else:
            out.append(msg)
    return tuple(out)


def tool_calls(message: Message) -> list[ToolUseBlock]:
    return [b for b in message.blocks if isinstance(b, ToolUseBlock)]


class EarlierCallIds:
    """The tool-call ids of the source messages before an index, gathered only as far as a
    repaired message needs them (a long valid stretch costs nothing until then)."""

    def __init__(self, source: Sequence[Message]) -> None:
        self.source = source
        self.ids: set[str] = set()
        self.upto = 0  # source messages before this index are in `ids`

    def before(self, index: int) -> set[str]:
        if index > self.upto:
            self.ids.update(
                b.id
                for m in self.source[self.upto : index]
                for b in m.blocks
                if type(b) is ToolUseBlock
            )
            self.upto = index
        return self.ids


def unanswered_calls(messages: Sequence[Message]) -> list[ToolUseBlock]:
    """Calls in the last assistant message that no later user message answers yet."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "assistant":
            answered = {
                b.tool_use_id
                for later in messages[index + 1 :]
                for b in later.blocks
                if isinstance(b, ToolResultBlock)
            }
            return [c for c in tool_calls(messages[index]) if c.id not in answered]
    return []


def without_trailing_whitespace(message: Message) -> Message:
    """`message` with the trailing whitespace of its last text block removed (the API
    rejects a final assistant message that ends in whitespace); itself if there is none."""
    tail = message.blocks[-1] if message.blocks else None
    if not isinstance(tail, TextBlock) or tail.text == tail.text.rstrip():
        return message
    stripped = tail.text.rstrip()
    head = message.blocks[:-1]
    return replace(message, blocks=(*head, replace(tail, text=stripped)) if stripped else head)
