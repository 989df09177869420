"""A project as a page of its own, as Claude desktop's and ChatGPT's projects are: chosen
in the chat list's project filter, it takes the conversation's place — its name, what it
costs and earns from the prompt cache, a new chat in it, its chats (a click opens one)
and, beside them, the project itself edited in place (`ProjectEditor`): instructions,
pinned facts, knowledge files with their tokens and budget, its cap and what its new
chats start with. Opening a chat shows the chat again."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from desktop_app import said
from desktop_app.core.errors import ContextDeskError
from desktop_app.ui import theme
from desktop_app.ui.projects.project_editor import ProjectEditor

if TYPE_CHECKING:
    from desktop_app.chats import Engine
    from desktop_app.context.project import Project

CHAT_ROLE = Qt.ItemDataRole.UserRole + 1
PAGE_PX = 780  # the page's column at most (the conversation's reading width)
ROWS_SHOWN = 8  # chats listed before the list scrolls


class ProjectPage(QScrollArea):
    """Signals:
    open_requested(str): show this chat of the project.
    new_chat_requested(str): start a chat in this project (its id).
    changed(): the project changed (its chats plan again).
    """

    open_requested = Signal(str)
    new_chat_requested = Signal(str)
    changed = Signal()

    def __init__(self, engine: Engine, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("projectPage")
        self.setWidgetResizable(True)
        self.setFrameShape(QScrollArea.Shape.NoFrame)
        self.engine = engine
        self.project_id = ""
        self.title = QLabel()
        self.title.setObjectName("projectPageTitle")
        self.title.setFont(theme.font(self.title.font(), "title"))
        self.summary = QLabel()  # its chats, what they cost, what the cache saved
        self.summary.setObjectName("projectPageSummary")
        self.summary.setWordWrap(True)
        self.new_chat = QPushButton("New chat in this project")
        self.new_chat.setObjectName("projectNewChat")
        self.new_chat.clicked.connect(self._on_new_chat_clicked)
        self.chats = QListWidget()
        self.chats.setObjectName("projectPageChats")
        self.chats.setWordWrap(True)
        self.chats.setSpacing(theme.space(1))
        self.chats.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.chats.itemActivated.connect(self._on_chat_item_activated)
        self.chats.itemClicked.connect(self._on_chat_item_activated)
        self.editor = ProjectEditor(
            engine, self._project, "What every chat of it holds", show_cache=False
        )
        self.editor.changed.connect(self._on_editor_changed)

        chats_title = QLabel("Its chats")
        chats_title.setFont(theme.font(chats_title.font(), "heading"))
        inner = QWidget()  # one reading column, centred: the conversation's width
        inner.setMaximumWidth(PAGE_PX)
        column = QVBoxLayout(inner)
        column.setContentsMargins(theme.space(6), theme.space(6), theme.space(6), theme.space(6))
        column.setSpacing(theme.space(3))
        column.addWidget(self.title)
        column.addWidget(self.summary)
        column.addWidget(self.new_chat, 0, Qt.AlignmentFlag.AlignLeft)
        column.addWidget(chats_title)
        column.addWidget(self.chats)
        column.addWidget(self.editor)
        column.addStretch(1)
        page = QWidget()
        row = QHBoxLayout(page)
        row.addStretch(1)
        row.addWidget(inner, 8)
        row.addStretch(1)
        self.setWidget(page)

    def _project(self) -> Project | None:
        if not self.project_id:
            return None
        try:
            return self.engine.projects.find(self.project_id)
        except ContextDeskError:  # deleted meanwhile: nothing to show
            return None

    def show_project(self, project_id: str) -> None:
        self.project_id = project_id
        self.refresh()

    def refresh(self) -> None:
        project = self._project()
        self.title.setText(project.name if project else "No such project")
        self.new_chat.setEnabled(project is not None)
        self.chats.clear()
        self.editor.refresh()
        if project is None:
            self.summary.setText("It was deleted; choose another in the chat list.")
            return
        projects = self.engine.projects
        ids = set(projects.chats(project.id))
        infos = {info.id: info for info in self.engine.list_chats() if info.id in ids}
        for info in sorted(infos.values(), key=lambda i: i.updated_at, reverse=True):
            when = time.strftime("%b %d", time.localtime(info.updated_at))
            line = f"{info.message_count:,} messages · {info.model} · {when}"
            item = QListWidgetItem(f"{info.title}\n{line}", self.chats)
            item.setData(CHAT_ROLE, info.id)
            item.setToolTip("Open this chat")
        if not infos:
            QListWidgetItem("No chats yet: start one with the button above.", self.chats).setFlags(
                Qt.ItemFlag.NoItemFlags
            )
        rows = min(max(1, self.chats.count()), ROWS_SHOWN)  # the list as tall as its chats
        row = self.chats.sizeHintForRow(0) if self.chats.count() else 24
        self.chats.setFixedHeight(rows * (row + 2 * theme.space(1)) + 2 * self.chats.frameWidth())
        read, sent = projects.cache_reads(project)
        spend = projects.spend(project)
        files = len(project.files)
        self.summary.setText(
            f"{len(infos):,} chat{'s' * (len(infos) != 1)} · {files:,} knowledge "
            f"file{'s' * (files != 1)} · spent: {said.spend_in_window(spend)} · read from "
            f"the prompt cache: {read:,} tokens in {sent:,} requests"
        )

    @Slot()
    def _on_new_chat_clicked(self) -> None:
        if self.project_id:
            self.new_chat_requested.emit(self.project_id)

    @Slot(QListWidgetItem)
    def _on_chat_item_activated(self, item: QListWidgetItem) -> None:
        chat_id = item.data(CHAT_ROLE)
        if chat_id:
            self.open_requested.emit(str(chat_id))

    @Slot()
    def _on_editor_changed(self) -> None:
        self.changed.emit()
