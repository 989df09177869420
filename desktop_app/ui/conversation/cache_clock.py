"""A chat's prompt cache, counting down: the chat bar and the context panel both read it.

It holds the `CacheOutlook` the last plan brought (chats/costs.py) and, while the cache
is warm, ticks once a second; at the expiry it turns cold by itself — the next turn's
input then costs what it would cold (the outlook knows both), so nothing is planned
again for it. Timed by the engine's clock (a test's own in tests).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from desktop_app import said

if TYPE_CHECKING:
    from desktop_app.config.prices import CacheOutlook

TICK_MS = 1000


class CacheClock(QObject):
    """Signals:
    changed(): the cache's words changed (every second while warm; when it turns cold).
    """

    changed = Signal()

    def __init__(self, clock: Callable[[], float], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._clock = clock
        self._outlook: CacheOutlook | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._on_timer_timeout)

    @property
    def outlook(self) -> CacheOutlook | None:
        return self._outlook

    def show(self, outlook: CacheOutlook | None) -> None:
        self._outlook = outlook
        self._on_timer_timeout()

    def short(self) -> str:
        """For the chat bar: "cache warm · 4:05" ("" before the first plan)."""
        return said.cache_state(self._outlook, self._clock()) if self._outlook else ""

    def line(self) -> str:
        """For the context panel and the bar's tooltip: the state and both prices."""
        return said.cache_line(self._outlook, self._clock()) if self._outlook else ""

    def breakers(self) -> str:
        """While warm: what would start the cache over, and what that costs."""
        return said.cache_breakers(self._outlook, self._clock()) if self._outlook else ""

    @Slot()
    def _on_timer_timeout(self) -> None:
        outlook = self._outlook
        expired = outlook is not None and outlook.cache.seconds_left(self._clock()) <= 0
        if outlook is not None and outlook.cache.state == "warm" and expired:
            self._outlook = replace(
                outlook, cache=replace(outlook.cache, state="cold"), now=outlook.cold
            )
        warm = self._outlook is not None and self._outlook.cache.state == "warm"
        if warm and not self._timer.isActive():
            self._timer.start()
        elif not warm:
            self._timer.stop()
        self.changed.emit()
