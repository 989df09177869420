"""Work that must not run on the GUI thread, and the way its results come back.

- `ActionWorker` runs one of a chat's slow actions (chats/slow.py: a turn, a compaction
  preview) on its own `QThread` and forwards every event as a signal; the GUI thread
  records them (it owns the database connection) and updates the model. The worker never
  touches a widget, a model or the database.
- `BackgroundWorker` is one long-lived thread for planning and other short jobs (loading
  the token encoding, projecting a long chat): jobs are keyed, and a newer job for a key
  replaces one still waiting, so typing never queues up stale plans. It runs slow
  actions too (`submit_action`: the server's count of the next request).
- (The loop's `Approver`, which asks the GUI thread and waits: `ui/conversation/approval_card.py`.)
"""

from __future__ import annotations

import functools
import logging
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from types import MethodType
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QThread, Signal, SignalInstance, Slot
from shiboken6 import Shiboken

from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import Cancelled, ContextDeskError, ErrorInfo, ErrorKind

if TYPE_CHECKING:
    from desktop_app.chats import Changes, SlowAction

log = logging.getLogger(__name__)


def unexpected(exc: BaseException) -> ErrorInfo:
    """A bug, not a condition we planned for: still shown, with the traceback on demand."""
    if isinstance(exc, ContextDeskError):
        return exc.info
    details = "".join(traceback.format_exception(exc))
    return ErrorInfo(
        "Something went wrong", f"{type(exc).__name__}: {exc}", False, details, ErrorKind.BUG
    )


class _ThreadWorker(QObject):
    """A QObject living on a thread of its own: the thread starts it, `run` does the work
    (subclasses), then `_release` closes what the work opened on that thread and the
    thread ends (`thread_finished`)."""

    def __init__(self, name: str, cancel: CancelToken, on_exit: Callable[[], None]) -> None:
        super().__init__()
        self.cancel = cancel
        self._on_exit = on_exit  # runs on the worker thread: closes what it opened there
        self._thread = QThread()
        self._thread.setObjectName(name)
        self.moveToThread(self._thread)
        self._thread.started.connect(self.run)

    def run(self) -> None:
        raise NotImplementedError

    def start(self) -> None:
        self._thread.start()

    def _release(self) -> None:
        try:
            self._on_exit()  # closing the HTTP client can take a few hundred ms
        except Exception:  # closing sockets failed: nothing the user can act on
            log.exception("releasing the %s thread's connections failed", self._thread.objectName())
        self._thread.quit()

    @property
    def thread_finished(self) -> SignalInstance:
        """Emitted once the thread has released its connections and ended."""
        return self._thread.finished

    def wait(self, timeout_ms: int = 5000) -> bool:
        return bool(self._thread.wait(timeout_ms))


class ActionWorker(_ThreadWorker):
    """Iterates one slow action's events (chats/slow.py) on a worker thread.

    Signals:
        event_ready(object): one event, in order (record it, then show it).
        crashed(object): an `ErrorInfo` — the action raised (cancelled, or a failure a
            turn's loop never lets out).
        done(): the events have ended (after the last, or after `crashed`): call the
            action's `finish` now. The thread then closes its connections and ends
            (`thread_finished`).
    """

    event_ready = Signal(object)
    crashed = Signal(object)
    done = Signal()

    def __init__(self, action: SlowAction[Any], name: str) -> None:
        super().__init__(name, CancelToken(), action.release_thread)
        self._action = action

    @Slot()
    def run(self) -> None:
        try:
            for event in self._action.events(self.cancel):
                self.event_ready.emit(event)
        except Cancelled:
            self.crashed.emit(
                ErrorInfo("Cancelled", "Nothing was changed.", kind=ErrorKind.CANCELLED)
            )
        except Exception as exc:  # never silent: the GUI shows it as an error banner
            log.exception("the %s worker raised", self._thread.objectName())
            self.crashed.emit(unexpected(exc))
        finally:
            self.done.emit()  # over for the user now; closing the connections comes after
            self._release()


@dataclass
class _Job:
    key: str
    run: Callable[[], Any]
    on_done: Callable[[Any], None]
    on_error: Callable[[ErrorInfo], None] | None = None


