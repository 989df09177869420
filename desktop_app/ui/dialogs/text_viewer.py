"""A long text, read-only, in a window of its own: an attachment's text before it is
sent, a message too long to lay out whole in the conversation. The view lays out only
the lines on screen, so a megabyte opens at once; lines longer than `VIEWER_LINE` are
shown in pieces (a single line is laid out whole), and Copy takes the text as it is."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from desktop_app.ui.conversation.long_text import VIEWER_LINE, in_pieces
from desktop_app.ui.theme import monospace


def show_text(parent: QWidget, title: str, text: str, *, name: str = "textViewer") -> QDialog:
    """Open the viewer (not modal) and return it."""
    dialog = QDialog(parent)
    dialog.setObjectName(name)
    dialog.setWindowTitle(title)
    shown = in_pieces(text)
    view = QPlainTextEdit(shown)
    view.setObjectName("viewerText")
    view.setReadOnly(True)
    view.setFont(monospace())
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
    copy = buttons.addButton("Copy all", QDialogButtonBox.ButtonRole.ActionRole)
    copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(text))
    buttons.rejected.connect(dialog.reject)
    column = QVBoxLayout(dialog)
    if shown != text:
        note = QLabel(
            f"Lines longer than {VIEWER_LINE:,} characters are shown in pieces; Copy all "
            "takes the text as it is."
        )
        note.setWordWrap(True)
        column.addWidget(note)
    column.addWidget(view)
    column.addWidget(buttons)
    dialog.resize(720, 520)
    dialog.finished.connect(dialog.deleteLater)
    dialog.open()
    return dialog
