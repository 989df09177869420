"""Open WebUI's "Export All Chats": a JSON array of `{id, title, chat{title, models[],
history{currentId, messages{id: {id, parentId, childrenIds[], role, content, model,
timestamp}}}}, created_at}` — the shape as issue 35 documents it ("The formats"). The
history is the tree (every regeneration a child); `currentId` ends the branch shown."""

from __future__ import annotations

import re
from typing import Any

from desktop_app.core.blocks import TextBlock
from desktop_app.storage.foreign import (
    ForeignChat,
    ForeignNode,
    Hidden,
    an_object,
    message_of,
    parents_first,
)


def conversations(data: Any) -> list[ForeignChat]:
    return [conversation(raw, i) for i, raw in enumerate(data) if isinstance(raw, dict)]


def conversation(raw: dict[str, Any], index: int) -> ForeignChat:
    chat = an_object(raw.get("chat"))
    history = an_object(chat.get("history"))
    messages = an_object(history.get("messages"))
    notes: list[str] = []
    nodes = []
    for node_id in parents_first(messages, "parentId"):
        item = messages[node_id]
        role = item.get("role")
        text = item.get("content")
        message = None
        where = f"[{index}].chat.history.messages.{node_id}"
        hidden: tuple[Hidden, ...] = ()
        if role in ("user", "assistant") and isinstance(text, str) and text:
            text, hidden = _unshown(text, where, role)
            when = item.get("timestamp")
            model = str(item.get("model") or "") if role == "assistant" else ""
            if text.strip():
                message = message_of(role, [TextBlock(text)], _seconds(when), model)
            if hidden:
                notes.append(
                    f"{where}: {len(hidden)} reasoning or tool call section(s): kept with the "
                    "chat (in its export), not shown or sent"
                )
        else:
            notes.append(f"{where}: a {role!r} message; left out")
        for j, file in enumerate(item.get("files") or []):
            name = an_object(file).get("name") or an_object(file).get("type") or "a file"
            notes.append(f"{where}.files.{j}: {name} is not brought (only text is)")
        parent = item.get("parentId")
        nodes.append(ForeignNode(node_id, parent if parent in messages else None, message, hidden))
    current = history.get("currentId")
    models = chat.get("models") if isinstance(chat.get("models"), list) else []
    return ForeignChat(
        "openwebui",
        str(raw.get("id") or chat.get("id") or f"#{index}"),
        str(raw.get("title") or chat.get("title") or "").strip(),
        tuple(nodes),
        current if current in messages else None,
        str(models[0]) if models else "",
        tuple(notes),
    )


def _seconds(value: Any) -> float | None:
    """Open WebUI's timestamps: seconds, or milliseconds in some versions."""
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        return None
    return value / 1000 if value > 1e11 else float(value)


# Open WebUI writes a reply's reasoning and tool calls into its text as collapsed HTML
# sections: `<details type="reasoning" …><summary>…</summary>…</details>`.
DETAILS = re.compile(r'<details type="([a-z_]+)"[^>]*>(.*?)</details>\s*', re.DOTALL)


def _unshown(text: str, where: str, role: str) -> tuple[str, tuple[Hidden, ...]]:
    """The text as shown, and its reasoning and tool-call sections, kept unshown."""
    hidden = tuple(
        Hidden(where, role, kind, re.sub(r"<summary>.*?</summary>", "", inside).strip())
        for kind, inside in DETAILS.findall(text)
    )
    return (DETAILS.sub("", text).strip(), hidden) if hidden else (text, ())
