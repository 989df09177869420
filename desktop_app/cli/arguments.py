"""Reading the command line's values: KEY=VALUE pairs, tool names, message numbers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from desktop_app.core.errors import ContextDeskError, ErrorKind

if TYPE_CHECKING:
    from desktop_app.core.messages import Message


def key_values(pairs: list[str]) -> dict[str, str]:
    assignments = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ContextDeskError(
                "Not KEY=VALUE", f"{pair!r}: give a value, as in {pair}=…", kind=ErrorKind.USAGE
            )
        assignments[key.strip()] = value
    return assignments


def allowed_tools(names: str) -> set[str]:
    """--allow-tools: built-in tools by name, MCP tools as SERVER.TOOL (or as the model
    sees them)."""
    from desktop_app.chats import api_name

    return {api_name(n.strip()) for n in names.split(",") if n.strip()}


def numbered(messages: Sequence[Message], number: int) -> Message:
    """Message N of the branch shown, counted from 1 (as `chat show` and `branch`
    number them)."""
    if not 1 <= number <= len(messages):
        raise ContextDeskError(
            "No such message",
            f"The chat shows {len(messages)} message(s): give a number from 1 to {len(messages)}."
            if messages
            else "The chat has no messages yet.",
            kind=ErrorKind.USAGE,
        )
    return messages[number - 1]
