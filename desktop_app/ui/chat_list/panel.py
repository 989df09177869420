"""The chat list: pinned chats on top, then every chat under its date (Today, Yesterday,
Previous 7 days, …), a mark on a chat that is answering in the background or has failed;
search across titles and messages as you type; new, rename, pin, archive, and delete to
the trash with Undo.

One model row per chat (`model.py`), shown by one view (`list_view.py`, made when first
needed) and painted by a delegate (`row_delegate.py`, group headers included), so
thousands of chats cost no widgets. Searching never opens a chat or moves the focus: the
list shows the chats that match, each with the text around its newest match; a click or
Enter opens the chat at that message.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QModelIndex, QObject, QTimer, Signal, Slot
from PySide6.QtGui import QFocusEvent, QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from desktop_app.ui.chat_list.model import HIT_ROLE, ID_ROLE, NO_PROJECT, ChatListModel
from desktop_app.ui.qt_later import Qt

if TYPE_CHECKING:
    from PySide6.QtWidgets import QComboBox

    from desktop_app.storage.chat_info import ChatInfo
    from desktop_app.storage.search import SearchHit
    from desktop_app.ui.chat_list.list_view import ChatListView

UNDO_SECONDS = 10
SEARCH_DELAY_MS = 150  # search once typing pauses, not on every key


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
    project_requested(str): open this chat's Project dialog (move it, edit the project).
    archive_requested(str, bool): out of the list, or back.
    delete_requested(str): move to the trash.
    undo_requested(str, str): take back the last removal ("trash" or "archive") or fork.
    export_requested(str, str): chat id, "json" or "md".
    archive_toggled(bool): show the archived chats, or the others again.
    project_filter_changed(): the chats of another project (or of none, or all) wanted.
    """

    chat_selected = Signal(str, str)
    chat_activated = Signal(str, str)
    search_changed = Signal(str)
    new_requested = Signal()
    rename_requested = Signal(str, str)
    pin_requested = Signal(str, bool)
    project_requested = Signal(str)
    archive_requested = Signal(str, bool)
    delete_requested = Signal(str)
    undo_requested = Signal(str, str)
    export_requested = Signal(str, str)
    archive_toggled = Signal(bool)
    project_filter_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ChatListModel(self)
        self.search = QLineEdit()
        self.search.setObjectName("chatSearch")
        self.search.setPlaceholderText("Search (Ctrl+K)")
        # (Its clear button comes with the first text: the first frame, with none, does
        # without its icon.)
        self.search.setToolTip("Find chats by title and by any text in their messages (Ctrl+K)")
        self.search.installEventFilter(self)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self._on_search_timer_timeout)
        self.search.textChanged.connect(self._on_search_text_changed)
        self.new_button = QPushButton("New chat")
        self.new_button.setToolTip("New chat (Ctrl+N)")
        self.new_button.clicked.connect(self.new_requested)
        # Hidden until needed, so made then: the project filter, the archive's bar, the
        # undo bar (`project_filter`, `archive_bar`, `undo_bar`); the list (`list`).
        self._project_filter: QComboBox | None = None
        self._archive_bar: QWidget | None = None
        self._back_button: QPushButton | None = None
        self._undo_bar: UndoBar | None = None
        self._list: ChatListView | None = None
        self.empty = QLabel()
        # Centred at the top. (Said in a style sheet, which needs none of `Qt`'s enums:
        # the first frame of an empty list shows it before they are made.)
        self.empty.setStyleSheet("qproperty-alignment: 'AlignHCenter | AlignTop';")
        self.empty.setMargin(24)
        self.empty.setWordWrap(True)
        self._undo: tuple[str, str] | None = None  # (chat id, "trash", "archive" or "fork")
        self._undo_timer = QTimer(self)
        self._undo_timer.setSingleShot(True)
        self._undo_timer.timeout.connect(self._on_undo_timer_timeout)
        self._quiet = False  # the list is being refilled: its current row is not the user's
        self.first_frame_shown = False  # set by the window

        top = QHBoxLayout()
        top.addWidget(self.search, 1)
        top.addWidget(self.new_button)
        self.column = QVBoxLayout(self)
        self.column.setContentsMargins(6, 6, 0, 6)
        self.column.addLayout(top)
        self.column.addWidget(self.empty, 1)  # (the bars and the list go around it)
        self._show_empty_state()

    def first_frame_done(self) -> None:
        """The window's first frame is up: what the list taking the focus skipped then
        is done now — Qt's first row made current (not opened), so Down goes to the
        second."""
        self.first_frame_shown = True
        if self.list.hasFocus() and not self.list.currentIndex().isValid():
            self.list.focusInEvent(QFocusEvent(QEvent.Type.FocusIn))

    @property
    def list(self) -> ChatListView:
        """The chats, one row each. Made when first asked for: a first start's window
        shows no list, and its first frame does without its classes (~3 ms: QListView's
        and its bases' enums); it is made right after that frame (`first_frame_done`)."""
        if self._list is None:
            from desktop_app.ui.chat_list.list_view import ChatListView

            view = ChatListView(self)
            view.setModel(self.model)
            view.selectionModel().currentChanged.connect(self._on_list_current_changed)
            view.clicked.connect(self._on_list_clicked)
            self.column.insertWidget(self.column.indexOf(self.empty), view, 1)
            view.setVisible(self.empty.isHidden())  # (placed first: never a window of its own)
            if not self.isVisible():  # made for the first frame: it has the focus then
                view.setFocus()
            self._list = view
            self._order_tabs()
        return self._list

    @property
    def project_filter(self) -> QComboBox:
        """Which chats are listed: all, a project's, or those in none (made once a project
        exists; between the buttons and the list)."""
        if self._project_filter is None:
            from PySide6.QtWidgets import QComboBox

            combo = self._project_filter = QComboBox()
            combo.setObjectName("projectFilter")
            combo.setToolTip("List every chat, a project's chats, or those in none")
            combo.activated.connect(self._on_project_filter_activated)
            self.column.insertWidget(1, combo)  # (under the search box and New chat)
            self._order_tabs()
        return self._project_filter

    @property
    def archive_bar(self) -> QWidget:
        """Above the list while it shows the archived chats: "Back to chats"."""
        if self._archive_bar is None:
            bar = self._archive_bar = QWidget()
            back = self._back_button = QPushButton("Back to chats")
            back.clicked.connect(lambda: self.archive_toggled.emit(False))
            row = QHBoxLayout(bar)
            row.setContentsMargins(4, 0, 0, 0)
            row.addWidget(QLabel("<b>Archived chats</b>"), 1)
            row.addWidget(back)
            above = self._list if self._list is not None else self.empty
            self.column.insertWidget(self.column.indexOf(above), bar)
            self._order_tabs()
        return self._archive_bar

    @property
    def undo_bar(self) -> UndoBar:
        """Under the list for a while after a chat is removed or forked."""
        if self._undo_bar is None:
            self._undo_bar = UndoBar()
            self._undo_bar.button.clicked.connect(self._on_undo_clicked)
            self.column.addWidget(self._undo_bar)
            self._order_tabs()
        return self._undo_bar

    @property
    def undo_label(self) -> QLabel:
        return self.undo_bar.label

    @property
    def undo_button(self) -> QPushButton:
        return self.undo_bar.button

    @property
    def showing_archive(self) -> bool:
        return self._archive_bar is not None and self._archive_bar.isVisible()

    def set_projects(self, names: Mapping[str, str]) -> None:
        """The projects there are (id → name), for the filter and the rows; a filter on a
        project that is gone falls back to every chat."""
        wanted = self.model.project_filter
        if wanted not in (None, NO_PROJECT) and wanted not in names:
            wanted = self.model.project_filter = None
        self.model.project_names = dict(names)
        if not names and self._project_filter is None:
            return  # (no project yet: no filter)
        self.project_filter.clear()
        self.project_filter.addItem("All chats", None)
        for project_id, name in sorted(names.items(), key=lambda item: item[1].casefold()):
            self.project_filter.addItem(f"Project: {name}", project_id)
        self.project_filter.addItem("Not in a project", NO_PROJECT)
        self.project_filter.setCurrentIndex(max(0, self.project_filter.findData(wanted)))
        self.project_filter.setVisible(bool(names))

    @Slot(int)
    def _on_project_filter_activated(self, index: int) -> None:
        # Chosen again, it is asked again: a project's page comes back (ui/projects).
        self.model.project_filter = self.project_filter.itemData(index)
        self.project_filter_changed.emit()

    def set_chats(self, chats: Sequence[ChatInfo], *, archived: bool = False) -> None:
        if archived or self._archive_bar is not None:
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
        if self._list is None:
            return None  # (no list made yet, so no chat chosen in it)
        index = self.list.currentIndex()
        return index.data(ID_ROLE) if index.isValid() else None

    def removed(self, chat: ChatInfo, how: str = "trash", *, offer_undo: bool = True) -> None:
        """A chat went to the trash or the archive: offer Undo for a while."""
        self.model.remove_chat(chat.id)
        if offer_undo:
            self.offer_undo(chat, how)
        self._show_empty_state()

    def offer_undo(self, chat: ChatInfo, how: str) -> None:
        """Undo, for a while, of what was done to a chat (`how`: "trash", "archive" or
        "fork"; `undo_requested` says it back)."""
        self._undo = (chat.id, how)
        title = _short(chat.title)
        done = {"trash": f"“{title}” moved to the trash.", "fork": f"Forked into “{title}”."}
        self.undo_label.setText(done.get(how, f"“{title}” archived."))
        self.undo_bar.show()
        self._undo_timer.start(UNDO_SECONDS * 1000)

    def tab_stops(self) -> Sequence[QWidget]:
        """Its widgets in Tab's order, as the eye reads them: the search box, New chat,
        the project filter (once a project exists), Back to chats (once the archive was
        shown), the list, Undo (once it was offered)."""
        return self._stops(self.list)

    def _stops(self, view: QWidget | None) -> tuple[QWidget, ...]:
        parts = (self.search, self.new_button, self._project_filter, self._back_button, view)
        undo = self._undo_bar.button if self._undo_bar is not None else None
        return tuple(part for part in (*parts, undo) if part is not None)

    def _order_tabs(self) -> None:
        """A part made later takes its place in Tab's order at once (the window orders
        the panel's stops with the pane's when it shows a chat: `tab_stops`)."""
        for before, after in itertools.pairwise(self._stops(self._list)):
            QWidget.setTabOrder(before, after)

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
        elif self.model.project_filter:
            self.empty.setText("No chats in this project yet.\nPress “New chat” to start one.")
        else:
            self.empty.setText("No chats yet.\nPress “New chat” to start one.")
        self.empty.setVisible(empty)
        if self._list is not None or not empty:
            self.list.setVisible(not empty)

    @Slot(str)
    def _on_search_text_changed(self, text: str) -> None:
        if text and not self.search.isClearButtonEnabled():
            self.search.setClearButtonEnabled(True)
        self._search_timer.start()

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
    def _on_undo_timer_timeout(self) -> None:
        self.undo_bar.hide()

    @Slot()
    def _on_undo_clicked(self) -> None:
        self.undo_bar.hide()
        if self._undo is not None:
            self.undo_requested.emit(*self._undo)
            self._undo = None


class UndoBar(QWidget):
    """What was done to a chat (`label`), and Undo (`button`)."""

    def __init__(self) -> None:
        from PySide6.QtWidgets import QSizePolicy  # (its class's enums: with the bar only)

        super().__init__()
        self.label = QLabel()
        self.label.setWordWrap(True)  # a long title wraps; the window never grows for it
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.button = QPushButton("Undo")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label, 1)
        row.addWidget(self.button)


def _short(title: str) -> str:
    return title if len(title) <= 40 else title[:39] + "…"
