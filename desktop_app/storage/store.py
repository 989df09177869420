"""`ChatStore`: chats, their messages (every block with its raw API JSON, so thinking
signatures survive byte for byte), context state and calibration, in SQLite.

Writes are transactions: appending a message, saving a chat's context state (facts,
summaries, exclusions, breaker), forking and deleting are each all or nothing. A reply
being streamed is checkpointed by the caller at most about once a second (`checkpoint`),
never per token; at startup, leftover `streaming` rows become `interrupted` and the
chat's unanswered tool calls get their interrupted results (`recover`).

Every public method turns a `sqlite3.Error` into a `StorageError` (`_sqlite_errors_explained`),
so no caller ever meets a raw SQLite exception.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from desktop_app.config.privacy import create_private
from desktop_app.config.settings import DEFAULT_MODEL
from desktop_app.context.chat_settings import ContextSettings
from desktop_app.context.facts import Fact, FactSource
from desktop_app.context.state import Breaker, ContextState, Summary
from desktop_app.core.blocks import ToolResultBlock, block_to_api, block_type
from desktop_app.core.errors import ContextDeskError, ErrorKind
from desktop_app.core.messages import Message, MessageStatus, new_id
from desktop_app.storage.chat_info import (
    CHATS,
    RECOUNT,
    ChatInfo,
    chat_info,
    list_chats,
    project_names,
    settings_to_json,
)
from desktop_app.storage.db import BUSY_TIMEOUT_S, connect, storage_error, transaction
from desktop_app.storage.message_rows import block_counts, read_from
from desktop_app.storage.search import (
    Hits,
    index_blocks,
    search,
    unindex_chat,
    unindex_message,
)

if TYPE_CHECKING:
    from desktop_app.core.branches import Tree


class _End:
    """Where a message is added when nothing else is said: the end of the branch shown."""


END = _End()


class ChatNotFound(ContextDeskError):
    def __init__(self, ref: str, why: str = "no chat has this id") -> None:
        super().__init__("Chat not found", f"{ref!r}: {why}.", kind=ErrorKind.NOT_FOUND)


P = ParamSpec("P")
R = TypeVar("R")
StoreT = TypeVar("StoreT", bound="type[ChatStore]")


def _explained(method: Callable[P, R]) -> Callable[P, R]:
    @functools.wraps(method)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except sqlite3.Error as exc:
            store = args[0]
            assert isinstance(store, ChatStore)
            raise storage_error(exc, store.path) from exc

    return call


def _sqlite_errors_explained(cls: StoreT) -> StoreT:
    """Wrap every public method: a raw `sqlite3.Error` leaves as a `StorageError`."""
    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and callable(member):
            setattr(cls, name, _explained(member))
    return cls


@_sqlite_errors_explained
class ChatStore:
    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self.db = db
        self.path = path
        self._readers: dict[int, sqlite3.Connection] = {}  # for searches: one per thread
        self._readers_lock = threading.Lock()

    @classmethod
    def open(cls, path: Path, *, busy_timeout: float = BUSY_TIMEOUT_S) -> ChatStore:
        return cls(connect(path, busy_timeout=busy_timeout), path)

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """One write, all or nothing (`transaction`); before it commits, the chats whose
        count of messages it made them forget are counted again (`chat_info.RECOUNT`)."""
        with transaction(self.db):
            yield
            self.db.execute(RECOUNT)

    def close(self) -> None:
        with self._readers_lock:
            for reader in self._readers.values():
                reader.close()
            self._readers.clear()
        self.db.close()

    def _searcher(self) -> sqlite3.Connection:
        """A read-only connection of this thread's own for searches: a search on the
        window's search thread never holds the connection every write uses, and its time
        limit interrupts only it (WAL: it reads what is committed, while others write)."""
        with self._readers_lock:
            reader = self._readers.get(threading.get_ident())
            if reader is None:
                reader = sqlite3.connect(self.path, check_same_thread=False, timeout=BUSY_TIMEOUT_S)
                reader.row_factory = sqlite3.Row
                reader.execute("PRAGMA query_only = ON")
                self._readers[threading.get_ident()] = reader
            return reader

    def data_version(self) -> int:
        """Changes whenever another connection (the CLI, another program) commits to the
        database; this connection's own writes leave it as it is (`PRAGMA data_version`)."""
        return int(self.db.execute("PRAGMA data_version").fetchone()[0])

    # -- chats --------------------------------------------------------------------------

    def create_chat(
        self,
        title: str = "New chat",
        model: str = DEFAULT_MODEL,
        system_prompt: str = "",
        settings: ContextSettings | None = None,
    ) -> ChatInfo:
        chat_id = new_id("chat")
        now = time.time()
        with self._writing():
            self.db.execute(
                "INSERT INTO chats (id, title, model, system_prompt, settings, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    chat_id,
                    title,
                    model,
                    system_prompt,
                    settings_to_json(settings or ContextSettings()),
                    now,
                    now,
                ),
            )
            self.db.execute("INSERT INTO context_state (chat_id) VALUES (?)", (chat_id,))
        return self.chat(chat_id)

    def create_full(
        self,
        title: str,
        model: str,
        system_prompt: str,
        settings: ContextSettings,
        messages: Sequence[Message],
        state: ContextState,
        branches: Sequence[tuple[str | None, Message]] = (),
        order: Mapping[str, float] | None = None,
    ) -> ChatInfo:
        """A whole chat at once — metadata, messages (the branch shown; the others'
        messages, each after its parent; all stored in `order` when it is given, so
        versions keep their numbers) and context state — in ONE transaction: an import
        either lands completely or not at all. The branch shown is `messages`'."""
        chat_id = new_id("chat")
        now = time.time()
        with self._writing():
            self.db.execute(
                "INSERT INTO chats (id, title, model, system_prompt, settings, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (chat_id, title, model, system_prompt, settings_to_json(settings), now, now),
            )
            self.db.execute("INSERT INTO context_state (chat_id) VALUES (?)", (chat_id,))
            if not branches:
                self._insert_many(chat_id, messages)
            for parent, message in _parents_first(messages, branches, order or {}):
                self._insert_many(chat_id, [message], after=parent)
            if branches and messages:
                self.db.execute(
                    "UPDATE chats SET leaf_id = ? WHERE id = ?", (messages[-1].id, chat_id)
                )
            self._write_context_state(chat_id, state)
        return self.chat(chat_id)

    def chat(self, chat_id: str) -> ChatInfo:
        row = self.db.execute(
            f"{CHATS} WHERE c.id = ?",
            (chat_id,),
        ).fetchone()
        if row is None:
            raise ChatNotFound(chat_id)
        return chat_info(row)

    def chats(self, chat_ids: Sequence[str]) -> dict[str, ChatInfo]:
        """These chats, by id, in one query (search results name up to hundreds)."""
        marks = ",".join("?" * len(chat_ids))
        rows = self.db.execute(f"{CHATS} WHERE c.id IN ({marks})", tuple(chat_ids))
        return {r["id"]: chat_info(r) for r in rows}

    def project_names(self) -> dict[str, str]:
        return project_names(self.db)

    def list_chats(self, *, trash: bool = False, archived: bool = False) -> list[ChatInfo]:
        return list_chats(self.db, trash=trash, archived=archived)

    def find_chat(self, ref: str) -> ChatInfo:
        """A chat by its id or a unique prefix of it."""
        rows = self.db.execute(
            "SELECT id FROM chats WHERE id LIKE ? ESCAPE '\\'", (_like_prefix(ref),)
        ).fetchall()
        if not rows:
            raise ChatNotFound(ref)
        if len(rows) > 1:
            raise ChatNotFound(ref, f"{len(rows)} chats start with it; give more of the id")
        return self.chat(rows[0]["id"])

    def search(self, query: str, *, chat_id: str | None = None, limit: int = 200) -> Hits:
        """Titles and messages that contain `query` (see `storage.search`)."""
        return search(self._searcher(), query, chat_id=chat_id, limit=limit)

    def update_chat(
        self,
        chat_id: str,
        *,
        title: str | None = None,
        model: str | None = None,
        system_prompt: str | None = None,
        settings: ContextSettings | None = None,
    ) -> ChatInfo:
        """Change the chat's name, model, system prompt or settings. None of it is
        activity: the chat keeps its place in the list (as in the apps our users know)."""
        current = self.chat(chat_id)
        with self._writing():
            self.db.execute(
                "UPDATE chats SET title = ?, model = ?, system_prompt = ?, settings = ? WHERE id = ?",
                (
                    current.title if title is None else title,
                    current.model if model is None else model,
                    current.system_prompt if system_prompt is None else system_prompt,
                    settings_to_json(current.settings if settings is None else settings),
                    chat_id,
                ),
            )
        return self.chat(chat_id)

    def back_up_to(self, target: Path) -> None:
        """A consistent copy of the whole database in `target` (which must not exist),
        readable by the user alone; taken while others read and write."""
        create_private(target)  # VACUUM INTO fills an empty file and keeps its mode
        try:
            self.db.execute("VACUUM INTO ?", (str(target),))
        except BaseException:
            target.unlink(missing_ok=True)
            raise

    def fill_in_setting(self, name: str, value: int) -> int:
        """Give every chat whose settings lack `name` this value (a setting that became
        per chat keeps the meaning it had for older chats). Returns how many changed."""
        path = f"$.{name}"
        lacking = "SELECT 1 FROM chats WHERE json_type(settings, ?) IS NULL LIMIT 1"
        if self.db.execute(lacking, (path,)).fetchone() is None:
            return 0  # the usual case: no write, no lock
        with self._writing():
            changed = self.db.execute(
                "UPDATE chats SET settings = json_set(settings, ?, ?) WHERE json_type(settings, ?) IS NULL",
                (path, value, path),
            ).rowcount
        return int(changed)

    def set_token_total(self, chat_id: str, tokens: int) -> None:
        """Remember a chat's size for the chat list (its activity time is not touched)."""
        with self._writing():
            self.db.execute("UPDATE chats SET token_total = ? WHERE id = ?", (tokens, chat_id))

    def set_pinned(self, chat_id: str, pinned: bool) -> ChatInfo:
        return self._mark(chat_id, "pinned_at", pinned)

    def set_archived(self, chat_id: str, archived: bool) -> ChatInfo:
        return self._mark(chat_id, "archived_at", archived)

    def _mark(self, chat_id: str, column: str, on: bool) -> ChatInfo:
        """Set or clear one of the chat's marks (its activity time is not touched)."""
        self.chat(chat_id)
        with self._writing():
            self.db.execute(
                f"UPDATE chats SET {column} = ? WHERE id = ?",
                (time.time() if on else None, chat_id),
            )
        return self.chat(chat_id)

    def delete_chat(self, chat_id: str) -> None:
        """Move to the trash (restorable)."""
        self.chat(chat_id)
        with self._writing():
            self.db.execute("UPDATE chats SET deleted_at = ? WHERE id = ?", (time.time(), chat_id))

    def restore_chat(self, chat_id: str) -> None:
        self.chat(chat_id)
        with self._writing():
            self.db.execute("UPDATE chats SET deleted_at = NULL WHERE id = ?", (chat_id,))

    def purge_chat(self, chat_id: str) -> None:
        """Delete a chat in the trash for good: its messages, facts, summaries, its search
        entries and its requests in the ledger, with the request parts no other request
        uses. (Only from the trash: a chat is never deleted in one step.)"""
        chat = self.chat(chat_id)
        if chat.deleted_at is None:
            raise ContextDeskError(
                "Not in the trash",
                f"“{chat.title}” is not in the trash; move it there first.",
                kind=ErrorKind.USAGE,
            )
        with self._writing():
            unindex_chat(self.db, chat_id)
            self.db.execute("DELETE FROM chats WHERE id = ?", (chat_id,))  # (the rest cascades)
            self.db.execute(
                "DELETE FROM request_parts WHERE id NOT IN (SELECT head FROM requests) "
                "AND id NOT IN (SELECT value FROM requests, json_each(requests.added))"
            )

    # -- messages -------------------------------------------------------------------------

    def messages(self, chat_id: str) -> list[Message]:
        return self.recent_messages(chat_id, None)

    def recent_messages(self, chat_id: str, limit: int | None) -> list[Message]:
        """The newest `limit` messages of the branch shown, oldest first (all of them for
        None): a long chat shows its last page without reading the whole history first."""
        info = self.chat(chat_id)
        if not info.branched and not info.leaf_id:  # one line, to its newest message
            return self._read_line(chat_id, limit)
        path = self.tree(chat_id).path(info.leaf_id)
        return self._read(chat_id, path if limit is None else path[len(path) - limit :])

    def _read_line(self, chat_id: str, limit: int | None) -> list[Message]:
        """`recent_messages` of a chat that never branched: by position, no tree."""
        since = -1
        if limit is not None:
            row = self.db.execute(
                "SELECT position FROM messages WHERE chat_id = ? AND NOT deleted ORDER BY position DESC LIMIT 1 OFFSET ?",
                (chat_id, max(0, limit - 1)),
            ).fetchone()
            since = row["position"] if row is not None else -1
        return read_from(self.db, chat_id, since)

    def messages_after(self, chat_id: str, message_id: str | None) -> list[Message]:
        """The branch shown after one of its messages (all of it for None)."""
        path = self.tree(chat_id).path(self.chat(chat_id).leaf_id)
        start = path.index(message_id) + 1 if message_id in path else 0
        return self._read(chat_id, path[start:])

    def message(self, chat_id: str, message_id: str) -> Message:
        found = self._read(chat_id, [message_id])
        if not found:
            raise ContextDeskError(
                "Message not found", "It is not in this chat.", kind=ErrorKind.NOT_FOUND
            )
        return found[0]

    def _read(self, chat_id: str, ids: Sequence[str]) -> list[Message]:
        """These messages (ids of one branch, oldest first), with their blocks."""
        if not ids:
            return []
        first = self.db.execute(
            "SELECT position FROM messages WHERE id = ? AND chat_id = ?", (ids[0], chat_id)
        ).fetchone()
        if first is None:
            return []
        # the other branches' messages after `first` are read and dropped
        return read_from(self.db, chat_id, first["position"], set(ids))

    def block_counts(self, chat_id: str) -> dict[str, tuple[int, ...]]:
        """The per-block token counts kept for this chat's messages (`message_rows`)."""
        return block_counts(self.db, chat_id)

    def keep_block_counts(self, counts: Mapping[str, Sequence[int]]) -> None:
        """Keep messages' per-block token counts (until their blocks are written again);
        a message deleted meanwhile is passed over. Each write of a few thousand is one
        statement over a JSON object: SQLite does the rows without the GIL, so a long
        chat's first keeping leaves the window its time (a row a statement handed the GIL
        back and forth 200,000 times)."""
        found = list(counts.items())
        for start in range(0, len(found), 5_000):
            batch = json.dumps(dict(found[start : start + 5_000]))
            with self._writing():
                self.db.execute(
                    "INSERT OR REPLACE INTO block_counts (message_id, counts) "
                    "SELECT j.key, j.value FROM json_each(?) j "
                    "WHERE EXISTS (SELECT 1 FROM messages WHERE id = j.key)",
                    (batch,),
                )

    # -- branches (core/branches.py) ------------------------------------------------------

    def show_end(self, chat_id: str, leaf_id: str | None) -> None:
        """End the branch shown at this message (None: the newest), as it was before."""
        with self._writing():
            self.db.execute("UPDATE chats SET leaf_id = ? WHERE id = ?", (leaf_id, chat_id))

    def other_branches(self, chat_id: str) -> list[tuple[str | None, Message]]:
        """The messages of every branch but the one shown, oldest first, each with the
        message it follows (None: a first message) — what an export adds to the path."""
        if not self.has_branches(chat_id):
            return []
        tree = self.tree(chat_id)
        if not tree.branched:
            return []
        shown = set(tree.path(self.chat(chat_id).leaf_id))
        off = [m for m in tree.parent if m not in shown]  # in the order they were stored
        return [(tree.parent[m.id], m) for m in self._read(chat_id, off)]

    def has_branches(self, chat_id: str) -> bool:
        """Has a message of the chat ever had a version beside it? (Most chats never
        branch: they are read as one line, without the tree.) A "yes" may be only a
        hidden reply beside a shown one: the tree says for sure."""
        return self.chat(chat_id).branched

    def tree(self, chat_id: str) -> Tree:
        """Every message's place among the chat's branches (ids only: cheap)."""
        from desktop_app.core.branches import Node, Tree  # (not on the way to the first paint)

        return Tree(
            Node(r[0], r[1], bool(r[2]))
            for r in self.db.execute(
                "SELECT id, parent_id, deleted FROM messages WHERE chat_id = ? ORDER BY position",
                (chat_id,),
            )
        )

    def show_branch(self, chat_id: str, message_id: str, *, exactly: bool = False) -> None:
        """Show the branch through `message_id`, as it was left (its newest message);
        `exactly`: end the branch shown at `message_id` (an answer to it comes next)."""
        tree = self.tree(chat_id)
        if message_id not in tree:
            raise ContextDeskError(
                "Message not found", "It is not in this chat.", kind=ErrorKind.NOT_FOUND
            )
        leaf = message_id if exactly else tree.newest_leaf(message_id)
        with self._writing():
            self.db.execute(
                "UPDATE chats SET leaf_id = ? WHERE id = ?",
                (None if leaf == tree.newest else leaf, chat_id),
            )

    def append_message(self, chat_id: str, message: Message, *, beside: str | None = None) -> None:
        """Add a message at the end of the branch shown (one transaction) — or, `beside`
        another, as its alternative: a new branch, shown from now on."""
        with self._writing():
            if beside is None:
                self._insert(chat_id, message)
                return
            tree = self.tree(chat_id)
            if beside not in tree:
                raise ContextDeskError(
                    "Message not found", "It is not in this chat.", kind=ErrorKind.NOT_FOUND
                )
            self._insert_many(chat_id, [message], after=tree.parent[beside])

    def append_messages(self, chat_id: str, messages: Iterable[Message]) -> None:
        with self._writing():
            self._insert_many(chat_id, list(messages))

    def checkpoint(self, chat_id: str, message: Message, *, partial: bool = False) -> None:
        """Save a message being streamed (insert or replace its blocks and status). The
        caller throttles this to about once a second. A `partial` one (words still
        coming) is not synced to the disk before this returns: WAL keeps the database
        whole either way, a power cut could cost that second of the reply, and the sync
        would hold the window up to ~35 ms every second. The finished message is synced."""
        if partial:
            self.db.execute("PRAGMA synchronous = NORMAL")
        try:
            self._checkpoint(chat_id, message)
        finally:
            if partial:
                self.db.execute("PRAGMA synchronous = FULL")

    def _checkpoint(self, chat_id: str, message: Message) -> None:
        with self._writing():
            exists = self.db.execute(
                "SELECT 1 FROM messages WHERE id = ?", (message.id,)
            ).fetchone()
            if exists is None:
                self._insert(chat_id, message)
                return
            self.db.execute(
                "UPDATE messages SET status = ?, stop_reason = ?, usage = ?, model = ?, bound_to = ? "
                "WHERE id = ?",
                (
                    message.status.value,
                    message.stop_reason,
                    _usage_json(message),
                    message.model,
                    message.bound_to,
                    message.id,
                ),
            )
            unindex_message(self.db, message.id, chat_id)
            self.db.execute("DELETE FROM blocks WHERE message_id = ?", (message.id,))
            self._insert_blocks(chat_id, [message])
            self._touch(chat_id)

    def recover(self, *, live: Iterable[str] = ()) -> list[str]:
        """At startup: every `streaming` message becomes `interrupted`, and any tool call
        left without a result gets an interrupted one — except in the `live` chats, whose
        turns another process is running right now. Returns the chats touched; each
        repair is recorded in the `repairs` table."""
        skip = set(live)
        chats = [
            r["chat_id"]
            for r in self.db.execute(
                "SELECT DISTINCT chat_id FROM messages WHERE status = 'streaming'"
            )
            if r["chat_id"] not in skip
        ]
        if chats:  # rare: the repair module (and its imports) is not loaded at every start
            from desktop_app.core.history import unanswered_calls
            from desktop_app.core.repair import INTERRUPTED_RESULT
        for chat_id in chats:
            with self._writing():
                self.db.execute(
                    "UPDATE messages SET status = 'interrupted' WHERE chat_id = ? AND status = 'streaming'",
                    (chat_id,),
                )
                # A reply cut before its first block says nothing; hide it (the row stays).
                self.db.execute(
                    "UPDATE messages SET deleted = 1 WHERE chat_id = ? AND status = 'interrupted' "
                    "AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.message_id = messages.id)",
                    (chat_id,),
                )
            history = self.messages(chat_id)
            open_calls = unanswered_calls(history)
            report = [
                "a reply that was being written when ContextDesk stopped is marked interrupted"
            ]
            with self._writing():
                if open_calls and history and history[-1].role == "assistant":
                    results = tuple(
                        ToolResultBlock(c.id, INTERRUPTED_RESULT.format(name=c.name), is_error=True)
                        for c in open_calls
                    )
                    self._insert(chat_id, Message(role="user", blocks=results))
                    report.append(f"added interrupted results for {len(open_calls)} tool call(s)")
                self.db.execute(
                    "INSERT INTO repairs (chat_id, at, report) VALUES (?, ?, ?)",
                    (chat_id, time.time(), "; ".join(report)),
                )
        return chats

    def turn_started(self, chat_id: str, pid: int) -> None:
        """`pid` is answering in this chat (until `turn_ended`)."""
        with self._writing():
            self.db.execute(
                "INSERT OR REPLACE INTO running_turns (chat_id, pid, started_at) VALUES (?, ?, ?)",
                (chat_id, pid, time.time()),
            )

    def turn_ended(self, chat_id: str, pid: int) -> None:
        with self._writing():
            self.db.execute(
                "DELETE FROM running_turns WHERE chat_id = ? AND pid = ?", (chat_id, pid)
            )

    def running_turns(self) -> dict[str, int]:
        """Chat → the pid that marked a turn running there (some may have died since)."""
        return {r["chat_id"]: int(r["pid"]) for r in self.db.execute("SELECT * FROM running_turns")}

    def answering_pid(self, chat_id: str) -> int | None:
        """The process that marked a turn running in this chat, if any (it may be gone)."""
        row = self.db.execute(
            "SELECT pid FROM running_turns WHERE chat_id = ?", (chat_id,)
        ).fetchone()
        return int(row["pid"]) if row is not None else None

    def repairs(self, chat_id: str) -> list[str]:
        return [
            r["report"]
            for r in self.db.execute(
                "SELECT report FROM repairs WHERE chat_id = ? ORDER BY at", (chat_id,)
            )
        ]

    def fork(self, chat_id: str, through_message_id: str, title: str | None = None) -> ChatInfo:
        """A new chat with this chat's messages up to and including one, its facts and
        settings (one transaction; the original is untouched)."""
        source = self.chat(chat_id)
        history = self.messages(chat_id)
        ids = [m.id for m in history]
        if through_message_id not in ids:
            raise ContextDeskError(
                "Cannot fork",
                f"message {through_message_id} is not in this chat.",
                kind=ErrorKind.NOT_FOUND,
            )
        kept = history[: ids.index(through_message_id) + 1]
        state = self.context_state(chat_id)
        fork_id = new_id("chat")
        now = time.time()
        with self._writing():
            self.db.execute(
                "INSERT INTO chats (id, title, model, system_prompt, settings, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    fork_id,
                    title or f"{source.title} (fork)",
                    source.model,
                    source.system_prompt,
                    settings_to_json(source.settings),
                    now,
                    now,
                ),
            )
            self.db.execute("INSERT INTO context_state (chat_id) VALUES (?)", (fork_id,))
            self._insert_many(fork_id, [replace(message, id=new_id()) for message in kept])
            self._save_facts(fork_id, [replace(f, id=new_id("fact")) for f in state.facts])
        return self.chat(fork_id)

    # -- context state ---------------------------------------------------------------------

    def context_state(self, chat_id: str) -> ContextState:
        info = self.chat(chat_id)
        facts = tuple(
            Fact(
                text=r["text"],
                fields=tuple(tuple(pair) for pair in json.loads(r["fields"])),
                source=FactSource(r["source"]),
                id=r["id"],
                created_at=r["created_at"],
                updated_at=r["updated_at"],
                pending=bool(r["pending"]),
            )
            for r in self.db.execute(
                "SELECT * FROM facts WHERE chat_id = ? ORDER BY position", (chat_id,)
            )
        )
        summaries = tuple(
            Summary(
                number=r["number"],
                covers=tuple(json.loads(r["covers"])),
                text=r["text"],
                model=r["model"],
                instructions=r["instructions"],
                replaces=r["replaces"],
                warnings=tuple(json.loads(r["warnings"])),
                id=r["id"],
                created_at=r["created_at"],
                edited=bool(r["edited"]),
                undone=bool(r["undone"]),
            )
            for r in self.db.execute(
                "SELECT * FROM summaries WHERE chat_id = ? ORDER BY number", (chat_id,)
            )
        )
        row = self.db.execute(
            "SELECT * FROM context_state WHERE chat_id = ?", (chat_id,)
        ).fetchone()
        return ContextState(
            facts=facts,
            summaries=summaries,
            excluded_messages=frozenset(json.loads(row["excluded_messages"])),
            excluded_blocks=frozenset(tuple(pair) for pair in json.loads(row["excluded_blocks"])),
            cleared_results=frozenset(json.loads(row["cleared_results"])),
            breaker=Breaker(
                row["breaker_failures"], bool(row["breaker_paused"]), row["breaker_reason"]
            ),
            off_branch=self._off_branch(info) if summaries else frozenset(),
        )

    def _off_branch(self, info: ChatInfo) -> frozenset[str]:
        if not info.branched:
            return frozenset()
        tree = self.tree(info.id)
        if not tree.branched:
            return frozenset()
        return frozenset(tree.parent.keys() - set(tree.path(info.leaf_id)))

    def save_context_state(self, chat_id: str, state: ContextState) -> None:
        """Facts, summaries, exclusions and the breaker, in one transaction: a compaction's
        summary and the window it moves are stored together or not at all."""
        self.chat(chat_id)
        with self._writing():
            self._write_context_state(chat_id, state)
            self._touch(chat_id)

    def _write_context_state(self, chat_id: str, state: ContextState) -> None:
        self._save_facts(chat_id, state.facts)
        self.db.execute("DELETE FROM summaries WHERE chat_id = ?", (chat_id,))
        self.db.executemany(
            "INSERT INTO summaries (id, chat_id, number, covers, text, model, instructions, replaces, "
            "warnings, edited, undone, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    s.id,
                    chat_id,
                    s.number,
                    json.dumps(list(s.covers)),
                    s.text,
                    s.model,
                    s.instructions,
                    s.replaces,
                    json.dumps(list(s.warnings)),
                    int(s.edited),
                    int(s.undone),
                    s.created_at,
                )
                for s in state.summaries
            ],
        )
        self.db.execute(
            "UPDATE context_state SET excluded_messages = ?, excluded_blocks = ?, cleared_results = ?, "
            "breaker_failures = ?, breaker_paused = ?, breaker_reason = ? WHERE chat_id = ?",
            (
                json.dumps(sorted(state.excluded_messages)),
                json.dumps(sorted(state.excluded_blocks)),
                json.dumps(sorted(state.cleared_results)),
                state.breaker.failures,
                int(state.breaker.paused),
                state.breaker.reason,
                chat_id,
            ),
        )

    # -- calibration (the tokens layer's CalibrationStore port) ----------------------------------

    def load_calibration(self) -> dict[str, float]:
        return {
            r["model"]: r["factor"]
            for r in self.db.execute("SELECT model, factor FROM calibration")
        }

    def save_calibration(self, factors: dict[str, float]) -> None:
        with self._writing():
            self.db.executemany(
                "INSERT INTO calibration (model, factor) VALUES (?, ?) "
                "ON CONFLICT(model) DO UPDATE SET factor = excluded.factor",
                list(factors.items()),
            )

    # -- internals ---------------------------------------------------------------------------

    def _insert(self, chat_id: str, message: Message) -> None:
        self._insert_many(chat_id, [message])

    def _insert_many(
        self, chat_id: str, messages: Sequence[Message], *, after: str | _End | None = END
    ) -> None:
        """Append messages, one after another, to the branch shown (or `after` a given
        message: None starts a first message): one position lookup and batched inserts,
        so a 10,000-message import costs a few statements, not 30,000. They are the
        newest messages, so the chat shows their branch."""
        if not messages:
            return
        first, newest = self.db.execute(
            "SELECT COALESCE(MAX(position), -1) + 1, "
            "(SELECT id FROM messages WHERE chat_id = ?1 AND NOT deleted "
            "ORDER BY position DESC LIMIT 1) "
            "FROM messages WHERE chat_id = ?1",
            (chat_id,),
        ).fetchone()
        shown = self.db.execute(
            "SELECT leaf_id, shown_count FROM chats WHERE id = ?", (chat_id,)
        ).fetchone()
        if shown is None:
            raise ChatNotFound(chat_id)
        shown_end, count = shown[0] or newest, shown[1]
        if isinstance(after, _End):
            after = shown_end
        parents = [after, *(m.id for m in messages[:-1])]
        beside = self.db.execute(  # a message after `after` already: now there are two
            "SELECT 1 FROM messages WHERE chat_id = ? AND parent_id IS ? LIMIT 1", (chat_id, after)
        ).fetchone()
        if beside is not None:
            self.db.execute("UPDATE chats SET branched = 1 WHERE id = ?", (chat_id,))
        self.db.executemany(
            "INSERT INTO messages (id, chat_id, position, role, status, stop_reason, usage, created_at, revision, parent_id, model, bound_to, tool_results) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    m.id,
                    chat_id,
                    first + n,
                    m.role,
                    m.status.value,
                    m.stop_reason,
                    _usage_json(m),
                    m.created_at,
                    m.revision,
                    parent,
                    m.model,
                    m.bound_to,
                    int(m.is_tool_results),
                )
                for n, (m, parent) in enumerate(zip(messages, parents, strict=True))
            ],
        )
        self._insert_blocks(chat_id, messages)
        self.db.execute(
            "UPDATE chats SET updated_at = ?, leaf_id = NULL WHERE id = ?", (time.time(), chat_id)
        )
        # The kept count (schema v12): the branch shown goes on, so add to it; else
        # forget it (counted again before the write commits: `_writing`)
        if after == shown_end and count is not None:
            count += sum(not m.is_tool_results for m in messages)
        else:
            count = None
        self.db.execute("UPDATE chats SET shown_count = ? WHERE id = ?", (count, chat_id))

    def _insert_blocks(self, chat_id: str, messages: Sequence[Message]) -> None:
        """Every block of these messages, and its entry in the search index (one home
        for both: no block is ever stored unindexed)."""
        blocks = [
            (m.id, j, block_type(b), block_to_api(b))
            for m in messages
            for j, b in enumerate(m.blocks)
        ]
        self.db.executemany(
            "INSERT INTO blocks (message_id, position, type, raw) VALUES (?, ?, ?, ?)",
            [
                (message_id, j, kind, json.dumps(api, ensure_ascii=False))
                for message_id, j, kind, api in blocks
            ],
        )
        index_blocks(self.db, ((message_id, j, chat_id, api) for message_id, j, _, api in blocks))
        self.db.execute(  # new blocks: their messages' kept token counts are not theirs
            "DELETE FROM block_counts WHERE message_id IN (SELECT value FROM json_each(?))",
            (json.dumps([m.id for m in messages]),),
        )

    def _save_facts(self, chat_id: str, facts: Sequence[Fact]) -> None:
        self.db.execute("DELETE FROM facts WHERE chat_id = ?", (chat_id,))
        self.db.executemany(
            "INSERT INTO facts (id, chat_id, position, text, fields, source, pending, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    f.id,
                    chat_id,
                    i,
                    f.text,
                    json.dumps([list(p) for p in f.fields]),
                    f.source.value,
                    int(f.pending),
                    f.created_at,
                    f.updated_at,
                )
                for i, f in enumerate(facts)
            ],
        )

    def _touch(self, chat_id: str) -> None:
        self.db.execute("UPDATE chats SET updated_at = ? WHERE id = ?", (time.time(), chat_id))


