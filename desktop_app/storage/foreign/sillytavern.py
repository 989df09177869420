"""SillyTavern's chat file (`.jsonl`): a header line `{user_name, character_name,
create_date, chat_metadata}`, then a line per message `{name, is_user, is_system, mes,
swipes[], swipe_id, send_date, extra}` — the shape as issue 35 documents it ("The
formats"). A reply's swipes are its versions: the one shown (`swipe_id`) is the branch
the chat goes on from."""

from __future__ import annotations

from typing import Any

from desktop_app.core.blocks import TextBlock
from desktop_app.storage.foreign import ForeignChat, ForeignNode, message_of


def conversations(lines: list[Any], name: str = "") -> list[ForeignChat]:
    header = lines[0] if lines and isinstance(lines[0], dict) and "mes" not in lines[0] else {}
    rows = lines[1:] if header else lines
    notes: list[str] = []
    nodes: list[ForeignNode] = []
    parent: str | None = None
    for i, row in enumerate(rows):
        path = f"line {i + 2 if header else i + 1}"
        if not isinstance(row, dict) or row.get("is_system"):
            notes.append(f"{path}: a system line; left out")
            continue
        role = "user" if row.get("is_user") else "assistant"
        swipes = [s for s in row.get("swipes") or [] if isinstance(s, str) and s]
        if not swipes and isinstance(row.get("mes"), str) and row["mes"]:
            swipes = [row["mes"]]
        if not swipes:
            notes.append(f"{path}: no text; left out")
            continue
        chosen = row.get("swipe_id")
        chosen = chosen if isinstance(chosen, int) and 0 <= chosen < len(swipes) else 0
        shown = f"{i}.{chosen}"
        for j, text in enumerate(swipes):  # the swipes: versions beside each other
            nodes.append(ForeignNode(f"{i}.{j}", parent, message_of(role, [TextBlock(text)], None)))
        parent = shown
    character = str(header.get("character_name") or "").strip()
    created = str(header.get("create_date") or name)
    return [
        ForeignChat(
            "sillytavern",
            f"{character}|{created}",
            f"{character} ({created})" if character else created,
            tuple(nodes),
            parent,
            "",
            tuple(notes),
        )
    ]
