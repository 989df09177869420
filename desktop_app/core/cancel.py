"""A cancel token shared by the GUI thread (which cancels) and the worker (which obeys).

Blocking work registers a callback that unblocks it (the backend cancels its asyncio task,
the tool runner kills its process group), so a Stop takes effect at once, not at the next
chunk of data.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from desktop_app.core.errors import Cancelled

log = logging.getLogger(__name__)


class CancelToken:
    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self) -> None:
        """Cancel, and run every registered callback once (on the calling thread)."""
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            try:
                callback()
            except Exception:  # a failing unblocker must not stop the others
                log.exception("cancel callback failed")

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run `callback` when cancelled (now, if already). Returns an unregister function."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return lambda: self._remove(callback)
        callback()
        return lambda: None

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            raise Cancelled()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until cancelled or `timeout` passes; True if cancelled."""
        return self._event.wait(timeout)

    def _remove(self, callback: Callable[[], None]) -> None:
        with self._lock:
            if callback in self._callbacks:
                self._callbacks.remove(callback)
