"""Tools and MCP servers: each server with its state, its tools and what their definitions
cost in every request; for the chat on screen, a server or a single tool turned on or
off (only that chat's next requests change). Adding, importing, restarting and removing
servers run off the window's thread (a keyring or a server may take seconds)."""

from __future__ import annotations

import shlex
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop_app.chats import ServerView
from desktop_app.config.errors import SecretsNeedKeyring
from desktop_app.config.mcp_servers import ImportReport
from desktop_app.core.errors import ContextDeskError, ErrorInfo
from desktop_app.ui import theme
from desktop_app.ui.dialogs.mcp_offers import McpOffers
from desktop_app.ui.dialogs.web_choice import WebChoice

if TYPE_CHECKING:
    from desktop_app.chats import Chat, Engine
    from desktop_app.ui.workers import BackgroundWorker

NAME_ROLE = Qt.ItemDataRole.UserRole + 1
PAST_CHATS = (
    ("none of your other chats", "off"),
    ("this chat's project's other chats", "project"),
    ("all your other chats", "all"),
)


class McpWatcher(QObject):
    """Brings the servers' state changes (told on the hub's thread) to the window's.

    Signals:
    changed(str): a server's state changed (its name).
    """

    changed = Signal(str)

    def __init__(self, engine: Engine, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self._watched: object = None

    def watch(self) -> bool:
        """Listen to the servers there are now (again after the configuration changed);
        False while there are none."""
        hub = self.engine.mcp
        if hub is None:
            return False
        if hub is not self._watched:
            hub.listeners.append(self.changed.emit)  # a queued signal: safe from any thread
            self._watched = hub
        return True


class McpDialog(QDialog):
    """Signals:
    chat_tools_changed(): the chat's tools on/off changed (plan it again).
    servers_changed(): servers were added, removed or restarted.
    """

    chat_tools_changed = Signal()
    servers_changed = Signal()

    def __init__(
        self,
        engine: Engine,
        chat: Chat | None,
        background: BackgroundWorker,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("mcpDialog")
        self.setWindowTitle("Tools and MCP servers")
        self.engine = engine
        self.chat = chat
        self.background = background
        self._filling = False
        self._asking: QMessageBox | None = None  # the question about keeping env values in mcp.json
        if chat is not None:
            said = (
                f"Checked tools are offered to Claude in “{chat.title}”: each one's definition "
                "is sent with every request of this chat, and counted in its context."
            )
        else:
            said = (
                "Every chat offers all of these tools until you turn some off for it: open a "
                "chat, then come back here."
            )
        intro = QLabel(f"{said} Every MCP tool asks before it runs.")
        intro.setWordWrap(True)
        self.tree = QTreeWidget()
        self.tree.setObjectName("mcpTree")
        self.tree.setHeaderLabels(["Server / tool", "State", "Tokens"])
        self.tree.setColumnWidth(0, 260)
        self.tree.setColumnWidth(1, 260)
        self.tree.itemChanged.connect(self._on_tree_item_changed)
        self.tree.currentItemChanged.connect(self._on_tree_current_item_changed)
        self.details = QLabel()
        self.details.setObjectName("mcpDetails")
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.offers = McpOffers(engine, background)  # resources and prompts
        self.add_button = QPushButton("Add server…")
        self.import_button = QPushButton("Import from Claude desktop")
        self.restart_button = QPushButton("Restart")
        self.remove_button = QPushButton("Remove")
        self.add_button.clicked.connect(self._on_add_clicked)
        self.import_button.clicked.connect(self._on_import_clicked)
        self.restart_button.clicked.connect(self._on_restart_clicked)
        self.remove_button.clicked.connect(self._on_remove_clicked)
        row = QHBoxLayout()
        for button in (self.add_button, self.import_button, self.restart_button):
            row.addWidget(button)
        row.addStretch(1)
        row.addWidget(self.remove_button)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        # search_chats (chats/past_chats.py): off unless the user lets Claude look.
        self.past_chats = QComboBox()
        self.past_chats.setObjectName("searchChats")
        for words, value in PAST_CHATS:
            self.past_chats.addItem(words, value)
        self.past_chats.setToolTip(
            "A search_chats tool: each search is a tool step you see, asks before it runs, "
            "and never reads a chat in the trash"
        )
        if chat is not None:
            self.past_chats.setCurrentIndex(self.past_chats.findData(chat.settings.search_chats))
        self.past_chats.setEnabled(chat is not None)
        self.past_chats.activated.connect(self._on_past_chats_activated)
        past = QFormLayout()
        past.addRow("Claude may search", self.past_chats)
        taken = engine.model_facts(chat.model).web_search if chat is not None else True
        # the API's own tools
        self.web = WebChoice(chat, engine.connection.server_tools(), past, search_taken=taken)
        self.web.changed.connect(self.chat_tools_changed)
        self.web.failed.connect(self.details.setText)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(past)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.details)
        layout.addWidget(self.offers)
        layout.addLayout(row)
        layout.addWidget(close)
        self.resize(680, 600)
        self.refresh()

    @Slot(int)
    def _on_past_chats_activated(self, _index: int) -> None:
        chat = self.chat
        if chat is None:
            return
        value = str(self.past_chats.currentData())
        try:
            chat.setup.set_settings(replace(chat.settings, search_chats=value))
        except ContextDeskError as exc:
            self.details.setText(f"{exc.title}: {exc.message}")
            return
        self.chat_tools_changed.emit()

    # -- showing ------------------------------------------------------------------------------

    def _refresh_if_open(self) -> None:
        if self.isVisible():  # closed meanwhile: nothing to show (the data may be gone)
            self.refresh()

    def refresh(self) -> None:
        """Fill the tree from the servers' state now (keeps the selection)."""
        current = self.tree.currentItem()
        chosen = current.data(0, NAME_ROLE) if current else None
        self._filling = True
        self.tree.clear()
        views = self.engine.tool_servers.views(self.chat)
        for view in views:
            server = QTreeWidgetItem(self.tree, [view.name, _state(view), _tokens(view.tokens)])
            server.setData(0, NAME_ROLE, view.name)
            server.setToolTip(0, view.where)
            if view.protocol:
                server.setToolTip(1, f"MCP protocol {view.protocol}")
            if view.error or view.withheld:
                server.setForeground(1, theme.status_colour("error", theme.is_dark()))
                server.setToolTip(1, view.error or f"Its tools are withheld: {view.withheld}.")
            self._checkable(server, view.on)
            for tool in view.tools:
                item = QTreeWidgetItem(server, [tool.name, "", _tokens(tool.tokens)])
                item.setData(0, NAME_ROLE, tool.name)
                item.setToolTip(0, tool.description)
                self._checkable(item, tool.on and view.on)
                item.setDisabled(not view.on)
            if view.name == chosen or (chosen and str(chosen).startswith(f"{view.name}.")):
                self.tree.setCurrentItem(server)
        for name, why in self.engine.tool_servers.skipped().items():
            self._add_skipped(name, why)
        problem = self.engine.tool_servers.config_problem()
        if problem:
            broken = QTreeWidgetItem(self.tree, ["The configuration cannot be read", problem])
            broken.setToolTip(1, problem)
            broken.setForeground(1, theme.status_colour("error", theme.is_dark()))
        elif not views and not self.engine.tool_servers.skipped():
            empty = QTreeWidgetItem(self.tree, ["No MCP servers yet: add one, or import them."])
            empty.setFlags(Qt.ItemFlag.NoItemFlags)
        self._filling = False
        self._show_details()

    def _add_skipped(self, name: str, why: str) -> None:
        """An entry of mcp.json that cannot be used: named, with why (mend it there)."""
        row = QTreeWidgetItem(self.tree, [name, f"skipped: {why}"])
        row.setToolTip(1, f"{why} Mend it in {self.engine.tool_servers.config_path()}.")
        row.setForeground(1, theme.status_colour("error", theme.is_dark()))

    def _checkable(self, item: QTreeWidgetItem, on: bool) -> None:
        if self.chat is None:
            return  # nothing to turn on or off without a chat
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(0, Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)

    def _selected_server(self) -> ServerView | None:
        item = self.tree.currentItem()
        while item is not None and item.parent() is not None:
            item = item.parent()
        name = item.data(0, NAME_ROLE) if item else None
        return next((v for v in self.engine.tool_servers.views(self.chat) if v.name == name), None)

    def _show_details(self) -> None:
        view = self._selected_server()
        for button in (self.restart_button, self.remove_button):
            button.setEnabled(view is not None)
        if view is None:
            self.details.setText("")
            self.offers.show_server("", ready=False, can_attach=False)
            return
        self.offers.show_server(
            view.name,
            ready=view.status == "ready",
            can_attach=self.chat is not None,
            project_id=self.chat.info.project_id if self.chat is not None else None,
        )
        lines = [
            f"<b>{_escape(view.name)}</b> ({view.transport}): <code>{_escape(view.where)}</code>"
        ]
        if view.protocol:
            lines.append(f"Speaks MCP {view.protocol}")
        if view.secrets:
            lines.append("In the keyring: " + ", ".join(view.secrets))
        if view.in_file:
            lines.append(
                "In mcp.json (plain text, readable only by you): " + ", ".join(view.in_file)
            )
        if view.error:
            lines.append(f"<b>{view.status.capitalize()}</b>: {_escape(view.error)}")
        if view.withheld:
            lines.append(
                f"<b>Its tools are withheld from every chat</b>: {_escape(view.withheld)}. "
                "Raise the limit in mcp.json, or ask the server for fewer tools."
            )
        if view.log_path:
            lines.append(f"Its output: {view.log_path}")
        self.details.setText("<br>".join(lines))

    # -- acting -------------------------------------------------------------------------------

    @Slot(QTreeWidgetItem, int)
    def _on_tree_item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        if self._filling or column != 0 or self.chat is None:
            return
        name = item.data(0, NAME_ROLE)
        if not name:
            return
        on = item.checkState(0) == Qt.CheckState.Checked
        try:
            self.engine.tool_servers.set_on(self.chat, str(name), on)
        except ContextDeskError as exc:
            self.details.setText(f"<b>{exc.title}</b>: {_escape(exc.message)}")
            return
        self.chat_tools_changed.emit()
        # Not now: the tree is still inside this item's signal; clearing it here would
        # delete the item under Qt's feet.
        QTimer.singleShot(0, self, self._refresh_if_open)

    @Slot()
    def _on_tree_current_item_changed(self) -> None:
        self._show_details()

    @Slot()
    def _on_add_clicked(self) -> None:
        dialog = AddServerDialog(self)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return
        values = dialog.values()
        self._in_background(
            "mcp-add",
            lambda: self.engine.tool_servers.add(**values),
            f"Adding {values['name']}…",
        )

    @Slot()
    def _on_import_clicked(self) -> None:
        self._import(env_in_file=False)

    def _import(self, *, env_in_file: bool) -> None:
        servers = self.engine.tool_servers

        def run() -> ImportReport | SecretsNeedKeyring:
            try:
                return servers.import_claude_desktop(env_in_file=env_in_file)
            except SecretsNeedKeyring as refused:  # a question for the user, not an error
                return refused

        self.details.setText("Reading Claude desktop's configuration…")
        self.background.submit("mcp-import", run, self._imported, self._failed)

    def _imported(self, result: ImportReport | SecretsNeedKeyring) -> None:
        if isinstance(result, SecretsNeedKeyring):
            self._ask_to_keep_env_in_file(result)
            return
        said = [f"Added: {', '.join(result.added)}." if result.added else "Nothing new to add."]
        said += [f"Skipped {_escape(s)}" for s in result.skipped]
        said += [_escape(w) for w in result.warnings]
        if result.in_file:
            path = self.engine.tool_servers.config_path()
            said.append(
                f"The env values of {', '.join(result.in_file)} are kept in plain text in "
                f"{_escape(str(path))}, readable only by you."
            )
        self._after_change("<br>".join(said))

    def _ask_to_keep_env_in_file(self, refused: SecretsNeedKeyring) -> None:
        path = self.engine.tool_servers.config_path()
        box = QMessageBox(
            QMessageBox.Icon.Question,
            refused.title,
            refused.message,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            self,
        )
        box.setObjectName("keepEnvInFile")
        box.setInformativeText(
            f"Keep their values in {path} instead? The file is readable only by you, but "
            "the values are in plain text there, and a backup of your files may copy them."
        )
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.finished.connect(self._on_keep_env_in_file_finished)
        self._asking = box
        self.details.setText("Nothing was imported yet: see the question.")
        box.open()

    @Slot()
    def _on_keep_env_in_file_finished(self) -> None:
        box, self._asking = self._asking, None
        if box is not None and box.clickedButton() is box.button(QMessageBox.StandardButton.Yes):
            self._import(env_in_file=True)
        else:
            self.details.setText("Nothing was imported.")

    @Slot()
    def _on_restart_clicked(self) -> None:
        view = self._selected_server()
        if view is not None:
            name = view.name
            self._in_background(
                "mcp-restart", lambda: self.engine.tool_servers.restart(name), f"Restarting {name}…"
            )

    @Slot()
    def _on_remove_clicked(self) -> None:
        view = self._selected_server()
        if view is not None:
            name = view.name
            self._in_background(
                "mcp-remove", lambda: self.engine.tool_servers.remove(name), f"Removing {name}…"
            )

    def _in_background(self, key: str, run: Any, saying: str) -> None:
        self.details.setText(saying)
        self.background.submit(key, run, lambda _result: self._after_change(""), self._failed)

    def _after_change(self, said: str) -> None:
        self.engine.tool_servers.start()  # new ones start now, in the background
        self.servers_changed.emit()
        self.refresh()
        if said:
            self.details.setText(said)

    def _failed(self, error: ErrorInfo) -> None:
        self.refresh()
        self.details.setText(f"<b>{error.title}</b>: {_escape(error.message)}")


class AddServerDialog(QDialog):
    """A server as Claude desktop's config has it: a command line (stdio) or a URL
    (Streamable HTTP), with environment variables or headers kept in the keyring."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("addServerDialog")
        self.setWindowTitle("Add an MCP server")
        self.name = QLineEdit()
        self.name.setPlaceholderText("git")
        self.command = QLineEdit()
        self.command.setPlaceholderText("uvx mcp-server-git   or   https://example.com/mcp")
        self.secrets = QPlainTextEdit()
        self.secrets.setPlaceholderText("GITHUB_TOKEN=…  (one per line; kept in the keyring)")
        self.secrets.setMaximumHeight(90)
        self.problem = QLabel()
        self.problem.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("Command or URL", self.command)
        form.addRow("Environment / headers", self.secrets)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self._on_ok)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)
        self.resize(520, self.sizeHint().height())

    def values(self) -> dict[str, Any]:
        """The server as `ToolServers.add` takes it."""
        target = self.command.text().strip()
        pairs = {}
        for line in self.secrets.toPlainText().splitlines():
            key, sep, value = line.partition("=")
            if sep and key.strip():
                pairs[key.strip()] = value.strip()
        url = target if target.startswith(("http://", "https://")) else ""
        return {
            "name": self.name.text().strip(),
            "command": [] if url else shlex.split(target, posix=sys.platform != "win32"),
            "url": url,
            "env": {} if url else pairs,
            "headers": pairs if url else {},
        }

    @Slot()
    def _on_ok(self) -> None:
        try:
            values = self.values()
        except ValueError as exc:  # an unbalanced quote
            self.problem.setText(f"The command line cannot be read: {exc}.")
            return
        if not values["name"]:
            self.problem.setText("Give the server a name.")
        elif not values["command"] and not values["url"]:
            self.problem.setText("Give the command that runs it, or its URL.")
        else:
            self.accept()


def _state(view: ServerView) -> str:
    if view.withheld:
        return f"ready · tools withheld: {view.withheld}"
    if view.status == "ready":
        return f"ready · {len(view.tools)} tools"
    return f"{view.status}: {view.error}" if view.error else view.status


def _tokens(tokens: int) -> str:
    return f"≈{tokens:,}" if tokens else ""


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
