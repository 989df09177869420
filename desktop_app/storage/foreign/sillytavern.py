"""SillyTavern's chat file (`.jsonl`): a header line `{user_name, character_name,
create_date, chat_metadata}`, then a line per message `{name, is_user, is_system, mes,
swipes[], swipe_id, send_date, extra}` — the shape as issue 35 documents it ("The
formats"). A reply's swipes are its versions: the one shown (`swipe_id`) is the branch
the chat goes on from."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from desktop_app.core.blocks import TextBlock
from desktop_app.storage.foreign import ForeignChat, ForeignNode, Hidden, an_object, message_of


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
        raw_swipes: list[Any] = row["swipes"] if isinstance(row.get("swipes"), list) else []
        # By their place in the list: `swipe_id` counts the empty ones too.
        swipes = {j: s for j, s in enumerate(raw_swipes) if isinstance(s, str) and s}
        if not swipes and isinstance(row.get("mes"), str) and row["mes"]:
            swipes = {0: row["mes"]}
        if not swipes:
            notes.append(f"{path}: no text; left out")
            continue
        chosen = row.get("swipe_id")
        if chosen not in swipes:
            chosen = next((j for j, s in swipes.items() if s == row.get("mes")), min(swipes))
        when = _when(row.get("send_date"))
        reasoning = an_object(row.get("extra")).get("reasoning")
        unshown = (
            (Hidden(f"{path}.extra.reasoning", role, "reasoning", reasoning),)
            if isinstance(reasoning, str) and reasoning
            else ()
        )
        for j, text in swipes.items():  # the swipes: versions beside each other
            message = message_of(role, [TextBlock(text)], when)
            nodes.append(ForeignNode(f"{i}.{j}", parent, message, unshown if j == chosen else ()))
        parent = f"{i}.{chosen}"
    character = str(header.get("character_name") or "").strip()
    created = str(header.get("create_date") or "")
    # A group chat's header names neither: its file's name tells one from another.
    key = f"{character}|{created}" if character or created else f"|{name}"
    created = created or name
    return [
        ForeignChat(
            "sillytavern",
            key,
            f"{character} ({created})" if character else created,
            tuple(nodes),
            parent,
            "",
            tuple(notes),
        )
    ]


# How SillyTavern has written `send_date`: "February 14, 2026 7:30pm" (its own), an ISO
# time, or milliseconds since 1970.
SEND_DATE_FORMATS = ("%B %d, %Y %I:%M%p", "%B %d, %Y %I:%M %p")


def _when(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return value / 1000 if value > 1e11 else float(value)
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return datetime.fromisoformat(value.strip().replace("Z", "+00:00")).timestamp()
    except ValueError:
        pass
    for form in SEND_DATE_FORMATS:
        try:
            return datetime.strptime(value.strip(), form).timestamp()
        except ValueError:
            continue
    return None
