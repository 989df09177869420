"""A chat's hand-off links, under its bar: "Continued from “…”" and "Continued in “…”",
each a click away (chats/handoff.py keeps them, both ways)."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QLabel, QWidget

if TYPE_CHECKING:
    from desktop_app.storage.chat_info import ChatInfo


class HandoffLinks(QLabel):
    """Signals: open_requested(str) — a linked chat's id, clicked."""

    open_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("handoffLinks")
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setWordWrap(True)
        self.setContentsMargins(12, 0, 12, 0)
        self.linkActivated.connect(self._on_link_activated)
        self.hide()

    def show_links(self, before: ChatInfo | None, after: list[ChatInfo]) -> None:
        parts = [f"Continued from {_link(before)}"] if before else []
        parts += [f"Continued in {_link(chat)}" for chat in after]
        self.setText(" · ".join(parts))
        self.setVisible(bool(parts))

    @Slot(str)
    def _on_link_activated(self, chat_id: str) -> None:
        self.open_requested.emit(chat_id)


def _link(chat: ChatInfo) -> str:
    return f'<a href="{escape(chat.id)}">“{escape(chat.title)}”</a>'
