"""A chat's own row: looking chats up, making one, changing its name, model, system
prompt, settings and marks, the trash — and `writing`, the transaction every write of
the store goes through.

Separate from `store.py` (the `ChatStore` callers hold, which delegates here) so that
each concern of the database has a module of its own, in the style of `ledger.py` and
`projects.py`: functions taking the connection. Separate from `chat_info.py`, which the
window's first frame reads with, because this one loads the transaction machinery that
the first frame does not need.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from desktop_app.context.chat_settings import ContextSettings
from desktop_app.core.errors import ContextDeskError, ErrorKind
from desktop_app.core.messages import new_id
from desktop_app.storage.chat_info import CHATS, RECOUNT, ChatInfo, chat_info, settings_to_json
from desktop_app.storage.db import transaction, unsynced
from desktop_app.storage.errors import ChatNotFound
from desktop_app.storage.search import unindex_chat


@contextmanager
def writing(db: sqlite3.Connection) -> Iterator[None]:
    """One write, all or nothing (`transaction`); before it commits, the chats whose
    count of messages it made them forget are counted again (`chat_info.RECOUNT`)."""
    with transaction(db):
        yield
        db.execute(RECOUNT)


def chat(db: sqlite3.Connection, chat_id: str) -> ChatInfo:
    row = db.execute(
        f"{CHATS} WHERE c.id = ?",
        (chat_id,),
    ).fetchone()
    if row is None:
        raise ChatNotFound(chat_id)
    return chat_info(row)


def chats(db: sqlite3.Connection, chat_ids: Sequence[str]) -> dict[str, ChatInfo]:
    """These chats, by id, in one query (search results name up to hundreds)."""
    marks = ",".join("?" * len(chat_ids))
    rows = db.execute(f"{CHATS} WHERE c.id IN ({marks})", tuple(chat_ids))
    return {r["id"]: chat_info(r) for r in rows}


def find_chat(db: sqlite3.Connection, ref: str) -> ChatInfo:
    """A chat by its id or a unique prefix of it."""
    rows = db.execute(
        "SELECT id FROM chats WHERE id LIKE ? ESCAPE '\\'", (_like_prefix(ref),)
    ).fetchall()
    if not rows:
        raise ChatNotFound(ref)
    if len(rows) > 1:
        raise ChatNotFound(ref, f"{len(rows)} chats start with it; give more of the id")
    return chat(db, rows[0]["id"])


def insert_chat(
    db: sqlite3.Connection,
    title: str,
    model: str,
    system_prompt: str,
    settings: ContextSettings,
    created_at: float | None = None,
) -> str:
    """A new chat's row and its empty context state (inside the caller's `writing`);
    returns its id. Made now, or at `created_at` (an import's original)."""
    chat_id = new_id("chat")
    now = time.time()
    db.execute(
        "INSERT INTO chats (id, title, model, system_prompt, settings, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            *(chat_id, title, model, system_prompt, settings_to_json(settings)),
            now if created_at is None else min(created_at, now),
            now,
        ),
    )
    db.execute("INSERT INTO context_state (chat_id) VALUES (?)", (chat_id,))
    return chat_id


def create_chat(
    db: sqlite3.Connection,
    title: str,
    model: str,
    system_prompt: str,
    settings: ContextSettings | None,
) -> ChatInfo:
    with writing(db):
        chat_id = insert_chat(db, title, model, system_prompt, settings or ContextSettings())
    return chat(db, chat_id)


def update_chat(
    db: sqlite3.Connection,
    chat_id: str,
    *,
    title: str | None = None,
    model: str | None = None,
    system_prompt: str | None = None,
    settings: ContextSettings | None = None,
) -> ChatInfo:
    """Change the chat's name, model, system prompt or settings. None of it is
    activity: the chat keeps its place in the list (as in the apps our users know)."""
    current = chat(db, chat_id)
    with writing(db):
        db.execute(
            "UPDATE chats SET title = ?, model = ?, system_prompt = ?, settings = ? WHERE id = ?",
            (
                current.title if title is None else title,
                current.model if model is None else model,
                current.system_prompt if system_prompt is None else system_prompt,
                settings_to_json(current.settings if settings is None else settings),
                chat_id,
            ),
        )
    return chat(db, chat_id)


