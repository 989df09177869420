"""The first key or click, between the first paint and the engine (`EarlyInput`)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject


class EarlyInput(QObject):
    """From the first paint to the engine's arrival (a tenth of a second or so): the
    first key or click opens the engine before it is handled. (The engine waits for the
    first frame; a shortcut pressed as the window appears must not be lost for it.)"""

    INPUT = frozenset(
        {
            QEvent.Type.ShortcutOverride,  # before a shortcut is looked up: they are set now
            QEvent.Type.KeyPress,
            QEvent.Type.MouseButtonPress,
            QEvent.Type.MouseButtonDblClick,
        }
    )

    def __init__(self, open_engine_now: Callable[[], None], parent: QObject) -> None:
        super().__init__(parent)
        self._open_engine_now = open_engine_now

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in self.INPUT:
            self._open_engine_now()
        return False
