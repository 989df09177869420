"""The chat list: pinned chats on top, then every chat under its date (Today, Yesterday,
Previous 7 days, …), a mark on a chat that is answering in the background or has failed;
search across titles and messages as you type; new, rename, pin, archive, and delete to
the trash with Undo.

One model row per chat, painted by a delegate (group headers included), so thousands of
chats cost no widgets. Searching never opens a chat or moves the focus: the list shows
the chats that match, each with the text around its newest match; a click or Enter opens
the chat at that message.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QByteArray,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRect,
    QSize,
    Qt,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtGui import (
    QColor,
    QContextMenuEvent,
    QFocusEvent,
    QFont,
    QFontMetrics,
    QKeyEvent,
    QMouseEvent,
    QPainter,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QPushButton,
    QSizePolicy,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from desktop_app.storage.search import MARK_END, MARK_START, SearchHit
from desktop_app.storage.store import ChatInfo

Index = QModelIndex | QPersistentModelIndex
CHAT_ROLE = Qt.ItemDataRole.UserRole + 1
ID_ROLE = Qt.ItemDataRole.UserRole + 2
GROUP_ROLE = Qt.ItemDataRole.UserRole + 3  # the header the row sits under
HEADER_ROLE = Qt.ItemDataRole.UserRole + 6  # that header if the row starts its group, or ""
HIT_ROLE = Qt.ItemDataRole.UserRole + 4  # while searching: the chat's newest match
ACTIVITY_ROLE = Qt.ItemDataRole.UserRole + 5  # "answering", "failed" or ""
UNDO_SECONDS = 10
SEARCH_DELAY_MS = 150  # search once typing pauses, not on every key
PINNED = "Pinned"


class Activity:
    ANSWERING = "answering"
    FAILED = "failed"


class ChatListModel(QAbstractListModel):
    """The chats shown: pinned first, then by last activity (or, while searching, the
    chats that match in the order of their newest match)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._chats: list[ChatInfo] = []
        self._groups: list[str] = []  # each row's header, kept with the rows (`_regroup`)
        self._hits: dict[str, SearchHit] = {}
        self._activity: dict[str, str] = {}
        self.searching = False

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 — Qt's signature
        return 0 if parent.isValid() else len(self._chats)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._chats):
            return None
        chat = self._chats[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{chat.title}\n{self._second_line(chat)}"
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{chat.title}\n{_describe(chat)}\nmodel {chat.model}"
        if role == CHAT_ROLE:
            return chat
        if role == ID_ROLE:
            return chat.id
        if role == Qt.ItemDataRole.EditRole:
            return chat.title
        if role == GROUP_ROLE:
            return self._groups[index.row()]
        if role == HEADER_ROLE:
            row = index.row()
            starts = row == 0 or self._groups[row - 1] != self._groups[row]
            return self._groups[row] if starts else ""
        if role == HIT_ROLE:
            return self._hits.get(chat.id)
        if role == ACTIVITY_ROLE:
            return self._activity.get(chat.id, "")
        return None

    def _second_line(self, chat: ChatInfo) -> str:
        hit = self._hits.get(chat.id)
        if hit is None:
            return _describe(chat)
        return " ".join(hit.snippet.replace(MARK_START, "").replace(MARK_END, "").split())

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
        self.searching = False
        self._hits = {}
        self._chats = sorted(chats, key=_order)
        self._regroup()
        self.endResetModel()

    def set_results(self, results: Sequence[tuple[ChatInfo, SearchHit]]) -> None:
        """Show search results: each chat once, with its newest match."""
        self.beginResetModel()
        self.searching = True
        self._chats = [chat for chat, _ in results]
        self._hits = {chat.id: hit for chat, hit in results if hit.message_id}
        self._regroup()
        self.endResetModel()

    def update_chat(self, chat: ChatInfo) -> None:
        """One chat changed: its row is updated and moved to where its order puts it (a
        new chat is added, except among search results it was not found in)."""
        row = self.row_of(chat.id)
        if self.searching:
            if row is not None:
                self._chats[row] = chat
                self.dataChanged.emit(self.index(row), self.index(row))
            return
        if row is None:
            to = self._place(chat)
            self.beginInsertRows(QModelIndex(), to, to)
            self._chats.insert(to, chat)
            self._regroup()
            self.endInsertRows()
            return
        del self._chats[row]
        to = self._place(chat)
        self._chats.insert(row, chat)
        if to != row and self.beginMoveRows(
            QModelIndex(), row, row, QModelIndex(), to + (1 if to > row else 0)
        ):
            self._chats.insert(to, self._chats.pop(row))
            self.endMoveRows()
        self._regroup()
        # Its group may change too (a header appears or goes): the rows around it as well.
        first, last = max(0, min(row, to) - 1), min(len(self._chats) - 1, max(row, to) + 1)
        self.dataChanged.emit(self.index(first), self.index(last))

    def _place(self, chat: ChatInfo) -> int:
        """Where `chat` goes among the others (which must not include it)."""
        key = _order(chat)
        return next((i for i, c in enumerate(self._chats) if _order(c) > key), len(self._chats))

    def remove_chat(self, chat_id: str) -> None:
        row = self.row_of(chat_id)
        if row is not None:
            self.beginRemoveRows(QModelIndex(), row, row)
            self._chats.pop(row)
            self._regroup()
            self.endRemoveRows()
            if row < len(self._chats):  # the next row may now start a group
                self.dataChanged.emit(self.index(row), self.index(row))

    def _regroup(self) -> None:
        """Every row's header, in one pass (the delegate asks for them on every layout)."""
        if self.searching:
            self._groups = [""] * len(self._chats)
            return
        now = time.time()
        self._groups = [group_of(chat, now) for chat in self._chats]

    def set_activity(self, chat_id: str, activity: str) -> None:
        if self._activity.get(chat_id, "") == activity:
            return
        if activity:
            self._activity[chat_id] = activity
        else:
            self._activity.pop(chat_id, None)
        row = self.row_of(chat_id)
        if row is not None:
            self.dataChanged.emit(self.index(row), self.index(row), [ACTIVITY_ROLE])

    def row_of(self, chat_id: str) -> int | None:
        return next((i for i, c in enumerate(self._chats) if c.id == chat_id), None)

    def chats(self) -> Sequence[ChatInfo]:
        return self._chats


def _order(chat: ChatInfo) -> tuple[bool, float]:
    """Pinned chats first, then the most recently used."""
    return (chat.pinned_at is None, -chat.updated_at)


def group_of(chat: ChatInfo, now: float | None = None) -> str:
    """The header a chat is listed under, by its last activity in local time."""
    if chat.pinned_at is not None:
        return PINNED
    today = dt.date.fromtimestamp(time.time() if now is None else now)
    day = dt.date.fromtimestamp(chat.updated_at)
    days = (today - day).days
    if days <= 0:
        return "Today"
    if days == 1:
        return "Yesterday"
    if days <= 7:
        return "Previous 7 days"
    if days <= 30:
        return "Previous 30 days"
    if day.year == today.year:
        return day.strftime("%B")
    return str(day.year)


class ChatListPanel(QWidget):
    """Signals:
    chat_selected(str, str): the user moved to a chat (by arrow keys: the focus stays in
        the list); the id of the message to show, or "".
    chat_activated(str, str): the user clicked a chat or pressed Enter: open it and go
        to the composer; the id of the message to show, or "".
    search_changed(str): the search text, once typing pauses ("" to list every chat).
    new_requested(): "New chat".
    rename_requested(str, str): chat id, new title.
    pin_requested(str, bool): keep on top, or not.
    archive_requested(str, bool): out of the list, or back.
    delete_requested(str): move to the trash.
    undo_requested(str, str): take back the last removal ("trash" or "archive").
    export_requested(str, str): chat id, "json" or "md".
    archive_toggled(bool): show the archived chats, or the others again.
    """

    chat_selected = Signal(str, str)
    chat_activated = Signal(str, str)
    search_changed = Signal(str)
    new_requested = Signal()
    rename_requested = Signal(str, str)
    pin_requested = Signal(str, bool)
    archive_requested = Signal(str, bool)
    delete_requested = Signal(str)
    undo_requested = Signal(str, str)
    export_requested = Signal(str, str)
    archive_toggled = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ChatListModel(self)
        self.search = QLineEdit()
        self.search.setObjectName("chatSearch")
        self.search.setPlaceholderText("Search (Ctrl+K)")
        self.search.setClearButtonEnabled(True)
        self.search.setToolTip("Find chats by title and by any text in their messages (Ctrl+K)")
        self.search.installEventFilter(self)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self._on_search_timer_timeout)
        self.search.textChanged.connect(lambda _text: self._search_timer.start())
        self.new_button = QPushButton("New chat")
        self.new_button.setToolTip("New chat (Ctrl+N)")
        self.new_button.clicked.connect(self.new_requested)
        self.list = _ChatListView(self)
        self.list.setModel(self.model)
        self.list.selectionModel().currentChanged.connect(self._on_list_current_changed)
        self.list.clicked.connect(self._on_list_clicked)
        self.archive_bar = QWidget()
        archive_label = QLabel("<b>Archived chats</b>")
        back = QPushButton("Back to chats")
        back.clicked.connect(lambda: self.archive_toggled.emit(False))
        archive_layout = QHBoxLayout(self.archive_bar)
        archive_layout.setContentsMargins(4, 0, 0, 0)
        archive_layout.addWidget(archive_label, 1)
        archive_layout.addWidget(back)
        self.archive_bar.hide()
        self.empty = QLabel()
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
        self._undo: tuple[str, str] | None = None  # (chat id, "trash" or "archive")
        self._undo_timer = QTimer(self)
        self._undo_timer.setSingleShot(True)
        self._undo_timer.timeout.connect(self.undo_bar.hide)
        self._quiet = False  # the list is being refilled: its current row is not the user's

        top = QHBoxLayout()
        top.addWidget(self.search, 1)
        top.addWidget(self.new_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 0, 6)
        layout.addLayout(top)
        layout.addWidget(self.archive_bar)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.empty, 1)
        layout.addWidget(self.undo_bar)
        self._show_empty_state()

    @property
    def showing_archive(self) -> bool:
        return self.archive_bar.isVisible()

    def set_chats(self, chats: Sequence[ChatInfo], *, archived: bool = False) -> None:
        self.archive_bar.setVisible(archived)
        self._refill(lambda: self.model.set_chats(chats))

    def show_results(self, results: Sequence[tuple[ChatInfo, SearchHit]]) -> None:
        self._refill(lambda: self.model.set_results(results))

    def _refill(self, fill: Any) -> None:
        """Refill the list, keeping the current chat current if it is still there, and
        opening nothing."""
        current = self.selected_id()
        self._quiet = True
        try:
            fill()
            row = self.model.row_of(current) if current else None
            if row is not None:
                self.list.setCurrentIndex(self.model.index(row))
        finally:
            self._quiet = False
        self._show_empty_state()

    def update_chat(self, chat: ChatInfo) -> None:
        if (chat.archived_at is not None) != self.showing_archive:
            self.model.remove_chat(chat.id)  # it moved to the other list
        else:
            self.model.update_chat(chat)
        self._show_empty_state()

    def sync(self, chats: Sequence[ChatInfo]) -> None:
        """Show the chats as stored now (another program changed some): rows come, go
        and change one by one, so a selection or a rename in progress survives."""
        if self.model.searching:
            self._search_timer.start()  # search again, with what is stored now
            return
        wanted = {chat.id for chat in chats}
        for gone in [c.id for c in self.model.chats() if c.id not in wanted]:
            self.model.remove_chat(gone)
        shown = {c.id: c for c in self.model.chats()}
        for chat in chats:
            if shown.get(chat.id) != chat:
                self.model.update_chat(chat)
        self._show_empty_state()

    def set_activity(self, chat_id: str, activity: str) -> None:
        """Mark a chat answering in the background, or failed ("" clears the mark)."""
        self.model.set_activity(chat_id, activity)

    def select(self, chat_id: str) -> None:
        """Make this chat the current row (quietly: the caller is already showing it)."""
        row = self.model.row_of(chat_id)
        if row is None:
            return
        self._quiet = True
        try:
            self.list.setCurrentIndex(self.model.index(row))
        finally:
            self._quiet = False

    def index_of(self, chat_id: str) -> QModelIndex:
        row = self.model.row_of(chat_id)
        return self.model.index(row) if row is not None else QModelIndex()

    def selected_id(self) -> str | None:
        index = self.list.currentIndex()
        return index.data(ID_ROLE) if index.isValid() else None

    def removed(self, chat: ChatInfo, how: str = "trash") -> None:
        """A chat went to the trash or the archive: offer Undo for a while."""
        self.model.remove_chat(chat.id)
        self._undo = (chat.id, how)
        where = "moved to the trash" if how == "trash" else "archived"
        self.undo_label.setText(f"“{_short(chat.title)}” {where}.")
        self.undo_bar.show()
        self._undo_timer.start(UNDO_SECONDS * 1000)
        self._show_empty_state()

    def focus_search(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    def rename(self, chat_id: str) -> None:
        row = self.model.row_of(chat_id)
        if row is not None:
            self.list.edit(self.model.index(row))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """In the search box: Down goes to the results, Enter opens the first one at its
        match, Esc clears the search."""
        if (
            watched is self.search
            and event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_Escape
            and self.search.text()
        ):
            event.accept()  # Esc is ours here, not the window's Stop
            return True
        if watched is self.search and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            key = event.key()
            if key == Qt.Key.Key_Down and self.model.rowCount():
                self.list.setFocus()
                self.list.setCurrentIndex(self.model.index(0))
                return True
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.model.rowCount():
                self._search_timer.stop()
                self._on_search_timer_timeout()  # the results for all that was typed
                self.activate(self.model.index(0))
                return True
            if key == Qt.Key.Key_Escape and self.search.text():
                self.search.clear()
                return True
        return super().eventFilter(watched, event)

    def activate(self, index: QModelIndex) -> None:
        if index.isValid():
            hit = index.data(HIT_ROLE)
            self.chat_activated.emit(index.data(ID_ROLE), hit.message_id if hit else "")

    def _show_empty_state(self) -> None:
        empty = self.model.rowCount() == 0
        if self.model.searching:
            self.empty.setText(f"Nothing matches “{_short(self.search.text().strip())}”.")
        elif self.showing_archive:
            self.empty.setText("No archived chats.")
        else:
            self.empty.setText("No chats yet.\nPress “New chat” to start one.")
        self.empty.setVisible(empty)
        self.list.setVisible(not empty)

    @Slot()
    def _on_search_timer_timeout(self) -> None:
        self.search_changed.emit(self.search.text().strip())

    @Slot(QModelIndex, QModelIndex)
    def _on_list_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid() and not self._quiet:
            hit = current.data(HIT_ROLE)
            self.chat_selected.emit(current.data(ID_ROLE), hit.message_id if hit else "")

    @Slot(QModelIndex)
    def _on_list_clicked(self, index: QModelIndex) -> None:
        self.activate(index)

    @Slot()
    def _on_undo_clicked(self) -> None:
        self.undo_bar.hide()
        if self._undo is not None:
            self.undo_requested.emit(*self._undo)
            self._undo = None


class _ChatListView(QListView):
    def __init__(self, panel: ChatListPanel) -> None:
        super().__init__(panel)
        self.panel = panel
        self.setObjectName("chatList")
        self.setEditTriggers(
            QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.DoubleClicked
        )
        self.setMouseTracking(True)  # the hover highlight
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setItemDelegate(_ChatRowDelegate(panel, self))
        # Rows differ in height (a group's first has its header): laid out in batches,
        # so thousands of chats never hold the window up.
        self.setLayoutMode(QListView.LayoutMode.Batched)
        self.setBatchSize(200)

    def focusInEvent(self, event: QFocusEvent) -> None:
        """Qt makes the first row current when the list gets the focus with none: that
        is not the user choosing a chat, so it opens nothing."""
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


PAD = 8  # inside a row, around its two lines
HEADER_GAP = 10  # above a group's header


class _ChatRowDelegate(QStyledItemDelegate):
    """Paints a row — its group's header above it if it starts one, the title with an
    activity mark, and a quieter second line (size and age, or the search match) — and
    edits the title in place (F2, double-click or the menu)."""

    def __init__(self, panel: ChatListPanel, parent: QWidget) -> None:
        super().__init__(parent)
        self.panel = panel
        self._font_key = ""
        self._font_set: tuple[QFont, QFont, QFont] = (QFont(), QFont(), QFont())
        self._heights: tuple[int, ...] = (0, 0, 0)
        self._metrics: tuple[QFontMetrics, ...] = ()

    # -- geometry ----------------------------------------------------------------------------

    def _fonts(self, option: QStyleOptionViewItem) -> tuple[QFont, QFont, QFont]:
        """The title's, the second line's and the headers' fonts (made once per base
        font: every row's size is asked for when the list fills)."""
        key = option.font.key()
        if self._font_key != key:
            title = QFont(option.font)
            small = QFont(option.font)
            small.setPointSizeF(max(7.0, option.font.pointSizeF() * 0.88))
            header = QFont(small)
            header.setBold(True)
            self._font_set = (title, small, header)
            self._metrics = tuple(QFontMetrics(f) for f in self._font_set)
            self._heights = tuple(m.height() for m in self._metrics)
            self._font_key = key
        return self._font_set

    def _header(self, index: Index) -> str:
        """The group header shown above this row ("" when it continues a group)."""
        return str(index.data(HEADER_ROLE) or "")

    def _header_height(self, option: QStyleOptionViewItem, index: Index) -> int:
        if not self._header(index):
            return 0
        self._fonts(option)
        return HEADER_GAP + self._heights[2] + 4

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        self._fonts(option)
        rows = self._heights[0] + 3 + self._heights[1]
        return QSize(120, self._header_height(option, index) + rows + 2 * PAD)

    def _row_rect(self, option: QStyleOptionViewItem, index: Index) -> QRect:
        return option.rect.adjusted(0, self._header_height(option, index), -4, 0)

    def updateEditorGeometry(
        self, editor: QWidget, option: QStyleOptionViewItem, index: Index
    ) -> None:
        row = self._row_rect(option, index)
        height = QFontMetrics(self._fonts(option)[0]).height() + 8
        editor.setGeometry(row.left() + 4, row.top() + PAD - 4, row.width() - 8, height)

    # -- painting ------------------------------------------------------------------------------

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        chat: ChatInfo | None = index.data(CHAT_ROLE)
        if chat is None:
            return
        painter.save()
        title_font, small_font, header_font = self._fonts(option)
        palette = option.palette
        muted = QColor(palette.color(palette.ColorRole.PlaceholderText))
        header = self._header(index)
        if header:
            painter.setFont(header_font)
            painter.setPen(muted)
            top = option.rect.top() + HEADER_GAP
            painter.drawText(
                QRect(option.rect.left() + PAD, top, option.rect.width() - 2 * PAD, 40),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop,
                header,
            )
        row = self._row_rect(option, index)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        hovered = bool(option.state & QStyle.StateFlag.State_MouseOver)
        if selected or hovered:
            fill = QColor(palette.color(palette.ColorRole.Highlight))
            fill.setAlpha(60 if selected else 25)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(fill)
            painter.drawRoundedRect(row, 6, 6)
        text = palette.color(palette.ColorRole.Text)
        inner = row.adjusted(PAD, PAD, -PAD, -PAD)
        title_metrics = self._metrics[0]
        mark = _activity_mark(index.data(ACTIVITY_ROLE) or "")
        mark_width = 14 if mark else 0
        painter.setFont(title_font)
        painter.setPen(text)
        title_rect = QRect(
            inner.left(), inner.top(), inner.width() - mark_width, title_metrics.height()
        )
        painter.drawText(
            title_rect,
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            title_metrics.elidedText(chat.title, Qt.TextElideMode.ElideRight, title_rect.width()),
        )
        if mark:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(mark))
            centre = title_rect.center()
            painter.drawEllipse(inner.right() - 8, centre.y() - 4, 8, 8)
        second = QRect(
            inner.left(),
            title_rect.bottom() + 3,
            inner.width(),
            inner.bottom() - title_rect.bottom() - 2,
        )
        painter.setFont(small_font)
        hit: SearchHit | None = index.data(HIT_ROLE)
        if hit is not None:
            _draw_match(painter, second, hit.snippet, small_font, muted, text)
        else:
            painter.setPen(muted)
            metrics = self._metrics[1]
            painter.drawText(
                second,
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                metrics.elidedText(_describe(chat), Qt.TextElideMode.ElideRight, second.width()),
            )
        painter.restore()

    # -- renaming --------------------------------------------------------------------------------

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


def _activity_mark(activity: str) -> str:
    """The colour of the dot beside a chat's title ("" for none)."""
    return {Activity.ANSWERING: "#2f7de1", Activity.FAILED: "#d64545"}.get(activity, "")


def _draw_match(
    painter: QPainter, rect: QRect, snippet: str, font: QFont, muted: QColor, text: QColor
) -> None:
    """The snippet on one line with its match in bold, a little of what comes before it
    kept so the match is always in view."""
    before, _, rest = " ".join(snippet.split()).partition(MARK_START)
    match, _, after = rest.partition(MARK_END)
    if len(before) > 24:
        before = "…" + before[-23:]
    bold = QFont(font)
    bold.setBold(True)
    x = rect.left()
    for part, part_font, colour in (
        (before, font, muted),
        (match, bold, text),
        (after, font, muted),
    ):
        metrics = QFontMetrics(part_font)
        room = rect.right() - x
        if room <= 0 or not part:
            continue
        shown = metrics.elidedText(part, Qt.TextElideMode.ElideRight, room)
        painter.setFont(part_font)
        painter.setPen(colour)
        painter.drawText(
            QRect(x, rect.top(), room, rect.height()),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            shown,
        )
        x += metrics.horizontalAdvance(shown)


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
