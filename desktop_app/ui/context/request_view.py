"""The exact JSON body of the next request (or of the last one sent, with the usage the
API reported for it): the next one folded as a tree (`json_tree.py`) with each section's
tokens on its fold, or as syntax-highlighted text; searchable, copyable."""

from __future__ import annotations

import json
import re
import time
from html import escape
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QShowEvent,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app import said
from desktop_app.ui import theme
from desktop_app.ui.context.json_tree import JsonTree

if TYPE_CHECKING:
    from desktop_app.chats import Chat
    from desktop_app.context.plan import Plan

_TOKENS = re.compile(
    r'(?P<key>"(?:[^"\\]|\\.)*"(?=\s*:))|(?P<string>"(?:[^"\\]|\\.)*")|(?P<number>-?\d+(?:\.\d+)?)|(?P<word>\btrue\b|\bfalse\b|\bnull\b)'
)


# A body's key → the plan's sections it holds (the pinned facts and the project's layers
# are sent in the system prompt, the summary as the first message)
FOLDS = {
    "system": ("system", "facts", "project instructions", "project facts", "project knowledge"),
    "tools": ("tools",),
    "messages": ("summary", "messages"),
}


class RequestHighlighter(QSyntaxHighlighter):
    """The tab's one highlighter (a document takes one: a second would wipe the first's
    colours on every block): JSON — keys, strings, numbers and literals in their own
    colours — or, comparing, a unified diff (added lines green, removed red, positions
    muted)."""

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        dark = theme.is_dark()
        self.diff = False
        self.formats = {}
        for name, colour in {
            "key": "#9cdcfe" if dark else "#0451a5",
            "string": "#ce9178" if dark else "#a31515",
            "number": "#b5cea8" if dark else "#098658",
            "word": "#569cd6" if dark else "#0000ff",
        }.items():
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(colour))
            self.formats[name] = fmt
        for mark, name in (("+", "in context"), ("-", "not sent"), ("@", "excluded")):
            fmt = QTextCharFormat()
            fmt.setForeground(theme.state_colour(name, dark))
            self.formats[mark] = fmt

    def show_diff(self, on: bool) -> None:
        if on != self.diff:
            self.diff = on
            self.rehighlight()

    def highlightBlock(self, text: str) -> None:
        if self.diff:
            if text[:1] in "+-@" and text[:1] and not text.startswith(("+++", "---")):
                self.setFormat(0, len(text), self.formats[text[:1]])
            return
        for match in _TOKENS.finditer(text):
            kind = match.lastgroup
            if kind is not None:
                self.setFormat(match.start(), match.end() - match.start(), self.formats[kind])


