"""The words a message's row says beside its text: who speaks, when, its status, its
tokens, a tool step in one line and its result in a few words. (Painting them is
`message_delegate`'s.)"""

from __future__ import annotations

import json
import time
from typing import Any

from desktop_app.core.blocks import TextBlock, ToolUseBlock
from desktop_app.core.messages import Message, MessageStatus
from desktop_app.ui.conversation.message_model import BlockChip


def call_line(block: ToolUseBlock, room: int = 60) -> str:
    """A tool call in one line: `read_file(path: cases/0037.md)`, long values cut."""
    shown = []
    for key, value in list(block.input.items())[:3]:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        text = " ".join(text.split())
        shown.append(f"{key}: {text if len(text) <= room else text[: room - 1] + '…'}")
    more = ", …" if len(block.input) > 3 else ""
    return f"{tool_name(block.name)}({', '.join(shown)}{more})"


def result_preview(text: str, room: int = 80) -> str:
    """A result in a few words: JSON on one line (its first line alone is often just
    "{"), else its first line with something in it."""
    stripped = text.strip()
    if not stripped:
        return "(empty)"
    if stripped[0] in "{[" and len(stripped) <= 200_000:
        try:
            line = json.dumps(json.loads(stripped), ensure_ascii=False, separators=(", ", ": "))
        except ValueError:
            line = ""
        if line:
            return line if len(line) <= room else line[: room - 1] + "…"
    first = next((ln.strip() for ln in stripped.splitlines() if len(ln.strip()) > 1), stripped)
    return first if len(first) <= room else first[: room - 1] + "…"


def tool_name(name: str) -> str:
    """A tool as people name it — an MCP server's as `server.tool`, as its approval card
    says it — not as the API does (`mcp__server__tool`)."""
    if not name.startswith("mcp__"):
        return name
    from desktop_app.chats import people_name

    return people_name(name)


def speaker(message: Message) -> str:
    """Who a message's header names: the person, Claude, or the tools Claude called."""
    if message.is_tool_results:
        count = len(message.blocks)
        return "Tool result" if count == 1 else f"Tool results ({count})"
    return "You" if message.role == "user" else "Claude"


def status_label(message: Message) -> str:
    """A header's word for a message that is not complete ("● interrupted"); "" else."""
    if message.status is MessageStatus.COMPLETE:
        return ""
    status = message.status.value
    return f"● {'streaming…' if status == 'streaming' else status}"


def token_label(message: Message, chips: tuple[BlockChip, ...]) -> str:
    """The header's figures: the blocks' tokens (≈ unless exact) and, for a finished reply,
    how many tokens the API reported generating (exact). An interrupted reply's count
    never arrived (the API reports it at the end): it says what arrived instead."""
    total = sum(c.tokens for c in chips)
    if not total:
        return ""
    exact = all(c.exact for c in chips)
    text = f"{'' if exact else '≈'}{total:,} tokens"
    usage = message.usage
    if message.role != "assistant":
        return text
    if message.status is not MessageStatus.COMPLETE:
        return f"{text} · {message.status.value}: this much arrived"
    if usage is not None and usage.output_tokens:
        text += f" · {usage.output_tokens:,} generated (exact)"
    return text


def result_text(parts: tuple[Any, ...]) -> str:
    """A tool result of several parts as text (a picture named by its kind)."""
    return "\n".join(p.text if isinstance(p, TextBlock) else f"[{type(p).__name__}]" for p in parts)


def time_label(created_at: float) -> str:
    """When a message was written: the time today, else the date too."""
    local = time.localtime(created_at)
    if time.strftime("%Y-%m-%d", local) == time.strftime("%Y-%m-%d"):
        return time.strftime("%H:%M", local)
    return time.strftime("%d %b %Y, %H:%M", local)
