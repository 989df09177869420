"""The exact JSON body of the next request (or of the last one sent, with the usage the
API reported for it): syntax-highlighted, searchable, copyable, with each section's
tokens."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from PySide6.QtCore import Slot
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QShowEvent,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.ui import theme
from desktop_app.ui.session import SentRequest

if TYPE_CHECKING:
    from desktop_app.context.projection import Plan

_TOKENS = re.compile(
    r'(?P<key>"(?:[^"\\]|\\.)*"(?=\s*:))|(?P<string>"(?:[^"\\]|\\.)*")|(?P<number>-?\d+(?:\.\d+)?)|(?P<word>\btrue\b|\bfalse\b|\bnull\b)'
)


class JsonHighlighter(QSyntaxHighlighter):
    """Keys, strings, numbers and literals in their own colours (light or dark)."""

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        dark = theme.is_dark()
        colours = {
            "key": "#9cdcfe" if dark else "#0451a5",
            "string": "#ce9178" if dark else "#a31515",
            "number": "#b5cea8" if dark else "#098658",
            "word": "#569cd6" if dark else "#0000ff",
        }
        self.formats = {}
        for name, colour in colours.items():
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(colour))
            self.formats[name] = fmt

    def highlightBlock(self, text: str) -> None:
        for match in _TOKENS.finditer(text):
            kind = match.lastgroup
            if kind is not None:
                self.setFormat(match.start(), match.end() - match.start(), self.formats[kind])


class RequestView(QWidget):
    NEXT = "The next request"
    LAST = "The last request sent"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plan: Plan | None = None
        self.sent: SentRequest | None = None
        self._stale = False  # a plan arrived while the tab was hidden
        self.which = QComboBox()
        self.which.addItems([self.NEXT, self.LAST])
        self.which.currentIndexChanged.connect(self._on_which_changed)
        self.sections = QLabel()
        self.sections.setObjectName("requestSections")
        self.sections.setWordWrap(True)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Find in the request (Enter for the next match)")
        self.search.returnPressed.connect(self._on_search_return_pressed)
        copy = QPushButton("Copy JSON")
        copy.clicked.connect(self._on_copy_clicked)
        self.text = QPlainTextEdit()
        self.text.setObjectName("requestJson")
        self.text.setReadOnly(True)
        self.text.setFont(theme.monospace())
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.highlighter = JsonHighlighter(self.text.document())
        row = QHBoxLayout()
        row.addWidget(self.search, 1)
        row.addWidget(copy)
        layout = QVBoxLayout(self)
        layout.addWidget(self.which)
        layout.addWidget(self.sections)
        layout.addLayout(row)
        layout.addWidget(self.text, 1)

    def show_plan(self, plan: Plan | None, sent: SentRequest | None) -> None:
        """Keep the newest plan; lay out its JSON only while the tab is on screen. A long
        chat's request is megabytes of JSON, and plans arrive as the user types."""
        self.plan, self.sent = plan, sent
        self._stale = True
        if self.isVisible():
            self._refresh()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self._refresh()

    def body_text(self) -> str:
        return self.text.toPlainText()

    def _refresh(self) -> None:
        self._stale = False
        if self.which.currentText() == self.LAST:
            if self.sent is None:
                self.sections.setText("Nothing has been sent in this chat since the app started.")
                self.text.setPlainText("")
                return
            usage = self.sent.usage
            self.sections.setText(
                "As sent. Reported usage: "
                + (
                    f"input {usage.input_tokens:,}, cache read {usage.cache_read_input_tokens:,}, "
                    f"cache write {usage.cache_creation_input_tokens:,}, output {usage.output_tokens:,} (exact)"
                    if usage
                    else "none yet (the reply did not finish)"
                )
            )
            self._set_json(self.sent.request.body())
            return
        if self.plan is None:
            self.sections.setText("Counting…")
            self.text.setPlainText("")
            return
        parts = [
            f"{section.value} ≈{tokens:,}"
            for section, tokens in self.plan.sections.items()
            if tokens
        ]
        self.sections.setText("Tokens by section: " + " · ".join(parts))
        self._set_json(self.plan.request.body())

    def _set_json(self, body: object) -> None:
        text = json.dumps(body, ensure_ascii=False, indent=2)
        if text != self.text.toPlainText():
            scroll = self.text.verticalScrollBar().value()
            self.text.setPlainText(text)
            self.text.verticalScrollBar().setValue(scroll)

    @Slot(int)
    def _on_which_changed(self, _index: int) -> None:
        self._refresh()

    @Slot()
    def _on_search_return_pressed(self) -> None:
        needle = self.search.text()
        if needle and not self.text.find(needle):
            cursor = self.text.textCursor()
            cursor.movePosition(cursor.MoveOperation.Start)
            self.text.setTextCursor(cursor)
            self.text.find(needle)

    @Slot()
    def _on_copy_clicked(self) -> None:
        QGuiApplication.clipboard().setText(self.text.toPlainText())