class RequestView(QWidget):
    NEXT = "The next request"
    SENT = "A request sent (from the ledger)"
    DIFF = "Compare two requests"
    NEXT_ITEM = "the next request"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plan: Plan | None = None
        self.chat: Chat | None = None
        self._stale = False  # a plan arrived while the tab was hidden
        self.which = QComboBox()
        self.which.addItems([self.NEXT, self.SENT, self.DIFF])
        self.which.currentIndexChanged.connect(self._on_which_changed)
        self.pick = QComboBox()  # a sent request (the earlier one, when comparing)
        self.pick.setObjectName("requestPick")
        self.pick.activated.connect(self._on_pick_activated)
        self.against = QComboBox()  # what it is compared with
        self.against.setObjectName("requestAgainst")
        self.against.activated.connect(self._on_pick_activated)
        self.sections = QLabel()
        self.sections.setObjectName("requestSections")
        self.sections.setWordWrap(True)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Find in the request (Enter for the next match)")
        self.search.returnPressed.connect(self._on_search_return_pressed)
        # Ask the ledger: which requests carried the text, and what stopped it.
        self.ledger_button = QPushButton("In which requests?")
        self.ledger_button.setObjectName("askLedger")
        self.ledger_button.setToolTip(
            "Ask the ledger: every request of this chat that carried the text, the last one, "
            "and — if the next request does not carry it — what stopped it"
        )
        self.ledger_button.clicked.connect(self._on_ledger_clicked)
        self.trace = QLabel()
        self.trace.setObjectName("ledgerTrace")
        self.trace.setWordWrap(True)
        self.trace.setTextFormat(Qt.TextFormat.RichText)
        self.trace.linkActivated.connect(self._on_trace_link_activated)
        self.trace.hide()
        copy = QPushButton("Copy")
        copy.setToolTip("Copy what is shown: the JSON body, or the comparison")
        copy.clicked.connect(self._on_copy_clicked)
        self.text = QPlainTextEdit()
        self.text.setObjectName("requestJson")
        self.text.setReadOnly(True)
        self.text.setFont(theme.monospace())
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.highlighter = RequestHighlighter(self.text.document())
        self.tree = JsonTree()  # the next request, folded (the text: Raw JSON, and the rest)
        self.raw = QCheckBox("Raw JSON")
        self.raw.setToolTip("The body as text, exactly as it is sent (to copy or read whole)")
        self.raw.toggled.connect(self._on_raw_toggled)
        picks = QHBoxLayout()
        picks.addWidget(self.pick, 1)
        picks.addWidget(self.against, 1)
        row = QHBoxLayout()
        row.addWidget(self.search, 1)
        row.addWidget(self.raw)
        row.addWidget(copy)
        layout = QVBoxLayout(self)
        layout.addWidget(self.which)
        layout.addLayout(picks)
        layout.addWidget(self.sections)
        layout.addLayout(row)
        asking = QHBoxLayout()  # (its own row: beside the search, large text cut its words)
        asking.addWidget(self.ledger_button)
        asking.addStretch(1)
        layout.addLayout(asking)
        layout.addWidget(self.trace)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.tree, 1)
        self._show_picks()

    def show_plan(self, plan: Plan | None, chat: Chat | None) -> None:
        """Keep the newest plan; lay out its JSON only while the tab is on screen. A long
        chat's request is megabytes of JSON, and plans arrive as the user types."""
        if chat is not self.chat:  # another chat's answer is not this one's
            self.trace.hide()
        self.plan, self.chat = plan, chat
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
        mode = self.which.currentText()
        self._show_picks()
        if mode != self.NEXT:
            self._fill_picks()
        if mode == self.SENT:
            self._show_sent()
        elif mode == self.DIFF:
            self._show_diff()
        else:
            self._show_next()

    def _show_next(self) -> None:
        plan = self.plan
        if plan is None:
            self.sections.setText("Counting…")
            self._set_json(None)
            return
        lead = "Exactly what Send would send now (with your draft as the last message)."
        if plan.edit_of:
            lead = (
                "Exactly what Send would send now: your edit as a new version of your message, "
                "after what came before it — the messages after it are not sent (they stay, "
                "on their branch)."
            )
        elif plan.retries:
            lead = (
                "The last reply did not finish: this is exactly what Retry would send (its "
                "answer becomes a new version beside it)."
            )
        elif plan.stand_in:
            lead = (
                f'The composer is empty: this is exactly what a one-word message ("{plan.stand_in}") '
                "would send."
            )
        parts = [
            f"{section.value} ≈{tokens:,}" for section, tokens in plan.sections.items() if tokens
        ]
        self.sections.setText(f"{lead} Tokens by section: " + " · ".join(parts))
        body = plan.request.body()
        self._set_json(body)
        sizes = {str(section): tokens for section, tokens in plan.sections.items()}
        folds = {key: sum(sizes.get(part, 0) for part in parts) for key, parts in FOLDS.items()}
        folds["system"] -= plan.documents_tokens  # (a project's documents open the messages)
        folds["messages"] += plan.documents_tokens
        self.tree.show_body(body, folds)

    def _show_sent(self) -> None:
        chosen = self._chosen(self.pick)
        if self.chat is None or chosen is None:
            self.sections.setText("Nothing has been sent in this chat yet.")
            self._set_json(None)
            return
        entry = next(r for r in self.chat.costs.sent_requests() if r.number == chosen)
        usage = entry.usage
        took = f" in {entry.seconds:.1f} s" if entry.seconds is not None else ""
        self.sections.setText(
            f"As sent to {entry.server}{took}. Reported usage: "
            + (
                f"input {usage.input_tokens:,}, cache read {usage.cache_read_input_tokens:,}, "
                f"cache write {usage.cache_creation_input_tokens:,}, "
                f"output {usage.output_tokens:,} (exact)"
                if usage
                else f"none ({entry.status}: the reply did not finish)"
            )
        )
        self._set_json(self.chat.costs.sent_body(chosen))

    def _show_diff(self) -> None:
        before, after = self._chosen(self.pick), self.against.currentData()
        if self.chat is None or before is None or after is None:
            self.sections.setText("Nothing has been sent in this chat yet: nothing to compare.")
            self._set_json(None)
            return
        diff = self.chat.costs.diff_requests(str(before), str(after))
        self.sections.setText(diff.why[:1].upper() + diff.why[1:] + ".")
        self.highlighter.show_diff(True)
        self.text.setPlainText("\n".join(diff.lines) or "The two requests are the same.")

    def _show_picks(self) -> None:
        mode = self.which.currentText()
        folded = mode == self.NEXT and not self.raw.isChecked()
        self.tree.setVisible(folded)
        self.text.setVisible(not folded)
        self.raw.setVisible(mode == self.NEXT)
        self.pick.setVisible(mode != self.NEXT)
        self.against.setVisible(mode == self.DIFF)

    def _fill_picks(self) -> None:
        """The ledger's requests, newest first; the choice kept across refreshes. When
        comparing, the default is the last sent against the next."""
        sent = self.chat.costs.sent_requests() if self.chat is not None else []
        keep, keep_against = self._chosen(self.pick), self.against.currentData()
        self.pick.clear()
        self.against.clear()
        self.against.addItem(self.NEXT_ITEM, "next")
        for entry in reversed(sent):
            what = (
                "summary request (compaction)"
                if entry.purpose == "compaction"
                else f"{entry.message_count} messages"
            )
            when = time.strftime("%d %b %H:%M", time.localtime(entry.sent_at))
            label = f"#{entry.number} · {when} · {what}"
            self.pick.addItem(label, entry.number)
            self.against.addItem(label, str(entry.number))
        if keep is not None and self.pick.findData(keep) >= 0:
            self.pick.setCurrentIndex(self.pick.findData(keep))
        if keep_against is not None and self.against.findData(keep_against) >= 0:
            self.against.setCurrentIndex(self.against.findData(keep_against))

    @staticmethod
    def _chosen(box: QComboBox) -> int | None:
        data = box.currentData()
        return int(data) if data is not None else None

    def _set_json(self, body: object) -> None:
        self.highlighter.show_diff(False)  # (back from a comparison: JSON colours again)
        text = "" if body is None else json.dumps(body, ensure_ascii=False, indent=2)
        if text != self.text.toPlainText():
            scroll = self.text.verticalScrollBar().value()
            self.text.setPlainText(text)
            self.text.verticalScrollBar().setValue(scroll)

    @Slot(int)
    def _on_which_changed(self, _index: int) -> None:
        self._refresh()

    @Slot(int)
    def _on_pick_activated(self, _index: int) -> None:
        self._refresh()

    @Slot(bool)
    def _on_raw_toggled(self, _raw: bool) -> None:
        self._show_picks()

    @Slot()
    def _on_search_return_pressed(self) -> None:
        needle = self.search.text()
        if self.tree.isVisible():
            self.tree.find_next(needle)
            return
        if needle and not self.text.find(needle):
            cursor = self.text.textCursor()
            cursor.movePosition(cursor.MoveOperation.Start)
            self.text.setTextCursor(cursor)
            self.text.find(needle)

    def ask_ledger(self, text: str) -> None:
        """What the ledger says of `text` (a message's line), as if typed and asked."""
        self.search.setText(text)
        self._on_ledger_clicked()

    @Slot()
    def _on_ledger_clicked(self) -> None:
        """What the ledger says of the text in the search box: each request that carried it
        a link to its body."""
        text = self.search.text()
        if self.chat is None or not text.strip():
            self.trace.setText("Type a text to look for — a fact, an order number, a file name.")
            self.trace.show()
            return
        found = self.chat.costs.trace(text, self.plan)
        total = len(self.chat.costs.sent_requests())
        links = ", ".join(f'<a href="{c.number}">#{c.number}</a>' for c in found.carriers)
        told = escape(said.carried(text, [c.number for c in found.carriers], total, found.last))
        if links:
            told += f"<br>Open one: {links}"
        now = found.why if found.in_next else f"Not in the next request: {found.why}"
        self.trace.setText(f"{told}<br><b>{escape(now)}</b>")
        self.trace.show()

    @Slot(str)
    def _on_trace_link_activated(self, number: str) -> None:
        """A request that carried the text: its body, at the text."""
        self.which.setCurrentText(self.SENT)  # (refreshes: the ledger's list is filled)
        self.pick.setCurrentIndex(self.pick.findData(int(number)))
        self._refresh()
        self._on_search_return_pressed()

    @Slot()
    def _on_copy_clicked(self) -> None:
        QGuiApplication.clipboard().setText(self.text.toPlainText())


def message_needle(text: str) -> str:
    """What to look for to find a message in the requests: its first line of words, up to
    80 characters (a line stands in the JSON as written; a whole message may not)."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line[:80]
