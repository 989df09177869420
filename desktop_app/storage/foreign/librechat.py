"""LibreChat's conversation export: `{conversationId, title, endpoint, messages[] |
messagesTree[]}`, a message `{messageId, parentMessageId, text, content[], sender,
isCreatedByUser, model, createdAt}` (a tree's `children[]` nest) — the shape as issue 35
documents it ("The formats"). A first message's parent is the all-zero id."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from desktop_app.core.blocks import Block, TextBlock
from desktop_app.storage.foreign import ForeignChat, ForeignNode, message_of

NO_PARENT = "00000000-0000-0000-0000-000000000000"


def conversations(data: Any) -> list[ForeignChat]:
    items = data if isinstance(data, list) else [data]
    return [_conversation(raw, i) for i, raw in enumerate(items) if isinstance(raw, dict)]


def _flat(tree: list[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    stack = list(reversed(tree))
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            out.append(item)
            stack.extend(reversed(item.get("children") or []))
    return out


def _conversation(raw: dict[str, Any], index: int) -> ForeignChat:
    flat = raw.get("messages") or _flat(raw.get("messagesTree") or [])
    notes: list[str] = []
    nodes = []
    ids = {str(m.get("messageId")) for m in flat if isinstance(m, dict)}
    latest: tuple[float, str] | None = None
    for i, item in enumerate(m for m in flat if isinstance(m, dict)):
        node_id = str(item.get("messageId") or f"#{i}")
        role = "user" if item.get("isCreatedByUser") else "assistant"
        blocks: list[Block] = []
        for part in item.get("content") or []:
            if isinstance(part, dict) and part.get("type") == "text":
                text = part.get("text")
                text = text.get("value") if isinstance(text, dict) else text
                if isinstance(text, str) and text:
                    blocks.append(TextBlock(text))
        if not blocks and isinstance(item.get("text"), str) and item["text"]:
            blocks.append(TextBlock(item["text"]))
        when = _when(item.get("createdAt"))
        message = None
        if blocks:
            model = str(item.get("model") or "") if role == "assistant" else ""
            message = message_of(role, blocks, when, model)
            if latest is None or (when or 0) >= latest[0]:
                latest = (when or 0, node_id)
        else:
            notes.append(f"[{index}].messages.{i}: no text; left out")
        parent = str(item.get("parentMessageId") or NO_PARENT)
        nodes.append(ForeignNode(node_id, parent if parent in ids else None, message))
    return ForeignChat(
        "librechat",
        str(raw.get("conversationId") or f"#{index}"),
        str(raw.get("title") or "").strip(),
        tuple(nodes),
        latest[1] if latest else None,
        str(raw.get("model") or ""),
        tuple(notes),
    )


def _when(value: Any) -> float | None:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
