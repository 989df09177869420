"""What a finished reply leaves to a thread of its own, so the window does not wait for it
(`message_writes.checkpoint` starts it): making the writes durable, and merging the search
index's newest segments.

Separate from `db.py` (connections, migrations) because it is the one place that works
on the database behind the window's back, on a connection of its own.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

from desktop_app.storage import search

log = logging.getLogger(__name__)


def sync_soon(db: sqlite3.Connection) -> threading.Thread | None:
    """Make every write committed so far durable without waiting for the disk here: a
    connection of its own, on a thread of its own, checkpoints the WAL — syncing it
    first, as synchronous=FULL does at each commit, then copying it into the database
    file and syncing that. For the end of a reply (`message_writes.checkpoint`): the turn
    ends when the reply is written, not when the disk is done (5–35 ms, more under load,
    on the window's thread), and the WAL is emptied off the window's thread too (SQLite
    empties it at whichever commit passes 1,000 pages: once it was Stop's). The search
    index's new segments are merged there first (`search.merge_newest`). Returns the
    thread (tests join it); None for a database in memory."""
    row = db.execute("PRAGMA database_list").fetchone()
    if not row or not row[2]:
        return None
    syncing = threading.Thread(
        target=_after_reply, args=(row[2],), name="contextdesk-sync", daemon=True
    )
    syncing.start()
    return syncing


def _after_reply(path: str) -> None:
    try:
        # Read-write, never create: a file gone meanwhile is not made again, empty.
        own = sqlite3.connect(
            f"{Path(path).as_uri()}?mode=rw", uri=True, timeout=10, isolation_level=None
        )
        try:
            search.merge_newest(own)
            own.execute("PRAGMA wal_checkpoint(PASSIVE)")  # never waits for readers
        finally:
            own.close()
    except sqlite3.Error as exc:  # the next synced write or checkpoint does it instead
        log.warning("could not sync %s: %s", path, exc)
