"""An error, shown where the user is looking: title, message, details on demand, Retry.

Never a modal box that blocks the window, never a status-bar line that goes unseen.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.errors import ErrorInfo, ErrorKind
from desktop_app.ui import theme


class ErrorBanner(QFrame):
    """Signals:
    retry_requested(): the user pressed Retry.
    dismissed(): the user closed the banner.
    """

    retry_requested = Signal()
    dismissed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # Where the keys go when the banner leaves with them (its Retry or ✕ pressed):
        # else Qt hands them to the next widget in Tab's order, the chat list's search.
        self.focus_after: QWidget | None = None
        self.setObjectName("errorBanner")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.title = QLabel()
        self.title.setObjectName("errorTitle")
        self.message = QLabel()
        # An error's words may come from a server (an HTML error page): text, never markup.
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        self.details.setMaximumHeight(140)
        self.details.setFont(theme.monospace())
        self.details.hide()
        self.details_button = QPushButton("Details")
        self.details_button.setCheckable(True)
        self.details_button.toggled.connect(self.details.setVisible)
        self.retry_button = QPushButton("Retry")
        self.retry_button.clicked.connect(self.retry_requested)
        close = QToolButton()
        close.setText("✕")
        close.setToolTip("Dismiss")
        close.setAutoRaise(True)
        close.clicked.connect(self._on_close_clicked)

        text = QVBoxLayout()
        text.addWidget(self.title)
        text.addWidget(self.message)
        row = QHBoxLayout()
        row.addLayout(text, 1)
        row.addWidget(self.details_button, 0, Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.retry_button, 0, Qt.AlignmentFlag.AlignTop)
        row.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(10, 8, 10, 8)
        outer.addLayout(row)
        outer.addWidget(self.details)
        self.hide()

    def show_error(self, error: ErrorInfo | None, *, can_retry: bool = True) -> None:
        if error is None:
            self._leave()
            return
        tone = "notice" if error.kind is ErrorKind.NOTICE else "error"
        colour = theme.status_colour(tone, theme.is_dark(self.palette())).name()
        self.setStyleSheet(
            f"#errorBanner {{ border: 1px solid {colour}; border-radius: 6px; }}"
            f"#errorTitle {{ color: {colour}; font-weight: bold; }}"
        )
        self.title.setText(error.title)
        self.message.setText(error.message)
        self.details.setPlainText(error.details)
        self.details_button.setVisible(bool(error.details))
        self.details_button.setChecked(False)
        self.retry_button.setVisible(can_retry)
        self.show()

    @Slot()
    def _on_close_clicked(self) -> None:
        self._leave()
        self.dismissed.emit()

    def _leave(self) -> None:
        """Hidden; the focus, if it was in the banner, to `focus_after`."""
        if self.isHidden():
            return  # (every send clears the banner: nothing to ask Qt then)
        focused = QApplication.focusWidget()
        had_focus = focused is not None and self.isAncestorOf(focused)
        self.hide()
        if had_focus and self.focus_after is not None:
            self.focus_after.setFocus()


def centred_row(bar: QWidget) -> QHBoxLayout:
    """`bar` in the reading column, however wide the window: stretch around it (an
    aligned widget would keep its size hint and cut its text)."""
    row = QHBoxLayout()
    row.setContentsMargins(0, 0, 0, 0)
    row.addStretch(1)
    row.addWidget(bar, 1000)  # all the room up to its maximum, then the spacers'
    row.addStretch(1)
    return row
