"""What the selected MCP server offers beside its tools, in the tools view: its resources
(one attached to the message being written: its text under its URI, or an image) and its
prompts. Read off the window's thread: a server may take seconds to answer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

if TYPE_CHECKING:
    from desktop_app.chats import Engine
    from desktop_app.core.blocks import Block
    from desktop_app.core.errors import ErrorInfo
    from desktop_app.ui.workers import BackgroundWorker

URI_ROLE = Qt.ItemDataRole.UserRole + 1


class McpOffers(QWidget):
    """Signals: attached(str, list) — a resource's name and its blocks, for the message."""

    attached = Signal(str, object)

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
        row = QHBoxLayout()
        row.addWidget(self.title, 1)
        row.addWidget(self.attach_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.list)
        self.hide()

    def show_server(self, name: str, ready: bool, can_attach: bool) -> None:
        """The server's resources and prompts (asked now, off the window's thread)."""
        self.can_attach = can_attach
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
        if not self.isVisible() and not self.server:
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
        self.attach_button.setEnabled(bool(uri) and self.can_attach)

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