def fill_in_setting(db: sqlite3.Connection, name: str, value: int) -> int:
    """Give every chat whose settings lack `name` this value (a setting that became
    per chat keeps the meaning it had for older chats). Returns how many changed."""
    path = f"$.{name}"
    lacking = "SELECT 1 FROM chats WHERE json_type(settings, ?) IS NULL LIMIT 1"
    if db.execute(lacking, (path,)).fetchone() is None:
        return 0  # the usual case: no write, no lock
    with writing(db):
        changed = db.execute(
            "UPDATE chats SET settings = json_set(settings, ?, ?) WHERE json_type(settings, ?) IS NULL",
            (path, value, path),
        ).rowcount
    return int(changed)


def set_token_total(db: sqlite3.Connection, chat_id: str, tokens: int) -> None:
    """Remember a chat's size for the chat list (its activity time is not touched)."""
    with writing(db):
        db.execute("UPDATE chats SET token_total = ? WHERE id = ?", (tokens, chat_id))


def set_draft(db: sqlite3.Connection, chat_id: str, text: str) -> None:
    """Keep the chat's unsent draft (its activity time is not touched; not synced to the
    disk at once: a draft is not worth a wait, and the next synced write carries it)."""
    with unsynced(db), writing(db):
        db.execute("UPDATE chats SET draft = ? WHERE id = ?", (text, chat_id))


def draft(db: sqlite3.Connection, chat_id: str) -> str:
    """The chat's unsent draft ("": none)."""
    row = db.execute("SELECT draft FROM chats WHERE id = ?", (chat_id,)).fetchone()
    return str(row[0]) if row else ""


def mark(db: sqlite3.Connection, chat_id: str, column: str, on: bool) -> ChatInfo:
    """Set or clear one of the chat's marks (`pinned_at`, `archived_at`; its activity
    time is not touched)."""
    chat(db, chat_id)
    with writing(db):
        db.execute(
            f"UPDATE chats SET {column} = ? WHERE id = ?",
            (time.time() if on else None, chat_id),
        )
    return chat(db, chat_id)


def delete_chat(db: sqlite3.Connection, chat_id: str) -> None:
    """Move to the trash (restorable)."""
    chat(db, chat_id)
    with writing(db):
        db.execute("UPDATE chats SET deleted_at = ? WHERE id = ?", (time.time(), chat_id))


def restore_chat(db: sqlite3.Connection, chat_id: str) -> None:
    chat(db, chat_id)
    with writing(db):
        db.execute("UPDATE chats SET deleted_at = NULL WHERE id = ?", (chat_id,))


def purge_chat(db: sqlite3.Connection, chat_id: str) -> None:
    """Delete a chat in the trash for good: its messages, facts, summaries, its search
    entries and its requests in the ledger, with the request parts no other request
    uses. (Only from the trash: a chat is never deleted in one step.)"""
    found = chat(db, chat_id)
    if found.deleted_at is None:
        raise ContextDeskError(
            "Not in the trash",
            f"“{found.title}” is not in the trash; move it there first.",
            kind=ErrorKind.USAGE,
        )
    with writing(db):
        unindex_chat(db, chat_id)
        db.execute("DELETE FROM chats WHERE id = ?", (chat_id,))  # (the rest cascades)
        db.execute(
            "DELETE FROM request_parts WHERE id NOT IN (SELECT head FROM requests) "
            "AND id NOT IN (SELECT value FROM requests, json_each(requests.added))"
        )


def touch(db: sqlite3.Connection, chat_id: str) -> None:
    """The chat had activity now (inside the caller's `writing`)."""
    db.execute("UPDATE chats SET updated_at = ? WHERE id = ?", (time.time(), chat_id))


def _like_prefix(ref: str) -> str:
    return ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
