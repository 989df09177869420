"""LibreChat's conversation export: `{conversationId, title, endpoint, messages[] |
messagesTree[]}`, a message `{messageId, parentMessageId, text, content[], sender,
isCreatedByUser, model, createdAt}` (a tree's `children[]` nest) — the shape as issue 35
documents it ("The formats"). A first message's parent is the all-zero id."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from desktop_app.core.blocks import Block, TextBlock
from desktop_app.storage.foreign import ForeignChat, ForeignNode, Hidden, an_object, message_of

NO_PARENT = "00000000-0000-0000-0000-000000000000"
UNSHOWN_PARTS = ("think", "tool_call")  # an agent's reasoning and tool traffic: kept unshown


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
    # A tree under "messagesTree", or under "messages" (`"recursive": true`): children
    # nest. A flat list reads the same.
    flat = _flat(raw.get("messages") or raw.get("messagesTree") or [])
    notes: list[str] = []
    nodes = []
    ids = {str(m.get("messageId")) for m in flat if isinstance(m, dict)}
    latest: tuple[float, str] | None = None
    for i, item in enumerate(m for m in flat if isinstance(m, dict)):
        node_id = str(item.get("messageId") or f"#{i}")
        role = "user" if item.get("isCreatedByUser") else "assistant"
        blocks: list[Block] = []
        hidden: list[Hidden] = []
        for j, part in enumerate(item.get("content") or []):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text":
                text = part.get("text")
                text = text.get("value") if isinstance(text, dict) else text
                if isinstance(text, str) and text:
                    blocks.append(TextBlock(text))
            elif isinstance(part, dict) and kind in UNSHOWN_PARTS:
                said = part.get(kind) if kind == "think" else part.get("tool_call") or part
                text = said if isinstance(said, str) else json.dumps(said, ensure_ascii=False)
                hidden.append(Hidden(f"[{index}].messages.{i}.content.{j}", role, kind, text))
        if not blocks and isinstance(item.get("text"), str) and item["text"]:
            blocks.append(TextBlock(item["text"]))
        when = _when(item.get("createdAt"))
        message = None
        if blocks:
            model = str(item.get("model") or "") if role == "assistant" else ""
            message = message_of(role, blocks, when, model)
            if latest is None or (when or 0) >= latest[0]:
                latest = (when or 0, node_id)
        elif not hidden:
            notes.append(f"[{index}].messages.{i}: no text; left out")
        if hidden:
            notes.append(
                f"[{index}].messages.{i}: {len(hidden)} reasoning or tool part(s): kept with "
                "the chat (in its export), not shown or sent"
            )
        parent = str(item.get("parentMessageId") or NO_PARENT)
        nodes.append(
            ForeignNode(node_id, parent if parent in ids else None, message, tuple(hidden))
        )
    return ForeignChat(
        "librechat",
        str(raw.get("conversationId") or f"#{index}"),
        str(raw.get("title") or "").strip(),
        tuple(nodes),
        latest[1] if latest else None,
        str(raw.get("model") or an_object(raw.get("options")).get("model") or ""),
        tuple(notes),
    )


def _when(value: Any) -> float | None:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
