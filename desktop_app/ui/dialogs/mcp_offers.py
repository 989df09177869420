"""What the selected MCP server offers beside its tools, in the tools view: its resources
(one attached to the message being written — its text under its URI, or an image — or
added to the chat's project as knowledge) and its prompts (one filled in, its arguments
asked for, as the draft). Read off the window's thread: a server may take seconds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.blocks import TextBlock

if TYPE_CHECKING:
    from desktop_app.chats import Engine
    from desktop_app.core.blocks import Block
    from desktop_app.core.errors import ErrorInfo
    from desktop_app.tools.mcp_catalog import McpPrompt
    from desktop_app.ui.workers import BackgroundWorker

URI_ROLE = Qt.ItemDataRole.UserRole + 1
PROMPT_ROLE = Qt.ItemDataRole.UserRole + 2  # an `McpPrompt`


class McpOffers(QWidget):
    """Signals: attached(str, list) — a resource's name and its blocks, for the message;
    prompted(str) — a prompt's text, for the draft; told(str) — a passing word."""

    attached = Signal(str, object)
    prompted = Signal(str)
    told = Signal(str)

    def __init__(
        self, engine: Engine, background: BackgroundWorker, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.engine = engine
        self.background = background
        self.server = ""
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.list = QListWidget()
        self.list.setObjectName("mcpOffers")
        self.list.setMaximumHeight(140)
        self.list.currentItemChanged.connect(self._on_current_item_changed)
        self.attach_button = QPushButton("Attach to the message")
        self.attach_button.setObjectName("attachResource")
        self.attach_button.setToolTip("The resource goes into the message you are writing")
        self.attach_button.setEnabled(False)
        self.attach_button.clicked.connect(self._on_attach_clicked)
        self.knowledge_button = QPushButton("Add to the project's knowledge")
        self.knowledge_button.setObjectName("resourceToProject")
        self.knowledge_button.setEnabled(False)
        self.knowledge_button.clicked.connect(self._on_knowledge_clicked)
        self.prompt_button = QPushButton("Use as the draft…")
        self.prompt_button.setObjectName("usePrompt")
        self.prompt_button.setToolTip("Fill in the prompt's arguments; its text becomes the draft")
        self.prompt_button.setEnabled(False)
        self.prompt_button.clicked.connect(self._on_prompt_clicked)
        self.can_attach = False
        self.project_id: str | None = None
        row = QHBoxLayout()
        for button in (self.attach_button, self.knowledge_button, self.prompt_button):
            row.addWidget(button)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.list)
        layout.addLayout(row)
        self.hide()

    def show_server(
        self, name: str, ready: bool, can_attach: bool, project_id: str | None = None
    ) -> None:
        """The server's resources and prompts (asked now, off the window's thread)."""
        self.can_attach, self.project_id = can_attach, project_id
        if not ready:
            self.server = ""
            self.hide()
            return
        if name == self.server:
            return
        self.server = name
        self.list.clear()
        self.title.setText(f"Asking {name} for its resources and prompts…")
        self.show()
        servers = self.engine.tool_servers

        def ask() -> tuple[Any, Any]:
            return servers.resources(name), servers.prompts(name)

        self.background.submit(f"mcp-offers-{name}", ask, self._show, self._failed)

    def _show(self, found: tuple[Any, Any]) -> None:
        resources, prompts = found
        if not self.server:  # (the server was unselected meanwhile)
            return
        self.list.clear()
        for r in resources:
            item = QListWidgetItem(
                f"{r.uri} — {r.name}" + (f" ({r.mime_type})" if r.mime_type else "")
            )
            item.setToolTip(r.description)
            item.setData(URI_ROLE, r.uri)
            self.list.addItem(item)
        for p in prompts:
            takes = ", ".join(n + ("" if required else "?") for n, _d, required in p.arguments)
            item = QListWidgetItem(f"/{p.name}({takes})")
            item.setToolTip(p.description or "A prompt of the server")
            item.setData(PROMPT_ROLE, p)
            self.list.addItem(item)
        self.title.setText(
            f"{self.server} offers {len(resources)} resource(s) and {len(prompts)} prompt(s) "
            "beside its tools"
        )

    def _failed(self, error: ErrorInfo) -> None:
        self.title.setText(f"{self.server}: {error.message}")

    @Slot(QListWidgetItem, QListWidgetItem)
    def _on_current_item_changed(self, item: QListWidgetItem | None, _old: object) -> None:
        uri = item.data(URI_ROLE) if item is not None else None
        prompt = item.data(PROMPT_ROLE) if item is not None else None
        self.attach_button.setEnabled(bool(uri) and self.can_attach)
        self.knowledge_button.setEnabled(bool(uri) and self.project_id is not None)
        self.prompt_button.setEnabled(prompt is not None and self.can_attach)

    @Slot()
    def _on_attach_clicked(self) -> None:
        item = self.list.currentItem()
        uri = item.data(URI_ROLE) if item is not None else None
        if not uri:
            return
        server, servers = self.server, self.engine.tool_servers

        def read() -> list[Block]:
            return servers.resource_blocks(server, str(uri))

        self.background.submit(
            f"mcp-read-{server}",
            read,
            lambda blocks: self.attached.emit(str(uri), blocks),
            self._failed,
        )

    @Slot()
    def _on_knowledge_clicked(self) -> None:
        """The resource's text, as a knowledge file of the chat's project."""
        item, project = self.list.currentItem(), self.project_id
        uri = item.data(URI_ROLE) if item is not None else None
        if not uri or project is None:
            return
        server, engine = self.server, self.engine

        def read() -> list[Block]:
            return engine.tool_servers.resource_blocks(server, str(uri))

        def add(blocks: list[Block]) -> None:
            text = "\n\n".join(b.text for b in blocks if isinstance(b, TextBlock))
            engine.projects.add_text(project, str(uri), text)
            self.told.emit(f"Added {uri} to the project's knowledge")

        self.background.submit(f"mcp-read-{server}", read, add, self._failed)

    @Slot()
    def _on_prompt_clicked(self) -> None:
        """Ask for the prompt's arguments (a required one may not be left empty), then
        its text becomes the draft."""
        item = self.list.currentItem()
        prompt = item.data(PROMPT_ROLE) if item is not None else None
        if prompt is None:
            return
        arguments = ask_arguments(self, prompt)
        if arguments is None:
            return  # (cancelled: nothing changes)
        server, servers = self.server, self.engine.tool_servers

        def fill() -> str:
            return servers.prompt_text(server, prompt.name, arguments)

        self.background.submit(f"mcp-prompt-{server}", fill, self.prompted.emit, self._failed)


def ask_arguments(parent: QWidget, prompt: McpPrompt) -> dict[str, str] | None:
    """A prompt's arguments, asked one by one (a required one may not be left empty);
    None when the person cancels."""
    arguments: dict[str, str] = {}
    for name, description, required in prompt.arguments:
        value, ok = QInputDialog.getText(
            parent,
            f"/{prompt.name}",
            f"{name}{'' if required else ' (optional)'}"
            + (f": {description}" if description else ""),
        )
        if not ok or (required and not value.strip()):
            return None
        if value.strip():
            arguments[name] = value.strip()
    return arguments
