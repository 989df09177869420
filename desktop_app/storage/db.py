"""The SQLite connection and its schema, as an ordered list of migrations.

WAL (readers never block the writer), synchronous=FULL (a committed message survives a
power cut), foreign keys on, a busy timeout. The schema version lives in
`PRAGMA user_version`; a database from a newer ContextDesk is refused, unchanged, with a
message that says so — an update must never be undone by an older copy of the app.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from desktop_app.core.errors import ContextDeskError

Migration = Callable[[sqlite3.Connection], None]


def _run(db: sqlite3.Connection, script: str) -> None:
    """Each statement in turn (`executescript` would COMMIT the migration's transaction)."""
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def _v1(db: sqlite3.Connection) -> None:
    _run(
        db,
        """
        CREATE TABLE chats (
            id TEXT PRIMARY KEY,
            title TEXT NOT NULL,
            model TEXT NOT NULL,
            system_prompt TEXT NOT NULL DEFAULT '',
            settings TEXT NOT NULL DEFAULT '{}',      -- ContextSettings and chat options, JSON
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            deleted_at REAL                             -- in the trash since, or NULL
        );
        CREATE TABLE messages (
            id TEXT PRIMARY KEY,
            chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
            status TEXT NOT NULL
                CHECK (status IN ('complete', 'streaming', 'interrupted', 'error')),
            stop_reason TEXT,
            usage TEXT,                                 -- JSON, as the API reported it
            created_at REAL NOT NULL,
            revision INTEGER NOT NULL DEFAULT 0,
            deleted INTEGER NOT NULL DEFAULT 0,
            UNIQUE (chat_id, position)
        );
        CREATE TABLE blocks (
            message_id TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            type TEXT NOT NULL,
            raw TEXT NOT NULL,                          -- the block's API JSON, exactly
            tokens INTEGER,                             -- local estimate, raw
            PRIMARY KEY (message_id, position)
        );
        CREATE TABLE facts (
            id TEXT PRIMARY KEY,
            chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            text TEXT NOT NULL,
            fields TEXT NOT NULL DEFAULT '[]',
            source TEXT NOT NULL CHECK (source IN ('user', 'model')),
            pending INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE TABLE summaries (
            id TEXT PRIMARY KEY,
            chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
            number INTEGER NOT NULL,
            covers TEXT NOT NULL,                       -- JSON list of message ids
            text TEXT NOT NULL,
            model TEXT NOT NULL,
            instructions TEXT NOT NULL DEFAULT '',
            replaces TEXT,
            warnings TEXT NOT NULL DEFAULT '[]',
            edited INTEGER NOT NULL DEFAULT 0,
            undone INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL
        );
        CREATE TABLE context_state (
            chat_id TEXT PRIMARY KEY REFERENCES chats(id) ON DELETE CASCADE,
            excluded_messages TEXT NOT NULL DEFAULT '[]',
            excluded_blocks TEXT NOT NULL DEFAULT '[]',
            cleared_results TEXT NOT NULL DEFAULT '[]',
            breaker_failures INTEGER NOT NULL DEFAULT 0,
            breaker_paused INTEGER NOT NULL DEFAULT 0,
            breaker_reason TEXT NOT NULL DEFAULT ''
        );
        CREATE TABLE calibration (model TEXT PRIMARY KEY, factor REAL NOT NULL);
        CREATE TABLE repairs (
            chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
            at REAL NOT NULL,
            report TEXT NOT NULL                        -- what was repaired, and why
        );
        CREATE INDEX messages_by_chat ON messages (chat_id, position);
        CREATE INDEX chats_by_activity ON chats (deleted_at, updated_at);
        """,
    )


def _v2(db: sqlite3.Connection) -> None:
    # The chat list shows each chat's size; counting every block on every listing would
    # be slow, so the size is kept with the chat (NULL until a count has been made).
    db.execute("ALTER TABLE chats ADD COLUMN token_total INTEGER")


MIGRATIONS: list[Migration] = [_v1, _v2]  # append only; index + 1 is the schema version
SCHEMA_VERSION = len(MIGRATIONS)


class NewerSchema(ContextDeskError):
    def __init__(self, found: int, path: Path) -> None:
        super().__init__(
            "This database is from a newer ContextDesk",
            f"{path} has schema version {found}; this copy of ContextDesk understands up to "
            f"{SCHEMA_VERSION}. Nothing was changed. Update ContextDesk to open it.",
            kind="newer_schema",
        )


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating and migrating if needed) the database at `path`."""
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10)
    db.row_factory = sqlite3.Row
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        db.close()
        raise NewerSchema(version, path)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = FULL")
    db.execute("PRAGMA foreign_keys = ON")
    db.execute("PRAGMA busy_timeout = 10000")
    for number in range(version, SCHEMA_VERSION):
        with transaction(db):
            MIGRATIONS[number](db)
            db.execute(f"PRAGMA user_version = {number + 1}")
    return db


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE … COMMIT, or ROLLBACK on any exception: all or nothing."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
