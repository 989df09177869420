"""What a finished reply leaves to a thread of its own, so the window never waits for it
(`message_writes.checkpoint` starts it): making the writes durable, and merging the
search index's segments, a few pages at a time.

Apart from `db.py` (connections, migrations) because it is the one place that works on
the database behind the window's back, on a connection of its own.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from pathlib import Path

from desktop_app.storage import search

log = logging.getLogger(__name__)

# Between two steps of a merge the lock is left free this long, so a write that found it
# taken gets it: SQLite's busy handler retries after 1, 2, 5, 10, 15, 20, 25, 25, 25 ms
# (`sqliteDefaultBusyCallback`, sqlite/src/main.c), so a write that has waited less than
# 0.13 s tries again within 25 ms of the step's end.
PAUSE_BETWEEN_STEPS_S = 0.03
MOST_STEPS = 2_000  # ≈ 32,000 pages (128 MB): what is left waits for the next reply

# One merge of a database at a time in this process: a reply's thread that finds one
# under way skips it (its segments wait for the next reply).
_merging: dict[str, threading.Lock] = {}


def sync_soon(db: sqlite3.Connection) -> threading.Thread | None:
    """Make every write committed so far durable and merge the search index, without
    waiting here: a connection of its own, on a thread of its own, checkpoints the WAL —
    syncing it first, as synchronous=FULL does at each commit, then copying it into the
    database file and syncing that — then merges the index's segments (writes only add
    them: `search.merge_apart`). For the end of a reply: the turn ends when the reply
    is written, not when the disk is done (5–35 ms, more under load, on the window's
    thread), and the WAL is emptied off the window's thread too (SQLite empties it at
    whichever commit passes 1,000 pages: once it was Stop's). Returns the thread (tests
    join it); None for a database in memory."""
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
        # Autocommit: each merge step is a transaction of its own, the lock free between.
        own = sqlite3.connect(
            f"{Path(path).as_uri()}?mode=rw", uri=True, timeout=10, isolation_level=None
        )
        try:
            # Durable first (a command-line process may end before a merge does), then
            # merged, and the merge's own writes checkpointed too.
            own.execute("PRAGMA wal_checkpoint(PASSIVE)")  # never waits for readers
            # A merge step lost to a power cut costs nothing: its commits need not wait
            # for the disk while a write of the window's waits for them.
            own.execute("PRAGMA synchronous = NORMAL")
            merging = _merging.setdefault(path, threading.Lock())
            if merging.acquire(blocking=False):
                try:
                    if _merge(own):
                        own.execute("PRAGMA wal_checkpoint(PASSIVE)")
                finally:
                    merging.release()
        finally:
            own.close()
    except sqlite3.Error as exc:  # the next reply's thread does it instead
        log.warning("could not merge or sync %s: %s", path, exc)


def _merge(db: sqlite3.Connection) -> bool:
    """True if anything was merged."""
    for step in range(MOST_STEPS):
        if not search.merge_a_little(db):
            return step > 0
        time.sleep(PAUSE_BETWEEN_STEPS_S)
    return True
