"""`ChatStore`: chats, their messages (every block with its raw API JSON, so thinking
signatures survive byte for byte), context state and calibration, in SQLite.

Writes are transactions: appending a message, saving a chat's context state (facts,
summaries, exclusions, breaker), forking and deleting are each all or nothing. A reply
being streamed is checkpointed by the caller at most about once a second (`checkpoint`),
never per token; at startup, leftover `streaming` rows become `interrupted` and the
chat's unanswered tool calls get their interrupted results (`recover`).

`ChatStore` is the one object callers hold; the work is done, by concern, in modules of
functions taking the connection: a chat's row and the trash (`chat_rows.py`), the tree
and the branch shown (`branch_rows.py`), writing messages (`message_writes.py`), reading
them (`message_rows.py`), the context state and calibration (`context_rows.py`), turns
in progress and the startup repair (`running_turns.py`), search (`search.py`). What
stays here is the connection's life, and what combines several of them (an import, a
fork).

Every public method turns a `sqlite3.Error` into a `StorageError` (`_sqlite_errors_explained`),
so no caller ever meets a raw SQLite exception.
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from desktop_app.config.privacy import create_private
from desktop_app.config.settings import DEFAULT_MODEL
from desktop_app.context.chat_settings import ContextSettings
from desktop_app.context.state import ContextState
from desktop_app.core.errors import ContextDeskError, ErrorKind
from desktop_app.core.messages import Message, MessageStatus, new_id
from desktop_app.core.transcript import Transcript
from desktop_app.storage import (
    branch_rows,
    chat_rows,
    context_rows,
    message_writes,
)
from desktop_app.storage import running_turns as turns
from desktop_app.storage.chat_info import ChatInfo, list_chats, project_names
from desktop_app.storage.chat_rows import writing
from desktop_app.storage.db import BUSY_TIMEOUT_S, SharedConnection, connect, storage_error
from desktop_app.storage.kept_transcripts import KeptTranscripts, mark_of
from desktop_app.storage.message_rows import block_counts
from desktop_app.storage.search import Hits, search

if TYPE_CHECKING:
    from desktop_app.core.branches import Tree
    from desktop_app.storage.foreign import Hidden


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
    def __init__(
        self, db: sqlite3.Connection, path: Path, kept: KeptTranscripts | None = None
    ) -> None:
        self.db = db
        self.path = path
        self.kept = kept  # transcripts read lately, shared with the stores beside this one
        self._at_one_moment = False  # inside `one_moment`: a read transaction
        self._readers: dict[int, sqlite3.Connection] = {}  # for searches: one per thread
        self._readers_lock = threading.Lock()

    @classmethod
    def open(
        cls,
        path: Path,
        *,
        busy_timeout: float = BUSY_TIMEOUT_S,
        kept: KeptTranscripts | None = None,
    ) -> ChatStore:
        return cls(connect(path, busy_timeout=busy_timeout), path, kept)

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

    @contextlib.contextmanager
    def one_moment(self) -> Iterator[None]:
        """What is read inside sees the database as it was at one moment (a read
        transaction: WAL lets others write meanwhile). For a store of its own: the
        window's writes go through the window's."""
        self.db.execute("BEGIN DEFERRED")
        self._at_one_moment = True
        try:
            yield
        finally:
            self._at_one_moment = False
            self.db.execute("COMMIT")

    def data_version(self) -> int:
        """Changes whenever another connection (the CLI, another program) commits to the
        database; this connection's own writes leave it as it is (`PRAGMA data_version`)."""
        return int(self.db.execute("PRAGMA data_version").fetchone()[0])

    def back_up_to(self, target: Path) -> None:
        """A consistent copy of the whole database in `target` (which must not exist),
        readable by the user alone; taken while others read and write."""
        create_private(target)  # VACUUM INTO fills an empty file and keeps its mode
        try:
            self.db.execute("VACUUM INTO ?", (str(target),))
        except BaseException:
            target.unlink(missing_ok=True)
            raise

    def search(
        self, query: str, *, chat_id: str | None = None, limit: int = 200, around: int = 60
    ) -> Hits:
        """Titles and messages that contain `query` (see `storage.search`), each with
        `around` characters either side of the match. Any thread may search."""
        return search(self._searcher(), query, chat_id=chat_id, limit=limit, around=around)

    # -- chats (chat_rows.py) -------------------------------------------------------------

    def create_chat(
        self,
        title: str = "New chat",
        model: str = DEFAULT_MODEL,
        system_prompt: str = "",
        settings: ContextSettings | None = None,
    ) -> ChatInfo:
        return chat_rows.create_chat(self.db, title, model, system_prompt, settings)

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
        source: str | None = None,
        hidden: Sequence[Hidden] = (),
        continues: str | None = None,
        created_at: float | None = None,
    ) -> ChatInfo:
        """A whole chat at once — metadata, messages (the branch shown; the others'
        messages, each after its parent; all stored in `order` when it is given, so
        versions keep their numbers) and context state — in ONE transaction: an import
        either lands completely or not at all. The branch shown is `messages`'."""
        with writing(self.db):
            chat_id = chat_rows.insert_chat(
                self.db, title, model, system_prompt, settings, created_at
            )
            if not branches:
                message_writes.insert_many(self.db, chat_id, messages)
            for parent, message in message_writes.parents_first(messages, branches, order or {}):
                message_writes.insert_many(self.db, chat_id, [message], after=parent)
            if branches and messages:
                self.db.execute(
                    "UPDATE chats SET leaf_id = ? WHERE id = ?", (messages[-1].id, chat_id)
                )
            context_rows.write_context_state(self.db, chat_id, state)
            if source is not None:  # another app's conversation: not imported twice
                self.db.execute(
                    "INSERT INTO imported_sources (source, chat_id) VALUES (?, ?)",
                    (source, chat_id),
                )
            self.db.executemany(
                "INSERT INTO hidden_messages (chat_id, seq, after_id, path, role, kind, text) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (chat_id, i, h.after, h.path, h.role, h.kind, h.text)
                    for i, h in enumerate(hidden)
                ],
            )
            if continues is not None:  # a hand-off: the chat it continues links to it
                self.db.execute(
                    "INSERT INTO handoffs (from_id, to_id, at) VALUES (?, ?, ?)",
                    (continues, chat_id, time.time()),
                )
        return self.chat(chat_id)

    def handoffs(self, chat_id: str) -> tuple[str | None, list[str]]:
        """(the chat this one continues, the chats that continue it — oldest first)."""
        before = self.db.execute(
            "SELECT from_id FROM handoffs WHERE to_id = ?", (chat_id,)
        ).fetchone()
        after = [
            r[0]
            for r in self.db.execute(
                "SELECT to_id FROM handoffs WHERE from_id = ? ORDER BY at", (chat_id,)
            )
        ]
        return (before[0] if before else None), after

    def hidden_messages(self, chat_id: str) -> list[Hidden]:
        """What an imported chat's source kept but did not show, in its order: kept with
        the chat, never shown or sent (storage/foreign)."""
        from desktop_app.storage.foreign import Hidden

        return [
            Hidden(path, role, kind, text, after)
            for after, path, role, kind, text in self.db.execute(
                "SELECT after_id, path, role, kind, text FROM hidden_messages "
                "WHERE chat_id = ? ORDER BY seq",
                (chat_id,),
            )
        ]

    def chat(self, chat_id: str) -> ChatInfo:
        return chat_rows.chat(self.db, chat_id)

    def chats(self, chat_ids: Sequence[str]) -> dict[str, ChatInfo]:
        """These chats, by id, in one query (search results name up to hundreds)."""
        return chat_rows.chats(self.db, chat_ids)

    def project_names(self) -> dict[str, str]:
        return project_names(self.db)

    def list_chats(self, *, trash: bool = False, archived: bool = False) -> list[ChatInfo]:
        return list_chats(self.db, trash=trash, archived=archived)

    def find_chat(self, ref: str) -> ChatInfo:
        """A chat by its id or a unique prefix of it."""
        return chat_rows.find_chat(self.db, ref)

    def update_chat(
        self,
        chat_id: str,
        *,
        title: str | None = None,
        model: str | None = None,
        system_prompt: str | None = None,
        settings: ContextSettings | None = None,
    ) -> ChatInfo:
        """Change the chat's name, model, system prompt or settings (not activity)."""
        return chat_rows.update_chat(
            self.db,
            chat_id,
            title=title,
            model=model,
            system_prompt=system_prompt,
            settings=settings,
        )

    def fill_in_setting(self, name: str, value: int) -> int:
        """Give every chat whose settings lack `name` this value; how many changed."""
        return chat_rows.fill_in_setting(self.db, name, value)

    def set_token_total(self, chat_id: str, tokens: int) -> None:
        chat_rows.set_token_total(self.db, chat_id, tokens)

    def set_draft(self, chat_id: str, text: str) -> None:
        chat_rows.set_draft(self.db, chat_id, text)

    def draft(self, chat_id: str) -> str:
        return chat_rows.draft(self.db, chat_id)

    def set_pinned(self, chat_id: str, pinned: bool) -> ChatInfo:
        return chat_rows.mark(self.db, chat_id, "pinned_at", pinned)

    def set_archived(self, chat_id: str, archived: bool) -> ChatInfo:
        return chat_rows.mark(self.db, chat_id, "archived_at", archived)

    def delete_chat(self, chat_id: str) -> None:
        """Move to the trash (restorable)."""
        chat_rows.delete_chat(self.db, chat_id)

    def restore_chat(self, chat_id: str) -> None:
        chat_rows.restore_chat(self.db, chat_id)

    def purge_chat(self, chat_id: str) -> None:
        """Delete a chat in the trash for good (only from the trash)."""
        chat_rows.purge_chat(self.db, chat_id)

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
        with writing(self.db):
            fork_id = chat_rows.insert_chat(
                self.db,
                title or f"{source.title} (fork)",
                source.model,
                source.system_prompt,
                source.settings,
            )
            message_writes.insert_many(
                self.db, fork_id, [replace(message, id=new_id()) for message in kept]
            )
            context_rows.save_facts(
                self.db, fork_id, [replace(f, id=new_id("fact")) for f in state.facts]
            )
        return self.chat(fork_id)

    # -- messages and branches (branch_rows.py, message_writes.py, message_rows.py) ---------

    def messages(
        self, chat_id: str, counts: dict[str, tuple[int, ...]] | None = None
    ) -> Sequence[Message]:
        """The branch shown, whole; given `counts`, the per-block token counts kept for
        its messages go there, by id, read in the same pass (`block_counts`). Without
        `counts`, read again only if the chat changed since it was last read or written
        here (`kept_transcripts`). Never change it (a `Transcript`: it is kept)."""
        writes = self.db.write_lock if isinstance(self.db, SharedConnection) else None
        # (no other thread's write half done on this connection meanwhile, nor this one's:
        # what a rolled-back write left must not be kept)
        if self.kept is None or (self.db.in_transaction and not self._at_one_moment):
            return branch_rows.recent_messages(self.db, chat_id, None, counts)
        with writes or contextlib.nullcontext():
            mark = mark_of(self.db, chat_id)  # (first: a write after it makes it stale)
            kept = self.kept.get(chat_id, mark) if counts is None else None
            if kept is not None:
                return kept  # (a `Transcript`: never changed, so not copied)
            messages = Transcript(branch_rows.recent_messages(self.db, chat_id, None, counts))
            self.kept.keep(chat_id, mark, messages)
            return messages

    def recent_messages(self, chat_id: str, limit: int | None) -> list[Message]:
        """The newest `limit` messages of the branch shown, oldest first (None: all)."""
        return branch_rows.recent_messages(self.db, chat_id, limit)

    def messages_after(self, chat_id: str, message_id: str | None) -> list[Message]:
        """The branch shown after one of its messages (all of it for None)."""
        return branch_rows.messages_after(self.db, chat_id, message_id)

    def message(self, chat_id: str, message_id: str) -> Message:
        return branch_rows.message(self.db, chat_id, message_id)

    def block_counts(self, chat_id: str) -> dict[str, tuple[int, ...]]:
        """The per-block token counts kept for this chat's messages (`message_rows`)."""
        return block_counts(self.db, chat_id)

    def keep_block_counts(self, counts: Mapping[str, Sequence[int]]) -> None:
        """Keep messages' per-block token counts (until their blocks are written again)."""
        message_writes.keep_block_counts(self.db, counts)

    def show_end(self, chat_id: str, leaf_id: str | None) -> None:
        """End the branch shown at this message (None: the newest), as it was before."""
        branch_rows.show_end(self.db, chat_id, leaf_id)

    def other_branches(self, chat_id: str) -> list[tuple[str | None, Message]]:
        """The messages of every branch but the one shown, each with its parent."""
        return branch_rows.other_branches(self.db, chat_id)

    def has_branches(self, chat_id: str) -> bool:
        """Has a message of the chat ever had a version beside it? (Most chats never
        branch: they are read as one line, without the tree.) A "yes" may be only a
        hidden reply beside a shown one: the tree says for sure."""
        return self.chat(chat_id).branched

    def tree(self, chat_id: str) -> Tree:
        """Every message's place among the chat's branches (ids only: cheap)."""
        return branch_rows.tree(self.db, chat_id)

    def show_branch(self, chat_id: str, message_id: str, *, exactly: bool = False) -> None:
        """Show the branch through `message_id` (`exactly`: ending at it)."""
        branch_rows.show_branch(self.db, chat_id, message_id, exactly=exactly)

    def append_message(self, chat_id: str, message: Message, *, beside: str | None = None) -> None:
        """Add a message at the end of the branch shown — or `beside` another, as a new
        branch, shown from now on (one transaction)."""
        marks = message_writes.append_message(self.db, chat_id, message, beside=beside)
        if beside is None:
            self._kept_wrote(chat_id, marks, appended=(message,))

    def append_messages(self, chat_id: str, messages: Iterable[Message]) -> None:
        messages = list(messages)
        marks = message_writes.append_messages(self.db, chat_id, messages)
        self._kept_wrote(chat_id, marks, appended=messages)

    def checkpoint(self, chat_id: str, message: Message, *, partial: bool = False) -> None:
        """Save a message being streamed (`partial`: not synced to the disk yet)."""
        marks, new = message_writes.checkpoint(self.db, chat_id, message, partial=partial)
        if new:
            self._kept_wrote(chat_id, marks, appended=(message,))
        else:
            self._kept_wrote(chat_id, marks, replaced=message)

    def _kept_wrote(
        self,
        chat_id: str,
        marks: message_writes.Marks,
        *,
        appended: Sequence[Message] = (),
        replaced: Message | None = None,
    ) -> None:
        """The kept transcript goes along with a write of this store's (committed)."""
        before, after = marks
        if self.kept is None:
            return
        if before is None or after is None:
            self.kept.forget(chat_id)
        else:
            self.kept.wrote(chat_id, before, after, appended=appended, replaced=replaced)

    # -- turns in progress (running_turns.py) ---------------------------------------------

    def recover(self, *, live: Iterable[str] = ()) -> list[str]:
        """At startup: repair the replies left `streaming` (not in the `live` chats);
        returns the chats touched."""
        return turns.recover(self.db, live=live)

    def turn_started(self, chat_id: str, pid: int) -> None:
        """`pid` is answering in this chat (until `turn_ended`)."""
        turns.turn_started(self.db, chat_id, pid)

    def turn_ended(self, chat_id: str, pid: int) -> None:
        turns.turn_ended(self.db, chat_id, pid)

    def running_turns(self) -> dict[str, int]:
        """Chat → the pid that marked a turn running there (some may have died since)."""
        return turns.running_turns(self.db)

    def answering_pid(self, chat_id: str) -> int | None:
        """The process that marked a turn running in this chat, if any (it may be gone)."""
        return turns.answering_pid(self.db, chat_id)

    def repairs(self, chat_id: str) -> list[str]:
        return turns.repairs(self.db, chat_id)

    # -- context state and calibration (context_rows.py) ------------------------------------

    def context_state(self, chat_id: str) -> ContextState:
        return context_rows.context_state(self.db, chat_id)

    def save_context_state(self, chat_id: str, state: ContextState) -> None:
        """Facts, summaries, exclusions and the breaker, in one transaction."""
        context_rows.save_context_state(self.db, chat_id, state)

    def load_calibration(self) -> dict[str, float]:
        return context_rows.load_calibration(self.db)

    def save_calibration(self, factors: dict[str, float]) -> None:
        context_rows.save_calibration(self.db, factors)


__all__ = ["ChatInfo", "ChatStore", "MessageStatus"]
