"""What the window's menus and panels open (`WindowDialogs`): the tools and MCP servers,
a chat's project, the trash, compaction, the usage view, the keyboard shortcuts — and the watch on the
MCP servers that re-plans the open chats when one comes or goes."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

    from desktop_app.chats import Engine
    from desktop_app.core.blocks import Block
    from desktop_app.ui.conversation.pane import ConversationPane
    from desktop_app.ui.dialogs.handoff_dialog import HandoffDialog
    from desktop_app.ui.dialogs.mcp_dialog import McpDialog, McpWatcher
    from desktop_app.ui.dialogs.project_dialog import ProjectDialog
    from desktop_app.ui.dialogs.trash_dialog import TrashDialog
    from desktop_app.ui.workers import BackgroundWorker


class WindowDialogs(QObject):
    """Signals: replan_requested(): every open chat may have changed (tools, a project);
    chats_changed(): the chat list must be read again; status(str): a passing word."""

    replan_requested = Signal()
    chats_changed = Signal()
    status = Signal(str)
    chat_made = Signal(object)  # a chat a dialog made (a hand-off's new chat), to show

    def __init__(
        self,
        window: QMainWindow,
        engine: Engine,
        background: BackgroundWorker,
        shown: Callable[[], ConversationPane | None],
    ) -> None:
        super().__init__(window)
        self.window = window
        self.engine = engine
        self.background = background
        self._shown = shown
        self.tools_dialog: McpDialog | None = None
        self.mcp_watcher: McpWatcher | None = None  # after the first paint
        self.project_dialog: ProjectDialog | None = None
        self.handoff_dialog: HandoffDialog | None = None
        self.trash_dialog: TrashDialog | None = None  # while View → Trash is open

    # -- MCP tool servers ---------------------------------------------------------------------

    def start_tool_servers(self) -> None:
        """After the first paint, off the window's thread: the configured servers start;
        each one ready (or failed) re-plans the open chats with its tools (or without)."""
        from desktop_app.ui.dialogs.mcp_dialog import McpWatcher

        self.mcp_watcher = McpWatcher(self.engine, self)
        self.mcp_watcher.changed.connect(self._on_mcp_watcher_changed)
        if self.engine.mcp_config().path.exists():  # else nothing of MCP is loaded
            self.background.submit(
                "mcp-start", self.engine.tool_servers.start, self._on_tool_servers_started
            )

    def _on_tool_servers_started(self, _result: object = None) -> None:
        if self.mcp_watcher is not None and self.mcp_watcher.watch():
            self._on_mcp_watcher_changed("")  # what changed before we listened

    @Slot(str)
    def _on_mcp_watcher_changed(self, _name: str) -> None:
        self.engine.mcp_changed()
        self.replan_requested.emit()
        if self.tools_dialog is not None:
            self.tools_dialog.refresh()

    @Slot()
    def open_tools(self) -> None:
        from desktop_app.ui.dialogs.mcp_dialog import McpDialog

        pane = self._shown()
        chat = pane.session.chat if pane is not None else None
        dialog = McpDialog(self.engine, chat, self.background, self.window)
        dialog.chat_tools_changed.connect(self._on_tools_dialog_chat_tools_changed)
        dialog.servers_changed.connect(self._on_tool_servers_started)
        dialog.finished.connect(self._on_tools_dialog_finished)
        dialog.offers.attached.connect(self._on_resource_attached)
        dialog.offers.prompted.connect(self._on_prompt_filled)
        dialog.offers.told.connect(self.status)
        self.tools_dialog = dialog
        dialog.open()

    @Slot(str, object)
    def _on_resource_attached(self, uri: str, blocks: list[Block]) -> None:
        """An MCP resource, into the message being written (each block a chip)."""
        pane = self._shown()
        if pane is None:
            return
        from desktop_app.ui.conversation.composer import Attachment

        for block in blocks:
            pane.composer.add_attachment(Attachment(uri, block, self.engine.counter.block(block)))
        self.status.emit(f"Attached {uri}")

    @Slot(str)
    def _on_prompt_filled(self, text: str) -> None:
        """An MCP prompt, filled in, as the draft (after what is written already)."""
        pane = self._shown()
        if pane is not None:
            draft = pane.composer.edit.toPlainText().strip()
            pane.composer.set_draft(f"{draft}\n\n{text}" if draft else text)

    @Slot()
    def _on_tools_dialog_chat_tools_changed(self) -> None:
        pane = self._shown()
        if pane is not None:
            pane.session.settings_changed()

    @Slot()
    def _on_tools_dialog_finished(self) -> None:
        if self.tools_dialog is not None:
            self.tools_dialog.deleteLater()
        self.tools_dialog = None

    # -- the chat shown's ---------------------------------------------------------------------

    @Slot()
    def open_project(self) -> None:
        """The chat's project: move it, switch layers, edit the project."""
        pane = self._shown()
        if pane is None:
            return
        from desktop_app.ui.dialogs.project_dialog import ProjectDialog

        dialog = ProjectDialog(pane.session, self.window)
        dialog.changed.connect(self._on_project_dialog_changed)
        dialog.finished.connect(dialog.deleteLater)
        self.project_dialog = dialog
        dialog.open()

    @Slot()
    def _on_project_dialog_changed(self) -> None:
        self.replan_requested.emit()  # every chat of the project may have changed
        self.chats_changed.emit()  # a chat moved, a project came or was renamed

    @Slot()
    def open_compaction(self) -> None:
        pane = self._idle_pane("compact")
        if pane is None:
            return
        from desktop_app.ui.dialogs.compaction_dialog import CompactionDialog

        CompactionDialog(pane.session, self.window).exec()

    @Slot()
    def open_handoff(self) -> None:
        """Chat → Continue in a new chat…: preview what it starts with, then make it."""
        pane = self._idle_pane("continue it")
        if pane is None:
            return
        from desktop_app.ui.dialogs.handoff_dialog import HandoffDialog

        dialog = HandoffDialog(pane.session, self.window)
        dialog.continued.connect(lambda _chat: pane.show_links())  # "Continued in …"
        dialog.continued.connect(self.chat_made)
        dialog.finished.connect(dialog.deleteLater)
        self.handoff_dialog = dialog
        dialog.open()

    def _idle_pane(self, then: str) -> ConversationPane | None:
        """The chat shown, if no reply is coming in (else said: wait, or stop, then …)."""
        pane = self._shown()
        if pane is not None and pane.session.busy:
            self.status.emit(f"Wait for the reply to finish, or stop it, then {then}.")
            return None
        return pane

    # -- the window's ---------------------------------------------------------------------------

    @Slot()
    def open_trash(self) -> None:
        """View → Trash: restore a trashed chat, or delete it (or all) for good."""
        from desktop_app.ui.dialogs.trash_dialog import TrashDialog

        dialog = TrashDialog(self.engine, self.window)
        dialog.restored.connect(self._on_trash_restored)
        self.trash_dialog = dialog
        dialog.exec()
        self.trash_dialog = None

    @Slot(str)
    def _on_trash_restored(self, _chat_id: str) -> None:
        self.chats_changed.emit()
        self.status.emit("Restored from the trash.")

    @Slot()
    def open_usage(self) -> None:
        """View → Usage: spend and tokens by day, model, chat and project; the budgets."""
        from desktop_app.ui.dialogs.usage_dialog import UsageDialog

        UsageDialog(self.engine, self.window).exec()

    @Slot()
    def open_shortcuts(self) -> None:
        from desktop_app.ui.dialogs.shortcuts import ShortcutsDialog

        ShortcutsDialog(self.window.menuBar(), self.window).exec()
