"""A preview that is a slow action (chats/slow.py) — compaction's summary, a hand-off's
— run on a worker thread: its one event recorded, its `finish` on the window's thread
(the requests it sent go to the ledger, whatever came of them), then the preview or why
there is none. One home for what both dialogs did alike."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Signal, Slot

from desktop_app.chats import SlowAction
from desktop_app.ui.workers import ActionWorker

if TYPE_CHECKING:
    from desktop_app.core.errors import ErrorInfo


class Previewing(SlowAction[Any], Protocol):
    """A slow action whose one event is its preview (`CompactionPreviewing`,
    `HandoffPreviewing`)."""

    preview: Any


class SlowPreview(QObject):
    """Signals: ready(object) — the preview; failed(object) — an `ErrorInfo`, or None when
    no preview came; ended() — before either, once the worker is done."""

    ready = Signal(object)
    failed = Signal(object)
    ended = Signal()

    def __init__(self, name: str, parent: QObject) -> None:
        super().__init__(parent)
        self.name = name
        self.worker: ActionWorker | None = None
        self._action: Previewing | None = None
        self._error: ErrorInfo | None = None

    @property
    def running(self) -> bool:
        return self.worker is not None

    def start(self, action: Previewing) -> None:
        self._action, self._error = action, None
        self.worker = ActionWorker(action, self.name)
        self.worker.event_ready.connect(self._on_worker_event_ready)
        self.worker.crashed.connect(self._on_worker_crashed)
        self.worker.done.connect(self._on_worker_done)
        self.worker.start()

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel.cancel()

    def stop(self) -> None:
        """Cancel, and wait for the worker (the dialog is closing)."""
        if self.worker is not None:
            self.worker.cancel.cancel()
            self.worker.wait()

    @Slot(object)
    def _on_worker_event_ready(self, preview: object) -> None:
        if self._action is not None:
            self._action.record(preview)

    @Slot(object)
    def _on_worker_crashed(self, error: ErrorInfo) -> None:
        self._error = error

    @Slot()
    def _on_worker_done(self) -> None:
        if self.worker is not None:
            self.worker.wait()  # (its connections closed: the dialog may go at once)
            self.worker.deleteLater()
        action, self.worker, self._action = self._action, None, None
        self.ended.emit()
        if action is None:
            return
        action.finish()
        if self._error is not None or action.preview is None:
            self.failed.emit(self._error)
        else:
            self.ready.emit(action.preview)
