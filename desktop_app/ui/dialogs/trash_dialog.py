"""View → Trash: the chats moved to the trash, each restorable long after its Undo has
gone; deleted for good — one, or all — only after a question, and then with everything
of theirs (messages, facts, search entries, their requests in the ledger)."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.chats import Engine
from desktop_app.core.errors import ContextDeskError
from desktop_app.storage.chat_info import ChatInfo

ID_ROLE = Qt.ItemDataRole.UserRole


class TrashDialog(QDialog):
    """Signals:
    restored(str): a chat came back out of the trash (its id): the chat list shows it.
    """

    restored = Signal(str)

    def __init__(self, engine: Engine, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Trash")
        self.setObjectName("trashDialog")
        self.engine = engine
        self.about = QLabel()
        self.about.setWordWrap(True)
        self.list = QListWidget()
        self.list.setObjectName("trashedChats")
        self.list.currentRowChanged.connect(self._on_list_current_row_changed)
        self.restore_button = QPushButton("Restore")
        self.restore_button.clicked.connect(self._on_restore_clicked)
        self.delete_button = QPushButton("Delete for good…")
        self.delete_button.clicked.connect(self._on_delete_clicked)
        self.empty_button = QPushButton("Empty the trash…")
        self.empty_button.clicked.connect(self._on_empty_clicked)
        self.problem = QLabel()
        self.problem.setWordWrap(True)
        self.problem.hide()
        actions = QHBoxLayout()
        actions.addWidget(self.restore_button)
        actions.addWidget(self.delete_button)
        actions.addStretch(1)
        actions.addWidget(self.empty_button)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.about)
        layout.addWidget(self.list, 1)
        layout.addLayout(actions)
        layout.addWidget(self.problem)
        layout.addWidget(close)
        self.resize(560, 420)
        self.refresh()

    def refresh(self) -> None:
        chats = self.engine.trashed_chats()
        self.list.clear()
        for chat in chats:
            item = QListWidgetItem(_line(chat), self.list)
            item.setData(ID_ROLE, chat.id)
            item.setToolTip(chat.title)
        self.about.setText(
            f"{len(chats):,} chat(s) in the trash. Restore one to bring it back to the chat "
            "list; delete it for good to remove it and everything of it, its requests in the "
            "ledger too."
            if chats
            else "The trash is empty."
        )
        if chats:
            self.list.setCurrentRow(0)
        self._enable()

    def _enable(self) -> None:
        chosen = self.list.currentItem() is not None
        self.restore_button.setEnabled(chosen)
        self.delete_button.setEnabled(chosen)
        self.empty_button.setEnabled(self.list.count() > 0)

    def _chosen(self) -> tuple[str, str] | None:
        item = self.list.currentItem()
        return (str(item.data(ID_ROLE)), item.toolTip()) if item is not None else None

    @Slot(int)
    def _on_list_current_row_changed(self, _row: int) -> None:
        self._enable()

    @Slot()
    def _on_restore_clicked(self) -> None:
        chosen = self._chosen()
        if chosen is None:
            return
        if self._act(lambda: self.engine.restore_chat(chosen[0])):
            self.restored.emit(chosen[0])
        self.refresh()

    @Slot()
    def _on_delete_clicked(self) -> None:
        chosen = self._chosen()
        if chosen is None:
            return
        asked = QMessageBox.question(
            self,
            "Delete for good?",
            f"Delete “{chosen[1]}” for good? Its messages, facts and summaries, and its "
            "requests in the ledger, are removed; this cannot be undone.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if asked == QMessageBox.StandardButton.Yes:
            self._act(lambda: self.engine.delete_for_good(chosen[0]))
            self.refresh()

    @Slot()
    def _on_empty_clicked(self) -> None:
        count = self.list.count()
        asked = QMessageBox.question(
            self,
            "Empty the trash?",
            f"Delete the {count:,} chat(s) in the trash for good, with their requests in the "
            "ledger? This cannot be undone.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if asked == QMessageBox.StandardButton.Yes:
            self._act(self.engine.empty_trash)
            self.refresh()

    def _act(self, action: object) -> bool:
        try:
            action()  # type: ignore[operator]
        except ContextDeskError as exc:
            self.problem.setText(f"{exc.title}: {exc.message}")
            self.problem.show()
            return False
        self.problem.hide()
        return True


def _line(chat: ChatInfo) -> str:
    when = time.strftime("%d %b %Y, %H:%M", time.localtime(chat.deleted_at or 0))
    return f"{chat.title} · {chat.message_count:,} messages · trashed {when}"
