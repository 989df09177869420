"""User-triggered context actions that choose *what* to change; the projection applies
them. Each returns a new state, and the UI can project both to show the token change
before the user confirms."""

from __future__ import annotations

from collections.abc import Sequence

from desktop_app.context.state import ContextState
from desktop_app.core.blocks import ToolResultBlock
from desktop_app.core.messages import Message
from desktop_app.core.protocol import clean_cut_points


def old_tool_result_ids(messages: Sequence[Message], keep_recent_turns: int) -> set[str]:
    """Tool-use ids of every result before the most recent `keep_recent_turns` turns."""
    starts = clean_cut_points(messages)
    if keep_recent_turns <= 0:
        boundary = len(messages)
    elif len(starts) > keep_recent_turns:
        boundary = starts[-keep_recent_turns]
    else:
        return set()
    return {
        b.tool_use_id
        for m in messages[:boundary]
        for b in m.blocks
        if isinstance(b, ToolResultBlock)
    }


def clear_old_tool_results(
    messages: Sequence[Message], state: ContextState, keep_recent_turns: int
) -> ContextState:
    """Replace old tool results with placeholders naming the tool and its size."""
    return state.clear_results(old_tool_result_ids(messages, keep_recent_turns))
