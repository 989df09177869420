"""Find in the open chat (Ctrl+F): a bar above the conversation. Enter and Shift+Enter
(or the arrows) step through the messages that contain the text, each brought into view
and highlighted; Esc closes the bar and goes back to the composer."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

FIND_DELAY_MS = 150  # find once typing pauses

Find = Callable[[str], list[str]]  # text → the ids of the messages holding it, in order
Show = Callable[[str], object]  # bring one message into view, highlighted


class FindBar(QWidget):
    """Signals: closed(): the bar was closed (the focus may go back to the composer)."""

    closed = Signal()

    def __init__(self, find: Find, show: Show, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("findBar")
        self._find, self._show = find, show
        self._hits: list[str] = []
        self._at = -1
        self.field = QLineEdit()
        self.field.setObjectName("findField")
        self.field.setPlaceholderText("Find in this chat")
        self.field.setClearButtonEnabled(True)
        self.field.installEventFilter(self)
        self.count = QLabel()
        self.count.setMinimumWidth(90)
        self.previous_button = QToolButton()
        self.previous_button.setText("↑")
        self.previous_button.setToolTip("Previous match (Shift+Enter)")
        self.previous_button.clicked.connect(lambda: self.step(-1))
        self.next_button = QToolButton()
        self.next_button.setText("↓")
        self.next_button.setToolTip("Next match (Enter)")
        self.next_button.clicked.connect(lambda: self.step(1))
        close = QToolButton()
        close.setText("✕")
        close.setToolTip("Close (Esc)")
        close.clicked.connect(self.close_bar)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(FIND_DELAY_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        self.field.textChanged.connect(lambda _text: self._timer.start())
        row = QHBoxLayout(self)
        row.setContentsMargins(6, 2, 6, 2)
        row.addWidget(self.field, 1)
        row.addWidget(self.count)
        row.addWidget(self.previous_button)
        row.addWidget(self.next_button)
        row.addWidget(close)
        self.hide()
        self._show_count()

    def open_bar(self) -> None:
        self.show()
        self.field.setFocus()
        self.field.selectAll()
        if self.field.text():
            self._timer.start()  # the chat may have changed since

    def close_bar(self) -> None:
        self.hide()
        self._hits, self._at = [], -1
        self.closed.emit()

    def reset(self) -> None:
        """Another chat is shown: its own matches, if the bar is open."""
        self._hits, self._at = [], -1
        if self.isVisible() and self.field.text():
            self._timer.start()
        self._show_count()

    def step(self, by: int) -> None:
        self._timer.stop()
        if not self._hits and self.field.text().strip():
            self._on_timer_timeout()  # Enter before the pause: find now
            return
        if self._hits:
            self._at = (self._at + by) % len(self._hits)
            self._show(self._hits[self._at])
        self._show_count()

    @property
    def hits(self) -> list[str]:
        return list(self._hits)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.field and isinstance(event, QKeyEvent):
            key = event.key()
            if event.type() == QEvent.Type.ShortcutOverride and key == Qt.Key.Key_Escape:
                event.accept()  # Esc closes the bar here, it does not stop a reply
                return True
            if event.type() == QEvent.Type.KeyPress:
                if key == Qt.Key.Key_Escape:
                    self.close_bar()
                    return True
                if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                    back = event.modifiers() & Qt.KeyboardModifier.ShiftModifier
                    self.step(-1 if back else 1)
                    return True
        return super().eventFilter(watched, event)

    @Slot()
    def _on_timer_timeout(self) -> None:
        text = self.field.text().strip()
        self._hits = self._find(text) if text else []
        self._at = -1
        if self._hits:
            self.step(1)
        self._show_count()

    def _show_count(self) -> None:
        text = self.field.text().strip()
        if not text:
            self.count.setText("")
        elif not self._hits:
            self.count.setText("No matches")
        else:
            self.count.setText(f"{self._at + 1} of {len(self._hits)}")
        for button in (self.previous_button, self.next_button):
            button.setEnabled(len(self._hits) > 1)
