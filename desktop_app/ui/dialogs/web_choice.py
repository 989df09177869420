"""The web, for the chat on screen: whether Claude may search it and read its pages (the
API's own tools, run on Anthropic's side), how often per request, and on which domains —
with what each costs said beside it. (`chat set web_search=on …` is the same choice.)"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
)

from desktop_app.context.bounds import WEB_MAX_USES
from desktop_app.core.errors import ContextDeskError

if TYPE_CHECKING:
    from desktop_app.chats import Chat

DOMAIN_RULES = (("only these domains", "only"), ("never these domains", "never"))


class WebChoice(QObject):
    """Its rows go into the dialog's form (`form`), beside its other per-chat choices.

    Signals:
    changed(): the chat's web settings were saved (its next request changes).
    failed(str): what could not be saved, and why.
    """

    changed = Signal()
    failed = Signal(str)

    def __init__(
        self, chat: Chat | None, available: bool, form: QFormLayout, *, search_taken: bool = True
    ) -> None:
        super().__init__(form)
        self.chat = chat
        self.search_taken = search_taken  # the chat's model takes web search (Models API)
        self.search = QCheckBox("Search the web")
        self.search.setObjectName("webSearch")
        self.search.setToolTip(
            "Claude may search the web; each search is a step of its reply with the results "
            "it read, and its answer cites them. $10 per 1,000 searches, plus the results' "
            "tokens."
        )
        self.fetch = QCheckBox("Read web pages")
        self.fetch.setObjectName("webFetch")
        self.fetch.setToolTip(
            "Claude may read a page whose address is in the chat or in search results; a page "
            "brings at most the chat's tool-result cap in tokens. No charge beyond its tokens."
        )
        self.uses = QSpinBox()
        self.uses.setObjectName("webMaxUses")
        self.uses.setRange(*WEB_MAX_USES.whole_range)
        self.uses.setSuffix(" per reply")
        self.uses.setToolTip("The most searches (and, apart, page reads) in one request")
        self.rule = QComboBox()
        for words, value in DOMAIN_RULES:
            self.rule.addItem(words, value)
        self.domains = QLineEdit()
        self.domains.setObjectName("webDomains")
        self.domains.setPlaceholderText("any domain (e.g. docs.python.org, example.com)")
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setObjectName("webNote")
        boxes = QHBoxLayout()
        for widget in (self.search, self.fetch, self.uses):
            boxes.addWidget(widget)
        boxes.addStretch(1)
        domains = QHBoxLayout()
        domains.addWidget(self.rule)
        domains.addWidget(self.domains, 1)
        form.addRow("Claude may use the web", boxes)
        form.addRow("", domains)
        form.addRow("", self.note)
        self._show(available)
        for box in (self.search, self.fetch):
            box.toggled.connect(self._on_edited)
        self.uses.editingFinished.connect(self._on_edited)
        self.rule.activated.connect(self._on_edited)
        self.domains.editingFinished.connect(self._on_edited)

    def _show(self, available: bool) -> None:
        chat = self.chat
        settings = chat.settings if chat is not None else None
        if settings is not None:
            self.search.setChecked(settings.web_search)
            self.fetch.setChecked(settings.web_fetch)
            self.uses.setValue(settings.web_max_uses)
            never = bool(settings.web_blocked_domains)
            self.rule.setCurrentIndex(1 if never else 0)
            listed = settings.web_blocked_domains if never else settings.web_domains
            self.domains.setText(", ".join(listed))
        for widget in (self.search, self.fetch, self.uses, self.rule, self.domains):
            widget.setEnabled(chat is not None and available)
        if not self.search_taken:
            self.search.setEnabled(False)
            self.search.setToolTip(
                "The chat's model does not take web search (the Models API says so)"
            )
        if chat is None:
            self.note.setText("Open a chat to let Claude search or read the web in it.")
        elif not available:
            self.note.setText(
                "Only Anthropic's API runs these tools: the server in Settings is another one."
            )
        else:
            self.note.setText(
                "Run by Anthropic's API: $10 per 1,000 searches, and every search result or "
                "page read counts as input. Each use is a step of the reply, with its tokens."
            )

    @Slot()
    def _on_edited(self) -> None:
        chat = self.chat
        if chat is None:
            return
        listed = tuple(sorted({d.strip() for d in self.domains.text().split(",") if d.strip()}))
        only = self.rule.currentData() == "only"
        settings = replace(
            chat.settings,
            web_search=self.search.isChecked(),
            web_fetch=self.fetch.isChecked(),
            web_max_uses=self.uses.value(),
            web_domains=listed if only else (),
            web_blocked_domains=() if only else listed,
        )
        if settings == chat.settings:
            return
        try:
            chat.setup.set_settings(settings)
        except ContextDeskError as exc:
            self.failed.emit(f"{exc.title}: {exc.message}")
            return
        self.changed.emit()
