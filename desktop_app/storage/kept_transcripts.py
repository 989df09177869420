"""The transcripts read lately, kept with the mark of the database they were read at, so
that reading a chat again costs one row while nothing changed it: a Send in a
100,000-message chat read its whole history from SQLite twice, on the window's thread
(3.7 s). The writes of messages through a store that shares the keeper (a turn's
question, its replies, their checkpoints) bring the kept transcript along.

A mark is `(leaf_id, changes)` of the chat's row: the branch shown, and a counter that
the database's own triggers raise on every write of a message, of its blocks' content
and of the branch shown (schema v19, `db._v19`) — by whatever program or code path made
it. The counter only grows (a rolled-back write is never seen by others, nor kept), so
a mark read before a transcript is never newer than it. So a kept transcript is
only ever used while it is what a read would return; any write not followed here (an
edit's new branch, another program, a migration) makes the next read a real one.
A kept transcript is never changed in place: it is a `Transcript`, replaced whole by
one that names it (so a plan after a write finds at once how far it goes on from the
one before).
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import NamedTuple

from desktop_app.core.messages import Message
from desktop_app.core.transcript import Transcript


class Mark(NamedTuple):
    leaf_id: str | None
    changes: int


def mark_of(db: sqlite3.Connection, chat_id: str) -> Mark | None:
    """The chat's mark now (None: no such chat)."""
    row = db.execute("SELECT leaf_id, changes FROM chats WHERE id = ?", (chat_id,)).fetchone()
    return None if row is None else Mark(row[0], row[1])


class KeptTranscripts:
    """The last chat's transcript read or written, with its mark (any thread): only
    `LIMIT`, as a chat the window left must not keep its messages alive (kept four, a
    9,300-message chat opened before held ~17 MB). Two panes answering in turn read
    again at a Send, as before."""

    LIMIT = 1

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[str, tuple[Mark, Transcript]] = OrderedDict()

    def get(self, chat_id: str, mark: Mark | None) -> Transcript | None:
        """The chat's transcript if it was kept at this mark, else None."""
        with self._lock:
            kept = self._kept.get(chat_id)
            if kept is None or mark is None or kept[0] != mark:
                return None
            self._kept.move_to_end(chat_id)
            return kept[1]

    def keep(self, chat_id: str, mark: Mark | None, messages: Sequence[Message]) -> None:
        """The chat's transcript as read at `mark` (read after the mark, in one read
        transaction or on the one connection that writes: never older than its mark)."""
        if mark is None:
            return
        with self._lock:
            kept = self._kept.get(chat_id)
            if kept is not None and kept[0].changes > mark.changes:
                return  # (a reader's older moment: what is kept is newer)
            kept_now = messages if isinstance(messages, Transcript) else Transcript(messages)
            self._kept[chat_id] = (mark, kept_now)
            self._kept.move_to_end(chat_id)
            while len(self._kept) > self.LIMIT:
                self._kept.popitem(last=False)

    def wrote(
        self,
        chat_id: str,
        before: Mark,
        after: Mark,
        *,
        appended: Sequence[Message] = (),
        replaced: Message | None = None,
    ) -> None:
        """One transaction found the chat at `before` and left it at `after`, having
        `appended` messages at the end of the branch shown or `replaced` the last one
        (a reply's checkpoint). Call it once the transaction committed: a rolled-back
        one must leave nothing here."""
        with self._lock:
            kept = self._kept.get(chat_id)
            if kept is None:
                return
            mark, transcript = kept
            if mark != before or (
                replaced is not None and (not transcript or transcript[-1].id != replaced.id)
            ):
                del self._kept[chat_id]  # something else wrote first: read again next time
                return
            if replaced is not None:  # (one copy: the reply replaced, and what came after it)
                transcript = transcript.extended((replaced, *appended), after=len(transcript) - 1)
            elif appended:
                transcript = transcript.extended(appended)
            self._kept[chat_id] = (after, transcript)

    def forget(self, chat_id: str) -> None:
        with self._lock:
            self._kept.pop(chat_id, None)
