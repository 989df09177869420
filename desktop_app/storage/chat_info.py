"""A chat as the chat list shows it, and how its row is read: light (the window's first
frame lists the chats before the store and the engine load: `chats/first_frame.py`)."""

from __future__ import annotations

import functools
import json
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING

from desktop_app.config.stored import same_type
from desktop_app.context.chat_settings import NAME_LISTS, ContextSettings, names

if TYPE_CHECKING:
    import sqlite3

# How many messages a chat has as a person reads it — on the branch shown (walked from
# its shown end when it branched or ends early, as `ChatStore.recent_messages` reads it, passing over a hidden message), without the messages that only carry tool
# results back (they are Claude's work). `c` is the chat's row.
_COUNT = (
    "CASE WHEN c.branched OR c.leaf_id IS NOT NULL THEN ("
    "WITH RECURSIVE path(id, depth) AS ("
    "SELECT COALESCE(c.leaf_id, (SELECT id FROM messages WHERE chat_id = c.id AND NOT deleted "
    "ORDER BY position DESC LIMIT 1)), 0 "
    "UNION ALL SELECT m.parent_id, depth + 1 FROM messages m JOIN path ON m.id = path.id "
    "WHERE m.parent_id IS NOT NULL AND depth < 10000000) "
    "SELECT COUNT(*) FROM path JOIN messages p ON p.id = path.id "
    "WHERE NOT p.tool_results AND NOT p.deleted"
    ") ELSE (SELECT COUNT(*) FROM messages m WHERE m.chat_id = c.id AND NOT m.deleted "
    "AND NOT m.tool_results) END"
)
# The count is kept with the chat (`shown_count`, schema v12: ≈50 ms to make at 100,000
# messages). A write that made the chat forget it counts again before it commits
# (`RECOUNT`, by the store); a chat read before that is counted here (COALESCE stops at
# its first value).
CHATS = f"SELECT c.*, COALESCE(c.shown_count, {_COUNT}) AS n FROM chats c"
RECOUNT = f"UPDATE chats AS c SET shown_count = {_COUNT} WHERE c.shown_count IS NULL"


@dataclass(frozen=True, slots=True)
class ChatInfo:
    id: str
    title: str
    model: str
    system_prompt: str
    settings: ContextSettings
    created_at: float
    updated_at: float
    deleted_at: float | None
    message_count: int
    token_total: int | None = None  # the transcript's size in tokens, when counted
    pinned_at: float | None = None  # kept on top of the chat list since
    archived_at: float | None = None  # out of the chat list (not in the trash) since
    project_id: str | None = None  # the project it belongs to (storage/projects.py)
    leaf_id: str | None = None  # the end of the branch shown (None: the newest message)
    branched: bool = False  # a message of it has another version (an edit, a regeneration)


def settings_to_json(settings: ContextSettings) -> str:
    return json.dumps(asdict(settings))


@functools.lru_cache(maxsize=256)
def settings_from_json(text: str) -> ContextSettings:
    """Settings as stored; unknown keys are ignored, and missing ones or values of the
    wrong type take defaults, so a row written by another version (or by hand) never
    stops a chat from opening. (Cached: most chats share their settings' text, and the
    chat list reads every chat's; the result is frozen, so sharing it is safe.)"""
    try:
        data = json.loads(text or "{}")
    except json.JSONDecodeError:
        data = {}
    if not isinstance(data, dict):
        data = {}
    defaults = ContextSettings()
    values = {
        f.name: data[f.name]
        for f in fields(ContextSettings)
        if f.name in data and same_type(data[f.name], getattr(defaults, f.name))
    }
    for name in NAME_LISTS:  # a list (or, written by older versions, comma-separated text)
        if (listed := names(data.get(name, ()))) is not None:
            values[name] = listed
    if "thinking" not in data:  # written before thinking had modes: a budget, or 0 for none
        values["thinking"] = "budget" if values.get("thinking_budget") else "adaptive"
    settings = ContextSettings(**values)
    return settings if not settings.problems() else defaults


def chat_info(row: sqlite3.Row) -> ChatInfo:
    return ChatInfo(
        id=row["id"],
        title=row["title"],
        model=row["model"],
        system_prompt=row["system_prompt"],
        settings=settings_from_json(row["settings"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        deleted_at=row["deleted_at"],
        message_count=row["n"],
        token_total=row["token_total"],
        pinned_at=row["pinned_at"],
        archived_at=row["archived_at"],
        project_id=row["project_id"],
        leaf_id=row["leaf_id"],
        branched=bool(row["branched"]),
    )


def list_chats(
    db: sqlite3.Connection, *, trash: bool = False, archived: bool = False
) -> list[ChatInfo]:
    """Chats by last activity, newest first (or the trash, or the archive)."""
    rows = db.execute(
        f"{CHATS} WHERE c.deleted_at IS {'NOT ' if trash else ''}NULL "
        f"AND c.archived_at IS {'NOT ' if archived else ''}NULL ORDER BY c.updated_at DESC"
    ).fetchall()
    return [chat_info(r) for r in rows]


def project_names(db: sqlite3.Connection) -> dict[str, str]:
    """Every project's name by its id: all the chat list needs of them."""
    return dict(db.execute("SELECT id, name FROM projects ORDER BY created_at"))
