"""The words ContextDesk adds to a request of its own — a summary standing for earlier
messages, the note that some were left out, where the workspace is — and the turn
numbers those words cite.

Separate from `projection.py` because they are wording, not deciding: compaction numbers
turns the same way (`compaction.py`), and the request's comparison recognises a summary
by these words (`core/request_diff.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

from desktop_app.context.state import Summary
from desktop_app.core.blocks import TextBlock
from desktop_app.core.messages import Message
from desktop_app.core.protocol import is_clean_start


def summary_text(summary: Summary, turns: tuple[int, int] | None) -> str:
    span = f"turns {turns[0]}–{turns[1]}" if turns else f"{len(summary.covers)} messages"
    return (
        f"[Summary #{summary.number} of the earlier conversation ({span}), written by ContextDesk "
        "so the conversation fits the context window. The full messages are kept in the chat.]\n\n"
        f"{summary.text}"
    )


def summary_as_sent(summary: Summary, turns: tuple[int, int] | None) -> Message:
    """The user message a summary is sent as, in place of the turns it covers."""
    return Message("user", (TextBlock(summary_text(summary, turns)),), id=f"summary-{summary.id}")


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


def user_note(text: str) -> Message:
    """A note of ContextDesk's own, sent as a user message."""
    return Message(role="user", blocks=(TextBlock(text),), id="context-note")
