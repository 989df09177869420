"""Asking for a fact's text: a roomy box where Enter starts a new line (a fact may span
lines), Ctrl+Enter pins it, and Tab moves on to the buttons as in every other form."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)


class FactDialog(QDialog):
    def __init__(
        self, parent: QWidget | None, title: str, label: str, text: str = "", ok: str = "Pin"
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setObjectName("factDialog")
        self.label = QLabel(label)
        self.label.setWordWrap(True)
        self.edit = QPlainTextEdit(text)
        self.edit.setObjectName("factText")
        self.edit.setTabChangesFocus(True)  # Tab reaches the buttons; a fact needs no tabs
        self.edit.installEventFilter(self)
        hint = QLabel("Ctrl+Enter to pin · Enter starts a new line · Esc cancels")
        hint.setEnabled(False)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setText(ok)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.label)
        layout.addWidget(self.edit, 1)
        layout.addWidget(hint)
        layout.addWidget(self.buttons)
        self.setMinimumSize(480, 260)
        self.resize(560, 300)
        self.edit.setFocus()
        self.edit.selectAll()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Ctrl+Enter inside the box pins (the box would take it as a new line)."""
        if watched is self.edit and isinstance(event, QKeyEvent):
            enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            control = event.modifiers() & Qt.KeyboardModifier.ControlModifier
            if event.type() == QEvent.Type.KeyPress and enter and control:
                self.accept()
                return True
        return super().eventFilter(watched, event)

    def text(self) -> str:
        return self.edit.toPlainText().strip()


def ask_fact(
    parent: QWidget | None, title: str, label: str, text: str = "", ok: str = "Pin"
) -> str | None:
    """The fact as typed (stripped), or None when cancelled or left empty."""
    dialog = FactDialog(parent, title, label, text, ok)
    if dialog.exec() != QDialog.DialogCode.Accepted:
        return None
    return dialog.text() or None