@dataclass
class Outcome:
    """A finished call: its result, or the error it ended with (one signal argument)."""

    result: Any = None
    error: ErrorInfo | None = None
    job: _Job | None = None  # the background job's callbacks


class _JobRunner(QObject):
    """Lives on the background thread; drains the waiting jobs in order."""

    finished = Signal(object)  # an Outcome

    def __init__(self, owner: BackgroundWorker) -> None:
        super().__init__()
        self._owner = owner

    @Slot()
    def drain(self) -> None:
        while (job := self._owner.take()) is not None:
            try:
                self.finished.emit(Outcome(job.run(), job=job))
            except Exception as exc:
                log.exception("background job %s failed", job.key)
                self.finished.emit(Outcome(error=unexpected(exc), job=job))


class BackgroundWorker(QObject):
    """One thread for short jobs; results come back to the GUI thread as callbacks.

    Signals:
        wake(): internal — there is work waiting.
    """

    wake = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lock = threading.Lock()
        self._waiting: dict[str, _Job] = {}
        self._stopped = False
        self._thread = QThread()
        self._thread.setObjectName("background")
        self._runner = _JobRunner(self)
        self._runner.moveToThread(self._thread)
        self.wake.connect(self._runner.drain)
        self._runner.finished.connect(self._on_runner_finished)
        self._thread.start()

    def submit(
        self,
        key: str,
        run: Callable[[], Any],
        on_done: Callable[[Any], None],
        on_error: Callable[[ErrorInfo], None] | None = None,
    ) -> None:
        """Run `run()` off the GUI thread, then `on_done(result)` on it. A job still
        waiting under the same key is replaced (only the newest answer matters)."""
        with self._lock:
            self._waiting.pop(key, None)
            self._waiting[key] = _Job(key, run, on_done, on_error)
        self.wake.emit()

    def submit_action(
        self,
        key: str,
        action: SlowAction[Any],
        on_done: Callable[[Changes], None],
        on_error: Callable[[ErrorInfo], None],
    ) -> None:
        """Run a slow action's events off the GUI thread (then release the thread's
        connections there); record them and finish it back on the GUI thread, then
        `on_done(changes)`. Keyed as `submit`: a waiting one is replaced."""

        def run() -> tuple[list[Any], ErrorInfo | None]:
            events: list[Any] = []
            try:
                events.extend(action.events(CancelToken()))
            except Exception as exc:  # finished all the same, on the GUI thread
                return events, unexpected(exc)
            finally:
                action.release_thread()
            return events, None

        def ended(outcome: tuple[list[Any], ErrorInfo | None]) -> None:
            events, error = outcome
            try:
                for event in events:
                    action.record(event)
                changes = action.finish()  # (what it did is kept, whoever asked is gone)
            except ContextDeskError as exc:
                error = error or exc.info
            if _gone(on_done):
                return
            if error is not None:
                on_error(error)
            else:
                on_done(changes)

        self.submit(key, run, ended, on_error)

    def take(self) -> _Job | None:
        with self._lock:
            if not self._waiting:
                return None
            key = next(iter(self._waiting))
            return self._waiting.pop(key)

    def idle(self) -> bool:
        with self._lock:
            return not self._waiting

    def stop(self) -> None:
        """Drop waiting jobs and end the thread; answers still in flight are ignored (what
        they would update, such as the database connection, may be closing too)."""
        self._stopped = True
        with self._lock:
            self._waiting.clear()
        self._thread.quit()
        self._thread.wait(10_000)

    @Slot(object)
    def _on_runner_finished(self, outcome: Outcome) -> None:
        job = outcome.job
        if self._stopped or job is None or _gone(job.on_done):
            return
        if outcome.error is None:
            job.on_done(outcome.result)
        elif job.on_error is not None:
            job.on_error(outcome.error)


def _gone(callback: Callable[..., object]) -> bool:
    """The callback is a method of a Qt object deleted since (the session of a chat whose
    pane was closed while its plan ran): nobody is left to tell."""
    while isinstance(callback, functools.partial):
        callback = callback.func
    owner = callback.__self__ if isinstance(callback, MethodType) else None
    return isinstance(owner, QObject) and not Shiboken.isValid(owner)
