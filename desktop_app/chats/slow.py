"""The one shape of a chat's slow actions — a turn, a compaction preview, the server's
count of the next request. Each is made on the database thread (where it reads what it
needs), then goes through three steps:

1. `events(cancel)` on a worker thread: it talks to the network and yields what comes;
   then `release_thread()` there, which closes the connections it opened on that thread;
2. `record(event)` back on the database thread, for each event in order, before anything
   shows it (a turn's words are on disk before they are on screen);
3. `finish()` there once it has ended, however it ended: what the action changed
   (`Changes`).

The window runs them on a thread of their own or a queue (`ui/workers.py`); the command
line and tests run them here, in one go (`run_here`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol, TypeVar

from desktop_app.chats.changes import Changes
from desktop_app.core.cancel import CancelToken

E = TypeVar("E")


class SlowAction(Protocol[E]):
    def events(self, cancel: CancelToken) -> Iterator[E]: ...

    def release_thread(self) -> None: ...

    def record(self, event: E) -> None: ...

    def finish(self) -> Changes: ...


def run_here(
    action: SlowAction[E],
    cancel: CancelToken | None = None,
    on_event: Callable[[E], None] | None = None,
) -> Changes:
    """All the steps on this thread, each event recorded before `on_event` sees it."""
    try:
        for event in action.events(cancel or CancelToken()):
            action.record(event)
            if on_event is not None:
                on_event(event)
    finally:
        try:
            changes = action.finish()
        finally:
            action.release_thread()
    return changes
