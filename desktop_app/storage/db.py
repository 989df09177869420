"""The SQLite connection and its schema, as an ordered list of migrations.

WAL (readers never block the writer), synchronous=FULL (a committed message survives a
power cut), foreign keys on, a busy timeout. The schema version lives in
`PRAGMA user_version`; a database from a newer ContextDesk is refused, unchanged, with a
message that says so — an update must never be undone by an older copy of the app.

SQLite reports trouble as `sqlite3.Error` (a full disk is `OperationalError`, never
`OSError`). `storage_error` turns each into a `StorageError` (`storage/errors.py`, with
the layer's other errors) that says what happened and what to do; every write is one
transaction, so a failed one has changed nothing.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar, cast

from desktop_app.config.privacy import create_private
from desktop_app.core.errors import ErrorKind
from desktop_app.storage import search
from desktop_app.storage.errors import NewerSchema, StorageError
from desktop_app.storage.version import SCHEMA_VERSION

log = logging.getLogger(__name__)

BUSY_TIMEOUT_S = 10.0  # how long a write waits for another program's lock
BACKUPS = "backups"  # beside the database: a copy of it a day, the newest few kept

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


def _v3(db: sqlite3.Connection) -> None:
    # A turn being answered, by which process: another process (the command line beside
    # the window) must not write into that chat's history or context meanwhile.
    db.execute(
        "CREATE TABLE running_turns (chat_id TEXT PRIMARY KEY REFERENCES chats(id) "
        "ON DELETE CASCADE, pid INTEGER NOT NULL, started_at REAL NOT NULL)"
    )


def _v4(db: sqlite3.Connection) -> None:
    search.create_index(db)  # full-text search over every message, built from what is stored


def _v5(db: sqlite3.Connection) -> None:
    # Pinned chats stay on top of the list; archived ones leave it without going to the
    # trash. Neither is activity: `updated_at` is not touched by them.
    db.execute("ALTER TABLE chats ADD COLUMN pinned_at REAL")
    db.execute("ALTER TABLE chats ADD COLUMN archived_at REAL")


def _v6(db: sqlite3.Connection) -> None:
    # The request ledger: every request sent, stored by its parts (storage/ledger.py).
    # (A migration holds its own DDL: it must not change later, and a new folder's
    # start-up must not import the modules that use the tables.)
    _run(
        db,
        """
        CREATE TABLE request_parts (
            id INTEGER PRIMARY KEY,
            hash TEXT NOT NULL UNIQUE,
            json TEXT NOT NULL
        );
        CREATE TABLE requests (
            id INTEGER PRIMARY KEY,
            chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
            number INTEGER NOT NULL,
            sent_at REAL NOT NULL,
            seconds REAL,
            model TEXT NOT NULL,
            server TEXT NOT NULL,
            head INTEGER NOT NULL REFERENCES request_parts(id),
            base INTEGER REFERENCES requests(id) ON DELETE SET NULL,
            shared INTEGER NOT NULL,
            added TEXT NOT NULL,
            marks TEXT NOT NULL,
            usage TEXT,
            status TEXT NOT NULL,
            reply_id TEXT
        );
        CREATE UNIQUE INDEX requests_by_chat ON requests(chat_id, number);
        CREATE INDEX requests_by_reply ON requests(reply_id)
        """,
    )


def _v7(db: sqlite3.Connection) -> None:
    # The ledger also holds the requests compaction sends (their cost is the chat's too);
    # they are told apart from the turns' requests by their purpose.
    db.execute("ALTER TABLE requests ADD COLUMN purpose TEXT NOT NULL DEFAULT 'chat'")


def _v8(db: sqlite3.Connection) -> None:
    # Projects: memory shared across chats (storage/projects.py).
    _run(
        db,
        """
        CREATE TABLE projects (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            instructions TEXT NOT NULL DEFAULT '',
            knowledge_budget REAL NOT NULL DEFAULT 0.3,
            knowledge_mode TEXT NOT NULL DEFAULT 'whole',
            model TEXT NOT NULL DEFAULT '',
            workspace TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE TABLE project_facts (
            id TEXT PRIMARY KEY,
            project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            text TEXT NOT NULL,
            fields TEXT NOT NULL DEFAULT '[]',
            source TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE TABLE project_files (
            id TEXT PRIMARY KEY,
            project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
            name TEXT NOT NULL,
            text TEXT NOT NULL,
            chosen INTEGER NOT NULL DEFAULT 1,
            added_at REAL NOT NULL
        );
        ALTER TABLE chats ADD COLUMN project_id TEXT REFERENCES projects(id) ON DELETE SET NULL
        """,
    )


def _v9(db: sqlite3.Connection) -> None:
    # What a project's new chats start with (ContextSettings field → value, JSON). A
    # development build's v8 made the column already: then there is nothing to add.
    columns = {row[1] for row in db.execute("PRAGMA table_info(projects)")}
    if "defaults" not in columns:
        db.execute("ALTER TABLE projects ADD COLUMN defaults TEXT NOT NULL DEFAULT '{}'")


def _v10(db: sqlite3.Connection) -> None:
    # Branches in place (core/branches.py): each message names the one it follows, and a
    # chat names the end of the branch it shows (NULL: its newest message) and whether
    # it ever branched (most never do: they are read as one line, without the tree).
    # Until now a chat was one line, so each message follows the one stored before it.
    _run(
        db,
        """
        ALTER TABLE messages ADD COLUMN parent_id TEXT;
        ALTER TABLE chats ADD COLUMN leaf_id TEXT;
        ALTER TABLE chats ADD COLUMN branched INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX messages_by_parent ON messages (chat_id, parent_id);
        UPDATE messages SET parent_id = (
            SELECT p.id FROM messages p
            WHERE p.chat_id = messages.chat_id AND p.position < messages.position
            ORDER BY p.position DESC LIMIT 1
        );
        """,
    )


def _v11(db: sqlite3.Connection) -> None:
    # A reply's origin (core/binding.py): the model that wrote it and the digest of the
    # request prefix it followed — thinking blocks are valid only for both. Older
    # replies have neither (their thinking is not sent where the prefix is checked).
    # And whether a message only carries tool results back (Claude's work, not the
    # user's words): the chat list counts the messages a person reads.
    _run(
        db,
        """
        ALTER TABLE messages ADD COLUMN model TEXT NOT NULL DEFAULT '';
        ALTER TABLE messages ADD COLUMN bound_to TEXT NOT NULL DEFAULT '';
        ALTER TABLE messages ADD COLUMN tool_results INTEGER NOT NULL DEFAULT 0;
        UPDATE messages SET tool_results = 1 WHERE role = 'user' AND NOT EXISTS (
            SELECT 1 FROM blocks b WHERE b.message_id = messages.id AND b.type != 'tool_result'
        ) AND EXISTS (SELECT 1 FROM blocks b WHERE b.message_id = messages.id);
        """,
    )


def _v12(db: sqlite3.Connection) -> None:
    # The count of messages a person reads on the branch shown, kept with the chat: it
    # was counted on every read of the chat's row (≈50 ms at 100,000 messages, on every
    # open and every turn's end). NULL: to be counted again. A change to the messages or
    # to the branch shown forgets it, whatever code made it (the triggers); inserting
    # messages sets it (`message_writes.insert_many`, the one place that does: a trigger a
    # row made a 10,000-message import 25% slower).
    db.execute("ALTER TABLE chats ADD COLUMN shown_count INTEGER")
    for trigger in _SHOWN_COUNT_TRIGGERS:  # (one statement each: `_run` splits at ";")
        db.execute(trigger)
    from desktop_app.storage.chat_info import RECOUNT

    db.execute(RECOUNT)  # every chat, once: the upgrade's one count


_SHOWN_COUNT_TRIGGERS = (
    """CREATE TRIGGER shown_count_on_update
    AFTER UPDATE OF deleted, tool_results, parent_id, chat_id ON messages BEGIN
        UPDATE chats SET shown_count = NULL WHERE id IN (OLD.chat_id, NEW.chat_id);
    END""",
    """CREATE TRIGGER shown_count_on_delete AFTER DELETE ON messages BEGIN
        UPDATE chats SET shown_count = NULL WHERE id = OLD.chat_id;
    END""",
    """CREATE TRIGGER shown_count_on_branch AFTER UPDATE OF leaf_id, branched ON chats
    WHEN OLD.leaf_id IS NOT NEW.leaf_id OR OLD.branched IS NOT NEW.branched BEGIN
        UPDATE chats SET shown_count = NULL WHERE id = NEW.id;
    END""",
)


def _v13(db: sqlite3.Connection) -> None:
    # Each message's per-block token counts, as the tokenizer made them (tokens/counter.py:
    # `remember`): a long chat's first plan reads them instead of counting it all again.
    # A table of their own: kept in the blocks' rows, storing them rewrote every block's
    # text. Deleted blocks forget their message's counts (the trigger), whatever code
    # deletes them; new blocks do too (`message_writes._insert_blocks`, the one place that
    # writes them). (`blocks.tokens`, from v1, was never written.)
    db.execute(
        "CREATE TABLE block_counts (message_id TEXT PRIMARY KEY "
        "REFERENCES messages(id) ON DELETE CASCADE, counts TEXT NOT NULL)"  # JSON list
    )
    db.execute(
        "CREATE TRIGGER block_counts_on_delete AFTER DELETE ON blocks BEGIN "
        "DELETE FROM block_counts WHERE message_id = OLD.message_id; END"
    )


def _v14(db: sqlite3.Connection) -> None:
    # The search index gathers a transaction's new entries in memory before writing them
    # out (`search.INDEX_BUFFER`): 1 MB by default, so a 10,000-message import wrote ~40
    # small segments and merged them again. A bigger buffer takes a quarter off indexing.
    search.set_buffer(db)


def _v15(db: sqlite3.Connection) -> None:
    # A project's spending cap (chats/budgets.py): the most its chats' requests may cost
    # together, in the price table's currency; 0: none.
    db.execute("ALTER TABLE projects ADD COLUMN spend_cap REAL NOT NULL DEFAULT 0")


def _v16(db: sqlite3.Connection) -> None:
    # Where an imported chat came from (storage/foreign: "claude:<uuid>",
    # "chatgpt:<id>"), so importing the same export again adds nothing.
    db.execute(
        "CREATE TABLE imported_sources (source TEXT PRIMARY KEY, "
        "chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE)"
    )


def _v17(db: sqlite3.Connection) -> None:
    # Facts may come from an import (another app's memory or custom instructions,
    # chats/imports.py), offered for the user to accept: a chat's fact may have that
    # source (SQLite cannot widen a CHECK in place: the table is made again), and a
    # project's fact may be such a suggestion — kept, shown, not sent. What an imported
    # chat's source did not show (its tool traffic, system messages, the model's notes)
    # is kept with it, unshown (storage/foreign: `Hidden`). A chat handed off to a new
    # one is linked to it both ways (`handoffs`).
    _run(
        db,
        """
        CREATE TABLE facts_v17 (
            id TEXT PRIMARY KEY,
            chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            text TEXT NOT NULL,
            fields TEXT NOT NULL DEFAULT '[]',
            source TEXT NOT NULL CHECK (source IN ('user', 'model', 'import')),
            pending INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        INSERT INTO facts_v17 (id, chat_id, position, text, fields, source, pending,
                               created_at, updated_at)
            SELECT id, chat_id, position, text, fields, source, pending, created_at, updated_at
            FROM facts;
        DROP TABLE facts;
        ALTER TABLE facts_v17 RENAME TO facts;
        ALTER TABLE project_facts ADD COLUMN pending INTEGER NOT NULL DEFAULT 0;
        CREATE TABLE hidden_messages (
            chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            after_id TEXT,          -- the message it followed (NULL: before the first)
            path TEXT NOT NULL,     -- where it was in the export
            role TEXT NOT NULL,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            PRIMARY KEY (chat_id, seq)
        );
        CREATE TABLE handoffs (         -- a chat continued in a new one (chats/handoff.py)
            from_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
            to_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
            at REAL NOT NULL,
            PRIMARY KEY (from_id, to_id)
        )
        """,
    )


def _v18(db: sqlite3.Connection) -> None:
    # A project's knowledge file may be a PDF sent as a `document` (Claude reads its
    # pages): its base64 and its page count; `text` keeps its extracted words (what the
    # on-demand tool reads and search finds). "" and 0 for a file sent as text.
    _run(
        db,
        """
        ALTER TABLE project_files ADD COLUMN document TEXT NOT NULL DEFAULT '';
        ALTER TABLE project_files ADD COLUMN pages INTEGER NOT NULL DEFAULT 0
        """,
    )


def _v19(db: sqlite3.Connection) -> None:
    # `chats.changes` goes up with every write of a chat's messages, their blocks' content
    # (not token counts) or the branch shown, by anyone (`kept_transcripts.py`). A block is
    # inserted with its message's row, which counts (a trigger a block doubled imports).
    of_message = "(SELECT chat_id FROM messages WHERE id = {}.message_id)"
    triggers = {
        "messages_inserted": ("AFTER INSERT ON messages", "NEW.chat_id"),
        "messages_updated": ("AFTER UPDATE ON messages", "NEW.chat_id"),
        "messages_deleted": ("AFTER DELETE ON messages", "OLD.chat_id"),
        "blocks_updated": ("AFTER UPDATE OF message_id, position, type, raw ON blocks", None),
        "blocks_deleted": ("AFTER DELETE ON blocks", of_message.format("OLD")),
        "branch_shown_changed": (
            "AFTER UPDATE OF leaf_id ON chats WHEN OLD.leaf_id IS NOT NEW.leaf_id",
            "NEW.id",
        ),
    }
    db.execute("ALTER TABLE chats ADD COLUMN changes INTEGER NOT NULL DEFAULT 0")
    for name, (when, chat) in triggers.items():  # (not `_run`: a body has its own ";")
        chat = chat or of_message.format("NEW")
        db.execute(
            f"CREATE TRIGGER {name} {when} BEGIN UPDATE chats SET changes = changes + 1 WHERE id = {chat}; END"
        )


def _v21(db: sqlite3.Connection) -> None:
    # A chat's unsent draft, kept over a restart (`chat_rows.set_draft`).
    db.execute("ALTER TABLE chats ADD COLUMN draft TEXT NOT NULL DEFAULT ''")


def _v20(db: sqlite3.Connection) -> None:
    # Writes no longer merge the search index's segments; the thread a finished reply
    # starts does, a few pages at a time (`after_reply.py`, `search.merge_apart`).
    search.merge_apart(db)


MIGRATIONS: list[Migration] = [
    _v1,
    _v2,
    _v3,
    _v4,
    _v5,
    _v6,
    _v7,
    _v8,
    _v9,
    _v10,
    _v11,
    _v12,
    _v13,
    _v14,
    _v15,
    _v16,
    _v17,
    _v18,
    _v19,
    _v20,
    _v21,
]  # append only; index + 1 is the schema version
if len(MIGRATIONS) != SCHEMA_VERSION:  # (a test runs this too: never shipped unequal)
    raise RuntimeError(f"{len(MIGRATIONS)} migrations, but the schema is v{SCHEMA_VERSION}")


# SQLite's primary result codes (https://sqlite.org/rescode.html), the low byte of
# `sqlite_errorcode`.
_PERM, _BUSY, _LOCKED, _READONLY, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _NOTADB = (
    3,
    5,
    6,
    8,
    10,
    11,
    13,
    14,
    26,
)


def database_path(db: sqlite3.Connection) -> Path:
    """The file behind a connection, for an error's words (the words still come when
    the connection cannot say)."""
    try:
        row = db.execute("PRAGMA database_list").fetchone()
    except sqlite3.Error:
        row = None
    return Path(row[2]) if row and row[2] else Path("the chat database")


F = TypeVar("F", bound=Callable[..., Any])


def explained(function: F) -> F:
    """A storage function (its first argument a connection) whose `sqlite3.Error` leaves
    as a `StorageError` that says what happened (a full disk…) — as the store's methods
    do, for the modules that work on the connection directly (the ledger, projects)."""

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except sqlite3.Error as exc:
            connection = next((a for a in args if isinstance(a, sqlite3.Connection)), None)
            where = database_path(connection) if connection else Path("the chat database")
            raise storage_error(exc, where) from exc

    return cast(F, call)


def storage_error(exc: sqlite3.Error, path: Path) -> StorageError:
    """What a SQLite failure means for the user, and what they can do about it."""
    code = int(getattr(exc, "sqlite_errorcode", -1)) & 0xFF
    details = f"{type(exc).__name__}: {exc} (SQLite {getattr(exc, 'sqlite_errorname', '?')})"
    unchanged = "Nothing was changed: what was saved before is intact."
    if code == _FULL or "disk is full" in str(exc):
        return StorageError(
            "The disk is full",
            f"ContextDesk could not save to {path}: there is no space left on its disk. "
            f"{unchanged} Free some space, then try again.",
            retryable=True,
            details=details,
            kind=ErrorKind.DISK_FULL,
        )
    if code in (_BUSY, _LOCKED):
        return StorageError(
            "The chat database is busy",
            f"Another program (or another copy of ContextDesk) has kept {path} locked for "
            f"over {BUSY_TIMEOUT_S:.0f} seconds. {unchanged} Close it, then try again.",
            retryable=True,
            details=details,
            kind=ErrorKind.DATABASE_LOCKED,
        )
    if code in (_READONLY, _PERM) or (
        code == _CANTOPEN and not os.access(path.parent, os.W_OK | os.X_OK)
    ):
        return StorageError(
            "The data folder is read-only",
            f"ContextDesk cannot write to {path}. {unchanged} Make the folder writable, or "
            "start ContextDesk with --home (or CONTEXTDESK_HOME) set to one that is.",
            details=details,
            kind=ErrorKind.READ_ONLY,
        )
    if code in (_CORRUPT, _NOTADB):
        return StorageError(
            "The chat database is damaged",
            f"{path} is not a readable ContextDesk database: it is damaged, or another kind "
            "of file. ContextDesk did not change it. Quit ContextDesk and put the newest copy "
            f"from {path.parent / BACKUPS} (one is kept each day) in its place, or move it "
            "aside and ContextDesk starts with a new one.",
            details=details,
            kind=ErrorKind.DATABASE_DAMAGED,
        )
    return StorageError(
        "The chat database could not be used",
        f"Reading or writing {path} failed ({exc}). {unchanged} Check the disk, then try again.",
        retryable=True,
        details=details,
        kind=ErrorKind.STORAGE,
    )


def connect(path: Path, *, busy_timeout: float = BUSY_TIMEOUT_S) -> sqlite3.Connection:
    """Open (creating and migrating if needed) the database at `path`."""
    try:
        return _connect(path, busy_timeout)
    except sqlite3.Error as exc:
        raise storage_error(exc, path) from exc


def _connect(path: Path, busy_timeout: float) -> sqlite3.Connection:
    with contextlib.suppress(OSError):  # a read-only folder: SQLite will say so below
        create_private(path)  # 0600 before SQLite makes it (its -wal and -shm copy the mode)
    db = sqlite3.connect(
        path,
        isolation_level=None,
        check_same_thread=False,
        timeout=busy_timeout,
        factory=SharedConnection,
    )
    try:
        db.row_factory = sqlite3.Row
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise NewerSchema(version, SCHEMA_VERSION, path)
        _use_wal(db, busy_timeout)
        db.execute("PRAGMA synchronous = FULL")
        db.execute("PRAGMA foreign_keys = ON")
        db.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        # The WAL is emptied on a thread of its own at each reply's end (`after_reply`);
        # the commit that passes this many pages empties it itself, on whichever thread
        # made it — 20–40 ms. SQLite's 1,000 (4 MB) was passed every few replies, once
        # at Stop; this many is left as the bound for long stretches without a reply.
        db.execute(f"PRAGMA wal_autocheckpoint = {WAL_PAGES_BEFORE_CHECKPOINT}")
        if version < SCHEMA_VERSION:
            # One transaction for every step: an upgrade is all or nothing, and a new
            # folder's database is made with one sync to disk instead of one per step.
            with transaction(db):
                # Again, holding the write lock: another copy may have just made it.
                version = db.execute("PRAGMA user_version").fetchone()[0]
                for number in range(version, SCHEMA_VERSION):
                    MIGRATIONS[number](db)
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        db.close()
        raise
    return db


def _use_wal(db: sqlite3.Connection, busy_timeout: float) -> None:
    """Write-ahead logging (readers never wait for the writer). Switching a new file to it
    while another copy opens the same file fails at once with "database is locked":
    SQLite does not wait here as it does elsewhere, so this waits, up to the same time."""
    deadline = time.monotonic() + busy_timeout
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


class SharedConnection(sqlite3.Connection):
    """The app's connection: the window, a turn's worker and the background thread all
    write through it, so its transactions take turns (`write_lock`); two at once on one
    connection would be one transaction, or fail with "cannot start a transaction within
    a transaction"."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.write_lock = threading.RLock()


@contextmanager
def unsynced(db: sqlite3.Connection) -> Iterator[None]:
    """The writes inside commit without waiting for the disk (synchronous=NORMAL): WAL
    keeps the database whole either way; a power cut could cost them. For bookkeeping a
    restart repairs or can do without (the ledger's note of how a reply ended, the mark
    that a turn runs, a streaming reply's latest second) — each sync is 5–35 ms the
    window waits, and Stop made four. Held for its writes alone (the connection is shared)."""
    lock = db.write_lock if isinstance(db, SharedConnection) else contextlib.nullcontext()
    with lock:
        db.execute("PRAGMA synchronous = NORMAL")
        try:
            yield
        finally:
            db.execute("PRAGMA synchronous = FULL")


WAL_PAGES_BEFORE_CHECKPOINT = 10_000  # 40 MB of 4 KB pages


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE … COMMIT, or ROLLBACK on any exception: all or nothing. SQLite
    rolls back by itself after some failures (a full disk, a failed COMMIT): then there
    is nothing left to roll back, and the first error is the one that counts. On a
    `SharedConnection`, one thread's transaction at a time."""
    lock = db.write_lock if isinstance(db, SharedConnection) else contextlib.nullcontext()
    with lock:
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
