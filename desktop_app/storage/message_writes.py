"""Writing messages: appending them (at the end of the branch shown, after a given
message, or beside one as a new branch), checkpointing a reply being streamed, each
with its blocks (their raw API JSON, so thinking signatures survive byte for byte) and
their search entries; and keeping the per-block token counts beside them.

Separate from `store.py` (whose `ChatStore` delegates here) because this is the one
place that writes message and block rows — and so keeps the branch bookkeeping
(`chats.branched`, `leaf_id`), the kept message count (`shown_count`) and the search
index in step with them; reading them back is `message_rows.py`'s and
`branch_rows.py`'s.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence

from desktop_app.core.blocks import block_to_api, block_type
from desktop_app.core.errors import ContextDeskError, ErrorKind
from desktop_app.core.messages import Message
from desktop_app.storage.after_reply import sync_soon
from desktop_app.storage.branch_rows import tree
from desktop_app.storage.chat_rows import touch, writing
from desktop_app.storage.db import unsynced
from desktop_app.storage.errors import ChatNotFound
from desktop_app.storage.kept_transcripts import Mark, mark_of
from desktop_app.storage.search import index_blocks, unindex_message


class _End:
    """Where a message is added when nothing else is said: the end of the branch shown."""


END = _End()


Marks = tuple[Mark | None, Mark | None]  # the chat's, before and after a write


def append_message(
    db: sqlite3.Connection, chat_id: str, message: Message, *, beside: str | None = None
) -> Marks:
    """Add a message at the end of the branch shown (one transaction) — or, `beside`
    another, as its alternative: a new branch, shown from now on."""
    with writing(db):
        before = mark_of(db, chat_id)
        if beside is None:
            insert_many(db, chat_id, [message])
            return before, mark_of(db, chat_id)
        found = tree(db, chat_id)
        if beside not in found:
            raise ContextDeskError(
                "Message not found", "It is not in this chat.", kind=ErrorKind.NOT_FOUND
            )
        insert_many(db, chat_id, [message], after=found.parent[beside])
        return before, mark_of(db, chat_id)


def append_messages(db: sqlite3.Connection, chat_id: str, messages: Iterable[Message]) -> Marks:
    with writing(db):
        before = mark_of(db, chat_id)
        insert_many(db, chat_id, list(messages))
        return before, mark_of(db, chat_id)


def checkpoint(
    db: sqlite3.Connection, chat_id: str, message: Message, *, partial: bool = False
) -> tuple[Marks, bool]:
    """Save a message being streamed (insert or replace its blocks and status). The
    caller throttles this to about once a second. None is synced to the disk before
    this returns (the sync would hold the window up to ~35 ms, and Stop with it): WAL
    keeps the database whole either way. A `partial` one (words still coming) is not
    searchable yet — indexing the whole reply again every second made the index merge
    its segments on the window's thread — and is synced with the next synced write, so
    a power cut could cost that second of the reply. The finished message is indexed
    and synced at once on a thread of its own (`sync_soon`). Returns the chat's marks
    and whether the message was new."""
    with unsynced(db):
        written = _checkpoint(db, chat_id, message, indexed=not partial)
    if not partial:
        sync_soon(db)
    return written


def _checkpoint(
    db: sqlite3.Connection, chat_id: str, message: Message, *, indexed: bool
) -> tuple[Marks, bool]:
    with writing(db):
        before = mark_of(db, chat_id)
        exists = db.execute("SELECT 1 FROM messages WHERE id = ?", (message.id,)).fetchone()
        if exists is None:
            insert_many(db, chat_id, [message], indexed=indexed)
            return (before, mark_of(db, chat_id)), True
        db.execute(
            "UPDATE messages SET status = ?, stop_reason = ?, usage = ?, model = ?, bound_to = ?, "
            "created_at = ?, revision = ? WHERE id = ?",
            (  # (all a read gives back: it must equal the message written)
                message.status.value,
                message.stop_reason,
                _usage_json(message),
                message.model,
                message.bound_to,
                message.created_at,
                message.revision,
                message.id,
            ),
        )
        unindex_message(db, message.id, chat_id)  # (a partial one was never indexed)
        db.execute("DELETE FROM blocks WHERE message_id = ?", (message.id,))
        _insert_blocks(db, chat_id, [message], indexed=indexed)
        touch(db, chat_id)
        return (before, mark_of(db, chat_id)), False


def keep_block_counts(db: sqlite3.Connection, counts: Mapping[str, Sequence[int]]) -> None:
    """Keep messages' per-block token counts (until their blocks are written again);
    a message deleted meanwhile is passed over. Each write of a few thousand is one
    statement over a JSON object: SQLite does the rows without the GIL, so a long
    chat's first keeping leaves the window its time (a row a statement handed the GIL
    back and forth 200,000 times)."""
    found = list(counts.items())
    for start in range(0, len(found), 5_000):
        batch = json.dumps(dict(found[start : start + 5_000]))
        with writing(db):
            db.execute(
                "INSERT OR REPLACE INTO block_counts (message_id, counts) "
                "SELECT j.key, j.value FROM json_each(?) j "
                "WHERE EXISTS (SELECT 1 FROM messages WHERE id = j.key)",
                (batch,),
            )


def insert_many(
    db: sqlite3.Connection,
    chat_id: str,
    messages: Sequence[Message],
    *,
    after: str | _End | None = END,
    indexed: bool = True,
) -> None:
    """Append messages, one after another, to the branch shown (or `after` a given
    message: None starts a first message): one position lookup and batched inserts,
    so a 10,000-message import costs a few statements, not 30,000. They are the
    newest messages, so the chat shows their branch. (Inside the caller's `writing`.)
    Not `indexed`: only a streaming reply's checkpoint (`checkpoint`)."""
    if not messages:
        return
    first, newest = db.execute(
        "SELECT COALESCE(MAX(position), -1) + 1, "
        "(SELECT id FROM messages WHERE chat_id = ?1 AND NOT deleted "
        "ORDER BY position DESC LIMIT 1) "
        "FROM messages WHERE chat_id = ?1",
        (chat_id,),
    ).fetchone()
    shown = db.execute("SELECT leaf_id, shown_count FROM chats WHERE id = ?", (chat_id,)).fetchone()
    if shown is None:
        raise ChatNotFound(chat_id)
    shown_end, count = shown[0] or newest, shown[1]
    if isinstance(after, _End):
        after = shown_end
    parents = [after, *(m.id for m in messages[:-1])]
    beside = db.execute(  # a message after `after` already: now there are two
        "SELECT 1 FROM messages WHERE chat_id = ? AND parent_id IS ? LIMIT 1", (chat_id, after)
    ).fetchone()
    if beside is not None:
        db.execute("UPDATE chats SET branched = 1 WHERE id = ?", (chat_id,))
    db.executemany(
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
    _insert_blocks(db, chat_id, messages, indexed=indexed)
    db.execute(
        "UPDATE chats SET updated_at = ?, leaf_id = NULL WHERE id = ?", (time.time(), chat_id)
    )
    # The kept count (schema v12): the branch shown goes on, so add to it; else
    # forget it (counted again before the write commits: `chat_rows.writing`)
    if after == shown_end and count is not None:
        count += sum(not m.is_tool_results for m in messages)
    else:
        count = None
    db.execute("UPDATE chats SET shown_count = ? WHERE id = ?", (count, chat_id))


def _insert_blocks(
    db: sqlite3.Connection, chat_id: str, messages: Sequence[Message], *, indexed: bool = True
) -> None:
    """Every block of these messages, and its entry in the search index (one home
    for both: no finished message is stored unindexed; a streaming reply's words are
    indexed when it ends, or when start-up repairs it: `running_turns.recover`)."""
    blocks = [
        (m.id, j, block_type(b), block_to_api(b)) for m in messages for j, b in enumerate(m.blocks)
    ]
    db.executemany(
        "INSERT INTO blocks (message_id, position, type, raw) VALUES (?, ?, ?, ?)",
        [(message_id, j, kind, _block_json(api)) for message_id, j, kind, api in blocks],
    )
    if indexed:
        index_blocks(db, ((message_id, j, chat_id, api) for message_id, j, _, api in blocks))
    db.execute(  # new blocks: their messages' kept token counts are not theirs
        "DELETE FROM block_counts WHERE message_id IN (SELECT value FROM json_each(?))",
        (json.dumps([m.id for m in messages]),),
    )


def parents_first(
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


# One encoder for every block stored: `json.dumps` with options builds a new one per call,
# a third of the encoding time of a 10,000-message import.
_block_json = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode


def _usage_json(message: Message) -> str | None:
    return json.dumps(message.usage.to_api()) if message.usage else None
