"""The chat list's model: one row per chat, pinned chats first, then by last activity,
each row knowing its date group, its search match and its activity mark — so the view
paints thousands of chats from one model and no widget per chat."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex

from desktop_app.ui.qt_later import Qt

if TYPE_CHECKING:
    from PySide6.QtCore import QByteArray

    from desktop_app.storage.chat_info import ChatInfo
    from desktop_app.storage.search import SearchHit

Index = QModelIndex | QPersistentModelIndex
# Qt.ItemDataRole's values, as the numbers Qt hands `data`: `Qt` is made after the first
# frame, and a returning user's first frame asks every row for its size.
DISPLAY_ROLE = 0
EDIT_ROLE = 2
TOOLTIP_ROLE = 3
USER_ROLE = 0x0100
CHAT_ROLE = USER_ROLE + 1
ID_ROLE = USER_ROLE + 2
GROUP_ROLE = USER_ROLE + 3  # the header the row sits under
HEADER_ROLE = USER_ROLE + 6  # that header if the row starts its group, or ""
HIT_ROLE = USER_ROLE + 4  # while searching: the chat's newest match
ACTIVITY_ROLE = USER_ROLE + 5  # "answering", "failed" or ""
PINNED = "Pinned"
NO_PROJECT = ""  # the project filter's value for chats in none (None: every chat)


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
        self.spend_of: Callable[[str], str] | None = None  # a chat's cost, said (on hover)
        # Which chats are listed: every chat (None), those in no project (NO_PROJECT), or
        # those of one project (its id); and projects' names, for the rows.
        self.project_filter: str | None = None
        self.project_names: dict[str, str] = {}

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 — Qt's signature
        return 0 if parent.isValid() else len(self._chats)

    def data(self, index: Index, role: int = 0) -> Any:  # (0: the display role)
        if not index.isValid() or not 0 <= index.row() < len(self._chats):
            return None
        chat = self._chats[index.row()]
        if role == DISPLAY_ROLE:
            return f"{chat.title}\n{self._second_line(chat)}"
        if role == TOOLTIP_ROLE:
            spent = f"\ncost: {self.spend_of(chat.id)}" if self.spend_of else ""
            return f"{chat.title}\n{describe(chat)}\nmodel {chat.model}{spent}"
        if role == CHAT_ROLE:
            return chat
        if role == ID_ROLE:
            return chat.id
        if role == EDIT_ROLE:
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

    def shows(self, chat: ChatInfo) -> bool:
        """Whether `chat` is listed under the project filter."""
        wanted = self.project_filter
        return wanted is None or (chat.project_id or NO_PROJECT) == wanted

    def _second_line(self, chat: ChatInfo) -> str:
        hit = self._hits.get(chat.id)
        if hit is None:
            project = self.project_names.get(chat.project_id or "")
            listed_in_it = self.project_filter is not None
            return (
                f"{project} · {describe(chat)}" if project and not listed_in_it else describe(chat)
            )
        from desktop_app.storage.search import MARK_END, MARK_START  # (loaded by the search)

        return " ".join(hit.snippet.replace(MARK_START, "").replace(MARK_END, "").split())

    def flags(self, index: Index) -> Qt.ItemFlag:
        """Rows are editable: the title is renamed in place (F2, double-click, the menu)."""
        return (
            super().flags(index) | Qt.ItemFlag.ItemIsEditable
            if index.isValid()
            else Qt.ItemFlag.NoItemFlags
        )

    def roleNames(self) -> dict[int, QByteArray]:
        from PySide6.QtCore import QByteArray  # (asked by QML and testers, not the list)

        return {
            int(Qt.ItemDataRole.DisplayRole): QByteArray(b"display"),
            int(CHAT_ROLE): QByteArray(b"chat"),
            int(ID_ROLE): QByteArray(b"id"),
        }

    def set_chats(self, chats: Sequence[ChatInfo]) -> None:
        self.beginResetModel()
        self.searching = False
        self._hits = {}
        self._chats = sorted(filter(self.shows, chats), key=_order)
        self._regroup()
        self.endResetModel()

    def set_results(self, results: Sequence[tuple[ChatInfo, SearchHit]]) -> None:
        """Show search results: each chat once, with its newest match."""
        self.beginResetModel()
        self.searching = True
        results = [(chat, hit) for chat, hit in results if self.shows(chat)]
        self._chats = [chat for chat, _ in results]
        self._hits = {chat.id: hit for chat, hit in results if hit.message_id}
        self._regroup()
        self.endResetModel()

    def update_chat(self, chat: ChatInfo) -> None:
        """One chat changed: its row is updated and moved to where its order puts it (a
        new chat is added, except among search results it was not found in); one that no
        longer passes the project filter leaves."""
        if not self.shows(chat):
            self.remove_chat(chat.id)
            return
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
    import datetime as dt  # (a first start's first paint lists no chat)

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


def describe(chat: ChatInfo) -> str:
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
