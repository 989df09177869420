"""`/name` in the composer: an MCP server's prompt, as Claude desktop offers them. Typing
`/` at the start of the draft lists the prompts of the servers that are ready (asked off
the window's thread, once until the servers change); choosing one — a click, or the
arrows and Enter — asks for its arguments, and its text becomes the draft, to read and
change before sending."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, QObject, Qt, QTimer, Slot

from desktop_app.core.errors import ContextDeskError

if TYPE_CHECKING:
    from PySide6.QtGui import QStandardItemModel
    from PySide6.QtWidgets import QCompleter

    from desktop_app.core.errors import ErrorInfo
    from desktop_app.tools.mcp_catalog import McpPrompt
    from desktop_app.ui.conversation.composer import Composer
    from desktop_app.ui.conversation.session import ChatSession

log = logging.getLogger(__name__)
COMMAND_ROLE = Qt.ItemDataRole.UserRole + 1  # "/name": what typing matches
PROMPT_ROLE = Qt.ItemDataRole.UserRole + 2


class PromptCommands(QObject):
    def __init__(self, composer: Composer, session: ChatSession) -> None:
        super().__init__(composer)
        self.composer = composer
        self.session = session
        self.edit = composer.edit
        # Made the first time the servers' prompts are listed (not with every chat's pane).
        self.completer: QCompleter | None = None
        self.model: QStandardItemModel | None = None
        self.listed = False  # the ready servers' prompts were asked for
        self._chosen = False  # a choice's Enter must not also send the draft
        self.edit.textChanged.connect(self._on_text_changed)
        self.edit.completing = self.completing

    def completing(self) -> bool:
        """Does a key now belong to the list of commands (Enter chooses, not sends)?"""
        popup = self.completer.popup() if self.completer is not None else None
        return self._chosen or (popup is not None and popup.isVisible())

    def servers_changed(self) -> None:
        self.listed = False  # asked again at the next `/`

    @Slot()
    def _on_text_changed(self) -> None:
        text = self.edit.toPlainText()
        typing = text.startswith("/") and not any(c.isspace() for c in text)
        if not typing:
            popup = self.completer.popup() if self.completer is not None else None
            if popup is not None:
                popup.hide()
            return
        if not self.listed:
            self.listed = True
            self._list()
            return
        self._show(text)

    def _list(self) -> None:
        engine = self.session.engine
        ready = [v.name for v in engine.tool_servers.views() if v.status == "ready"]
        if not ready:
            return
        servers = engine.tool_servers

        def prompts() -> list[McpPrompt]:
            found: list[McpPrompt] = []
            for name in ready:
                try:
                    found += servers.prompts(name)
                except ContextDeskError:  # none from this server: said in the log
                    log.info("no prompts from %s", name, exc_info=True)
            return found

        self.session.background.submit(f"prompts-{id(self)}", prompts, self._on_listed)

    def _on_listed(self, prompts: list[McpPrompt]) -> None:
        from PySide6.QtGui import QStandardItem, QStandardItemModel
        from PySide6.QtWidgets import QCompleter

        if self.model is None:
            self.model = QStandardItemModel(self)
        self.model.clear()
        for prompt in sorted(prompts, key=lambda p: (p.name, p.server)):
            about = f" — {prompt.description}" if prompt.description else ""
            item = QStandardItem(f"/{prompt.name}{about} · {prompt.server}")
            item.setData(f"/{prompt.name}", COMMAND_ROLE)
            item.setData(prompt, PROMPT_ROLE)
            item.setToolTip(prompt.description or f"A prompt of {prompt.server}")
            self.model.appendRow(item)
        if self.completer is None:
            self.completer = QCompleter(self.model, self)
            self.completer.setWidget(self.edit)
            self.completer.setCompletionRole(COMMAND_ROLE)
            self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
            popup = self.completer.popup()
            if popup is not None:
                popup.setObjectName("promptCommands")
            chosen = self.completer.activated[QModelIndex]  # type: ignore[index]
            chosen.connect(self._on_completer_activated)
        self._show(self.edit.toPlainText())

    def _show(self, text: str) -> None:
        completer = self.completer
        if completer is None or not text.startswith("/"):
            return
        completer.setCompletionPrefix(text)
        popup = completer.popup()
        if completer.completionCount() == 0:
            if popup is not None:
                popup.hide()
            return
        spot = self.edit.cursorRect()
        spot.setWidth(max(320, self.edit.width() // 2))
        completer.complete(spot)
        if popup is not None:  # the first command chosen: "/review" + Enter takes it
            popup.setCurrentIndex(completer.completionModel().index(0, 0))

    @Slot(QModelIndex)
    def _on_completer_activated(self, index: QModelIndex) -> None:
        from desktop_app.ui.dialogs.mcp_offers import ask_arguments

        self._chosen = True  # (its Enter reaches the draft after this)
        QTimer.singleShot(0, self._forget_choice)
        prompt = index.data(PROMPT_ROLE)
        if prompt is None:
            return
        arguments = ask_arguments(self.edit, prompt)
        if arguments is None:
            return  # cancelled: the draft stays as typed
        servers = self.session.engine.tool_servers

        def fill() -> str:
            return servers.prompt_text(prompt.server, prompt.name, arguments)

        self.session.background.submit(
            f"prompt-{prompt.server}-{prompt.name}", fill, self._on_filled, self._on_failed
        )

    def _forget_choice(self) -> None:
        self._chosen = False

    def _on_filled(self, text: str) -> None:
        self.composer.set_draft(text)
        self.edit.setFocus()

    def _on_failed(self, error: ErrorInfo) -> None:
        self.composer.problem.emit(f"{error.title}: {error.message}")