def _parents_first(
    shown: Sequence[Message],
    branches: Sequence[tuple[str | None, Message]],
    order: Mapping[str, float],
) -> list[tuple[str | None, Message]]:
    """Every message of a tree with its parent, in `order` (the order they were first
    stored), yet never before its parent. Empty when there are no other branches."""
    if not branches:
        return []
    every = [(shown[i - 1].id if i else None, m) for i, m in enumerate(shown)]
    every += branches
    every.sort(key=lambda pm: order.get(pm[1].id, float("inf")))  # stable: unknown keep theirs
    placed: set[str | None] = {None}
    ready: list[tuple[str | None, Message]] = []
    while every:
        waiting = [pm for pm in every if pm[0] not in placed]
        for parent, message in every:
            if parent in placed:
                ready.append((parent, message))
                placed.add(message.id)
        if len(waiting) == len(every):  # a parent nowhere (the caller checked): as they are
            ready += waiting
            break
        every = [pm for pm in waiting if pm[1].id not in placed]
    return ready


def _usage_json(message: Message) -> str | None:
    return json.dumps(message.usage.to_api()) if message.usage else None


def _like_prefix(ref: str) -> str:
    return ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


__all__ = ["ChatInfo", "ChatNotFound", "ChatStore", "MessageStatus"]
