"""Work that must not run on the GUI thread, and the way its results come back.

- `TurnWorker` runs one turn's loop (`Turn.events`) on its own `QThread` and forwards
  every event as a signal; the GUI thread persists them (it owns the database
  connection) and updates the model. The worker never touches a widget, a model or the
  database.
- `BackgroundWorker` is one long-lived thread for planning and other short jobs (loading
  the token encoding, projecting a long chat): jobs are keyed, and a newer job for a key
  replaces one still waiting, so typing never queues up stale plans.
- (The loop's `Approver`, which asks the GUI thread and waits: `ui/conversation/approval_card.py`.)
"""

from __future__ import annotations

import logging
import threading
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QThread, Signal, SignalInstance, Slot

from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import Cancelled, ContextDeskError, ErrorInfo, ErrorKind

if TYPE_CHECKING:  # the loop's events load with the first chat
    from desktop_app.core.events import LoopEvent

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


class TurnWorker(_ThreadWorker):
    """Iterates one turn's events on a worker thread.

    Signals:
        event_ready(object): one `LoopEvent`, in order.
        crashed(object): an `ErrorInfo` — the loop raised, which it never should.
        done(): the loop has ended (after its `TurnFinished`, or after `crashed`); the
            thread then closes its connections and ends (`thread_finished`).
    """

    event_ready = Signal(object)
    crashed = Signal(object)
    done = Signal()

    def __init__(
        self,
        events: Callable[[CancelToken], Iterator[LoopEvent]],
        cancel: CancelToken,
        on_exit: Callable[[], None] = lambda: None,
    ) -> None:
        super().__init__("turn", cancel, on_exit)
        self._events = events

    @Slot()
    def run(self) -> None:
        try:
            for event in self._events(self.cancel):
                self.event_ready.emit(event)
        except Exception as exc:  # never silent: the GUI shows it as an error banner
            log.exception("the turn loop raised")
            self.crashed.emit(unexpected(exc))
        finally:
            self.done.emit()  # the turn is over for the user now; closing comes after
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
    job: _Job | None = None  # a background job's callbacks; None for a CallWorker


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
        if self._stopped or job is None:
            return
        if outcome.error is None:
            job.on_done(outcome.result)
        elif job.on_error is not None:
            job.on_error(outcome.error)


class CallWorker(_ThreadWorker):
    """Runs one cancellable call (a compaction preview asks the model) on its own thread.

    Signals:
        finished(object): an `Outcome` with the call's result or its error.
    """

    finished = Signal(object)

    def __init__(self, call: Callable[[CancelToken], Any], on_exit: Callable[[], None]) -> None:
        super().__init__("call", CancelToken(), on_exit)
        self._call = call

    @Slot()
    def run(self) -> None:
        try:
            outcome = Outcome(self._call(self.cancel))
        except Cancelled:
            outcome = Outcome(
                error=ErrorInfo("Cancelled", "Nothing was changed.", kind=ErrorKind.CANCELLED)
            )
        except Exception as exc:
            outcome = Outcome(error=unexpected(exc))
        self._release()  # before the answer: the dialog waits for this thread to end
        self.finished.emit(outcome)
