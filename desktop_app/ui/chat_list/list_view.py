"""The chat list's view (`ChatListView`): the rows of `ChatListModel`, painted by
`ChatRowDelegate`; renaming in place, the right-click menu, and keys that open a chat.
`ChatListPanel` owns it and makes it when first needed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QModelIndex, SignalInstance
from PySide6.QtGui import QContextMenuEvent, QFocusEvent, QKeyEvent, QMouseEvent
from PySide6.QtWidgets import QAbstractItemView, QFrame, QListView, QMenu, QWidget

from desktop_app.ui.chat_list.model import CHAT_ROLE
from desktop_app.ui.chat_list.row_delegate import ChatRowDelegate
from desktop_app.ui.qt_later import Qt

if TYPE_CHECKING:
    from desktop_app.storage.chat_info import ChatInfo


class ListOwner(Protocol):
    """What the view asks of the panel it is in (`ChatListPanel`)."""

    first_frame_shown: bool
    _quiet: bool  # rows made current now are not the user's choice
    rename_requested: SignalInstance
    pin_requested: SignalInstance
    project_requested: SignalInstance
    export_requested: SignalInstance
    archive_requested: SignalInstance
    delete_requested: SignalInstance

    def activate(self, index: QModelIndex) -> None: ...


class ChatListView(QListView):
    def __init__(self, panel: ListOwner) -> None:
        super().__init__()  # (the panel places it)
        self.panel = panel
        self.setObjectName("chatList")
        # A sidebar, not a box: no frame, the window's colour behind the rows
        self.setFrameShape(QFrame.Shape.NoFrame)
        # A viewport of our own, which (unlike the one made for us) does not fill its
        # background. (Asking for the made one, `viewport()`, costs ~30 ms of start-up:
        # to type a returned QWidget, Qt for Python makes every QWidget subclass's enums.)
        self.setViewport(QWidget())
        self.setEditTriggers(
            QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.DoubleClicked
        )
        self.setMouseTracking(True)  # the hover highlight
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        delegate = ChatRowDelegate(self)
        delegate.renamed.connect(panel.rename_requested)
        self.setItemDelegate(delegate)
        # Rows differ in height (a group's first has its header): laid out in batches,
        # so thousands of chats never hold the window up. (A batch smaller than the rows
        # listed — 50 of 300 — left the list blank for the first frames under X11.)
        self.setLayoutMode(QListView.LayoutMode.Batched)
        self.setBatchSize(200)

    def focusInEvent(self, event: QFocusEvent) -> None:
        """Qt makes the first row current when the list gets the focus with none: that
        is not the user choosing a chat, so it opens nothing. (Nor is it done as the
        window first shows: asking the row's flags makes `Qt`'s ~90 enums, ~15 ms.)"""
        if not self.panel.first_frame_shown:
            QWidget.focusInEvent(self, event)
            return
        self.panel._quiet = True
        try:
            super().focusInEvent(event)
        finally:
            self.panel._quiet = False

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and (
            self.state() is not QAbstractItemView.State.EditingState
        ):
            self.panel.activate(self.currentIndex())
            return
        super().keyPressEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.RightButton:
            event.accept()  # the menu, not another chat: right-click opens nothing
            return
        super().mousePressEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        index = self.indexAt(event.pos())
        if index.isValid():
            self.menu_for(index).exec(event.globalPos())

    def menu_for(self, index: QModelIndex) -> QMenu:
        """The right-click menu of one chat."""
        chat: ChatInfo = index.data(CHAT_ROLE)
        panel = self.panel
        menu = QMenu(self)
        menu.addAction("Rename", lambda: self.edit(index))
        pinned = chat.pinned_at is not None
        menu.addAction(
            "Unpin" if pinned else "Pin to top",
            lambda: panel.pin_requested.emit(chat.id, not pinned),
        )
        menu.addAction("Project…", lambda: panel.project_requested.emit(chat.id))
        menu.addAction("Export as JSON…", lambda: panel.export_requested.emit(chat.id, "json"))
        menu.addAction("Export as Markdown…", lambda: panel.export_requested.emit(chat.id, "md"))
        menu.addSeparator()
        archived = chat.archived_at is not None
        menu.addAction(
            "Unarchive" if archived else "Archive",
            lambda: panel.archive_requested.emit(chat.id, not archived),
        )
        menu.addAction("Move to trash", lambda: panel.delete_requested.emit(chat.id))
        return menu
