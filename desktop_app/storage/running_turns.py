"""Turns in progress and what a stopped process left behind: the markers saying which
process is answering in which chat (`running_turns`), and the repair at startup of
replies left `streaming` (`recover`, recorded in `repairs`).

Separate from `store.py` (whose `ChatStore` delegates here) because this is about
processes rather than chats: the window and the command line share one database, and
each must know whether a `streaming` row is another live process's reply or a crashed
one's, before it repairs anything.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable

from desktop_app.core.blocks import ToolResultBlock
from desktop_app.core.messages import Message
from desktop_app.storage.branch_rows import recent_messages
from desktop_app.storage.chat_rows import writing
from desktop_app.storage.db import unsynced
from desktop_app.storage.message_writes import insert_many
from desktop_app.storage.search import index_blocks


def turn_started(db: sqlite3.Connection, chat_id: str, pid: int) -> None:
    """`pid` is answering in this chat (until `turn_ended`)."""
    with writing(db):
        db.execute(
            "INSERT OR REPLACE INTO running_turns (chat_id, pid, started_at) VALUES (?, ?, ?)",
            (chat_id, pid, time.time()),
        )


def turn_ended(db: sqlite3.Connection, chat_id: str, pid: int) -> None:
    """Not synced (`unsynced`): after a power cut, a turn still marked is one whose
    process is gone, and start-up repairs it."""
    with unsynced(db), writing(db):
        db.execute("DELETE FROM running_turns WHERE chat_id = ? AND pid = ?", (chat_id, pid))


def running_turns(db: sqlite3.Connection) -> dict[str, int]:
    """Chat → the pid that marked a turn running there (some may have died since)."""
    return {r["chat_id"]: int(r["pid"]) for r in db.execute("SELECT * FROM running_turns")}


def answering_pid(db: sqlite3.Connection, chat_id: str) -> int | None:
    """The process that marked a turn running in this chat, if any (it may be gone)."""
    row = db.execute("SELECT pid FROM running_turns WHERE chat_id = ?", (chat_id,)).fetchone()
    return int(row["pid"]) if row is not None else None


def recover(db: sqlite3.Connection, *, live: Iterable[str] = ()) -> list[str]:
    """At startup: every `streaming` message becomes `interrupted`, and any tool call
    left without a result gets an interrupted one — except in the `live` chats, whose
    turns another process is running right now. Returns the chats touched; each
    repair is recorded in the `repairs` table."""
    skip = set(live)
    chats = [
        r["chat_id"]
        for r in db.execute("SELECT DISTINCT chat_id FROM messages WHERE status = 'streaming'")
        if r["chat_id"] not in skip
    ]
    if chats:  # rare: the repair module (and its imports) is not loaded at every start
        from desktop_app.core.history import unanswered_calls
        from desktop_app.core.repair import INTERRUPTED_RESULT
    for chat_id in chats:
        with writing(db):
            index_blocks(  # its words were not searchable while they came (`checkpoint`)
                db,
                (
                    (r[0], r[1], chat_id, json.loads(r[2]))
                    for r in db.execute(
                        "SELECT b.message_id, b.position, b.raw FROM blocks b "
                        "JOIN messages m ON m.id = b.message_id "
                        "WHERE m.chat_id = ? AND m.status = 'streaming' AND NOT EXISTS ("
                        "SELECT 1 FROM search_keys k "  # (earlier versions indexed every checkpoint)
                        "WHERE k.message_id = b.message_id AND k.position = b.position)",
                        (chat_id,),
                    ).fetchall()
                ),
            )
            db.execute(
                "UPDATE messages SET status = 'interrupted' WHERE chat_id = ? AND status = 'streaming'",
                (chat_id,),
            )
            # A reply cut before its first block says nothing; hide it (the row stays).
            db.execute(
                "UPDATE messages SET deleted = 1 WHERE chat_id = ? AND status = 'interrupted' "
                "AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.message_id = messages.id)",
                (chat_id,),
            )
        history = recent_messages(db, chat_id, None)
        open_calls = unanswered_calls(history)
        report = ["a reply that was being written when ContextDesk stopped is marked interrupted"]
        with writing(db):
            if open_calls and history and history[-1].role == "assistant":
                results = tuple(
                    ToolResultBlock(c.id, INTERRUPTED_RESULT.format(name=c.name), is_error=True)
                    for c in open_calls
                )
                insert_many(db, chat_id, [Message(role="user", blocks=results)])
                report.append(f"added interrupted results for {len(open_calls)} tool call(s)")
            db.execute(
                "INSERT INTO repairs (chat_id, at, report) VALUES (?, ?, ?)",
                (chat_id, time.time(), "; ".join(report)),
            )
    return chats


def repairs(db: sqlite3.Connection, chat_id: str) -> list[str]:
    return [
        r["report"]
        for r in db.execute("SELECT report FROM repairs WHERE chat_id = ? ORDER BY at", (chat_id,))
    ]
