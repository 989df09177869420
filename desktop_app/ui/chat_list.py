"""The chat list: every chat by last activity, searchable as you type, with its message
count and size; new, rename, delete to the trash with Undo.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QByteArray,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QPushButton,
    QSizePolicy,
    QStyledItemDelegate,
    QVBoxLayout,
    QWidget,
)

from desktop_app.storage.store import ChatInfo

Index = QModelIndex | QPersistentModelIndex
CHAT_ROLE = Qt.ItemDataRole.UserRole + 1
ID_ROLE = Qt.ItemDataRole.UserRole + 2
UNDO_SECONDS = 10


class ChatListModel(QAbstractListModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._chats: list[ChatInfo] = []

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 — Qt's signature
        return 0 if parent.isValid() else len(self._chats)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._chats):
            return None
        chat = self._chats[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{chat.title}\n{_describe(chat)}"
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{chat.title}\n{_describe(chat)}\nmodel {chat.model}"
        if role == CHAT_ROLE:
            return chat
        if role == ID_ROLE:
            return chat.id
        if role == Qt.ItemDataRole.EditRole:
            return chat.title
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        """Rows are editable: the title is renamed in place (F2, double-click, the menu)."""
        return (
            super().flags(index) | Qt.ItemFlag.ItemIsEditable
            if index.isValid()
            else Qt.ItemFlag.NoItemFlags
        )

    def roleNames(self) -> dict[int, QByteArray]:
        return {
            int(Qt.ItemDataRole.DisplayRole): QByteArray(b"display"),
            int(CHAT_ROLE): QByteArray(b"chat"),
            int(ID_ROLE): QByteArray(b"id"),
        }

    def set_chats(self, chats: Sequence[ChatInfo]) -> None:
        self.beginResetModel()
        self._chats = list(chats)
        self.endResetModel()

    def update_chat(self, chat: ChatInfo) -> None:
        """One chat changed: its row is updated (and moved to the top if it was used)."""
        row = self.row_of(chat.id)
        if row is None:
            self.beginInsertRows(QModelIndex(), 0, 0)
            self._chats.insert(0, chat)
            self.endInsertRows()
            return
        moved = chat.updated_at > self._chats[row].updated_at and row > 0
        if moved:
            self.beginMoveRows(QModelIndex(), row, row, QModelIndex(), 0)
            self._chats.pop(row)
            self._chats.insert(0, chat)
            self.endMoveRows()
            row = 0
        else:
            self._chats[row] = chat
        index = self.index(row)
        self.dataChanged.emit(index, index)

    def remove_chat(self, chat_id: str) -> None:
        row = self.row_of(chat_id)
        if row is not None:
            self.beginRemoveRows(QModelIndex(), row, row)
            self._chats.pop(row)
            self.endRemoveRows()

    def row_of(self, chat_id: str) -> int | None:
        return next((i for i, c in enumerate(self._chats) if c.id == chat_id), None)

    def chats(self) -> Sequence[ChatInfo]:
        return self._chats


class ChatListPanel(QWidget):
    """Signals:
    chat_selected(str): the user picked a chat.
    new_requested(): "New chat".
    rename_requested(str, str): chat id, new title.
    delete_requested(str): move to the trash.
    undo_delete_requested(str): take it back out.
    export_requested(str, str): chat id, "json" or "md".
    """

    chat_selected = Signal(str)
    new_requested = Signal()
    rename_requested = Signal(str, str)
    delete_requested = Signal(str)
    undo_delete_requested = Signal(str)
    export_requested = Signal(str, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ChatListModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setFilterRole(Qt.ItemDataRole.EditRole)
        self.search = QLineEdit()
        self.search.setObjectName("chatSearch")
        self.search.setPlaceholderText("Search chats (Ctrl+K)")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self.proxy.setFilterFixedString)
        self.new_button = QPushButton("New chat")
        self.new_button.setToolTip("New chat (Ctrl+N)")
        self.new_button.clicked.connect(self.new_requested)
        self.list = _ChatListView(self)
        self.list.setModel(self.proxy)
        self.list.selectionModel().currentChanged.connect(self._on_list_current_changed)
        self.model.dataChanged.connect(self._on_model_data_changed)
        self.empty = QLabel("No chats yet.\nPress “New chat” to start one.")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self.empty.setMargin(24)
        self.empty.setWordWrap(True)
        self.undo_bar = QWidget()
        self.undo_label = QLabel()
        self.undo_label.setWordWrap(True)  # a long title wraps; the window never grows for it
        self.undo_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.undo_button = QPushButton("Undo")
        self.undo_button.clicked.connect(self._on_undo_clicked)
        undo_layout = QHBoxLayout(self.undo_bar)
        undo_layout.setContentsMargins(0, 0, 0, 0)
        undo_layout.addWidget(self.undo_label, 1)
        undo_layout.addWidget(self.undo_button)
        self.undo_bar.hide()
        self._undo_id = ""
        self._undo_timer = QTimer(self)
        self._undo_timer.setSingleShot(True)
        self._undo_timer.timeout.connect(self.undo_bar.hide)

        top = QHBoxLayout()
        top.addWidget(self.search, 1)
        top.addWidget(self.new_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 0, 6)
        layout.addLayout(top)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.empty, 1)
        layout.addWidget(self.undo_bar)
        self._show_empty_state()

    def set_chats(self, chats: Sequence[ChatInfo]) -> None:
        self.model.set_chats(chats)
        self._show_empty_state()

    def update_chat(self, chat: ChatInfo) -> None:
        self.model.update_chat(chat)
        self._show_empty_state()

    def sync(self, chats: Sequence[ChatInfo]) -> None:
        """Show the chats as stored now (another program changed some): rows come, go
        and change one by one, so a selection or a rename in progress survives."""
        wanted = {chat.id for chat in chats}
        for gone in [c.id for c in self.model.chats() if c.id not in wanted]:
            self.model.remove_chat(gone)
        shown = {c.id: c for c in self.model.chats()}
        for chat in reversed(chats):  # oldest first: each changed one moves to the top
            if shown.get(chat.id) != chat:
                self.model.update_chat(chat)
        self._show_empty_state()

    def select(self, chat_id: str) -> None:
        row = self.model.row_of(chat_id)
        if row is None:
            return
        index = self.proxy.mapFromSource(self.model.index(row))
        if not index.isValid():  # hidden by the search: clear it so the chat shows
            self.search.clear()
            index = self.proxy.mapFromSource(self.model.index(row))
        self.list.setCurrentIndex(index)

    def selected_id(self) -> str | None:
        index = self.list.currentIndex()
        return index.data(ID_ROLE) if index.isValid() else None

    def removed(self, chat: ChatInfo) -> None:
        """A chat went to the trash: offer Undo for a while."""
        self.model.remove_chat(chat.id)
        self._undo_id = chat.id
        self.undo_label.setText(f"“{_short(chat.title)}” moved to the trash.")
        self.undo_bar.show()
        self._undo_timer.start(UNDO_SECONDS * 1000)
        self._show_empty_state()

    def focus_search(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    def rename(self, chat_id: str) -> None:
        row = self.model.row_of(chat_id)
        if row is not None:
            self.list.edit(self.proxy.mapFromSource(self.model.index(row)))

    def _show_empty_state(self) -> None:
        empty = self.model.rowCount() == 0
        self.empty.setVisible(empty)
        self.list.setVisible(not empty)

    @Slot(QModelIndex, QModelIndex)
    def _on_list_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self.chat_selected.emit(current.data(ID_ROLE))

    @Slot()
    def _on_model_data_changed(self) -> None:
        if self.list.state() is QAbstractItemView.State.EditingState:
            return  # re-filtering would close a rename in progress (and lose what was typed)
        self.proxy.invalidate()

    @Slot()
    def _on_undo_clicked(self) -> None:
        self.undo_bar.hide()
        if self._undo_id:
            self.undo_delete_requested.emit(self._undo_id)
            self._undo_id = ""


class _ChatListView(QListView):
    def __init__(self, panel: ChatListPanel) -> None:
        super().__init__(panel)
        self.panel = panel
        self.setObjectName("chatList")
        self.setEditTriggers(
            QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.DoubleClicked
        )
        self.setSpacing(2)
        self.setUniformItemSizes(True)
        self.setItemDelegate(_RenameDelegate(panel, self))

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        index = self.indexAt(event.pos())
        if index.isValid():
            self.menu_for(index).exec(event.globalPos())

    def menu_for(self, index: QModelIndex) -> QMenu:
        """The right-click menu of one chat."""
        chat_id = index.data(ID_ROLE)
        menu = QMenu(self)
        menu.addAction("Rename", lambda: self.edit(index))
        menu.addAction("Export as JSON…", lambda: self.panel.export_requested.emit(chat_id, "json"))
        menu.addAction(
            "Export as Markdown…", lambda: self.panel.export_requested.emit(chat_id, "md")
        )
        menu.addSeparator()
        menu.addAction("Move to trash", lambda: self.panel.delete_requested.emit(chat_id))
        return menu


class _RenameDelegate(QStyledItemDelegate):
    """Edits the title in place (F2 or the menu); the new title goes to the window."""

    def __init__(self, panel: ChatListPanel, parent: QWidget) -> None:
        super().__init__(parent)
        self.panel = panel

    def setEditorData(self, editor: QWidget, index: Index) -> None:
        """The row changing meanwhile (its size counted, a reply streaming) must not
        overwrite what the user is typing."""
        if isinstance(editor, QLineEdit) and editor.isModified():
            return
        super().setEditorData(editor, index)
        if isinstance(editor, QLineEdit):
            editor.selectAll()  # as when it opened: typing replaces the title

    def setModelData(self, editor: QWidget, model: Any, index: Index) -> None:
        title = editor.text().strip() if isinstance(editor, QLineEdit) else ""
        if title:
            self.panel.rename_requested.emit(index.data(ID_ROLE), title)


def _describe(chat: ChatInfo) -> str:
    count = f"{chat.message_count:,} message{'s' if chat.message_count != 1 else ''}"
    size = f" · ≈{_compact(chat.token_total)} tokens" if chat.token_total else ""
    return f"{count}{size} · {_ago(chat.updated_at)}"


def _compact(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{n / 1000:.0f}k"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)


def _ago(when: float) -> str:
    seconds = max(0.0, time.time() - when)
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    return time.strftime("%d %b %Y", time.localtime(when))


def _short(title: str) -> str:
    return title if len(title) <= 40 else title[:39] + "…"
