"""Pinned facts: sent verbatim with every request, never summarized. Add, edit in place,
delete with Undo, reorder by dragging; each with its token cost, its source and the turn
it was last sent in. Facts Claude suggested through `pin_fact` wait below for Accept,
Edit or Reject."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QByteArray,
    QEvent,
    QMimeData,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QListView,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from desktop_app import said
from desktop_app.context.facts import Fact
from desktop_app.ui.context.fact_card import FactCardDelegate
from desktop_app.ui.conversation.wrap_row import WrapRow
from desktop_app.ui.dialogs.fact_dialog import ask_fact

Index = QModelIndex | QPersistentModelIndex
FACT_ROLE = Qt.ItemDataRole.UserRole + 1
MIME = "application/x-contextdesk-fact-id"
UNDO_SECONDS = 10


class FactListModel(QAbstractListModel):
    """Signals:
    edited(object, str): a fact and its new text (edited in place).
    moved(object, int): a fact dragged to a new position.
    """

    edited = Signal(object, str)
    moved = Signal(object, int)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._facts: list[Fact] = []
        self.count: Callable[[str], int] = lambda _text: 0
        self.last_sent: Callable[[Fact], str] = lambda _fact: ""

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 — Qt's signature
        return 0 if parent.isValid() else len(self._facts)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._facts):
            return None
        fact = self._facts[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{fact.text}\n{self.describe(fact)}"
        if role == Qt.ItemDataRole.EditRole:
            return fact.text
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{fact.text}\n\n{self.describe(fact)}\nDouble-click to edit; drag to reorder."
        if role == FACT_ROLE:
            return fact
        return None

    def describe(self, fact: Fact) -> str:
        who = said.fact_author(fact)
        sent = self.last_sent(fact)
        return f"from {who} · ≈{self.count(fact.text):,} tokens" + (f" · {sent}" if sent else "")

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        text = str(value).strip()
        if text:
            self.edited.emit(self._facts[index.row()], text)
        return bool(text)

    def flags(self, index: Index) -> Qt.ItemFlag:
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.isValid():
            return base | Qt.ItemFlag.ItemIsEditable | Qt.ItemFlag.ItemIsDragEnabled
        return base | Qt.ItemFlag.ItemIsDropEnabled

    def roleNames(self) -> dict[int, QByteArray]:
        return {
            int(Qt.ItemDataRole.DisplayRole): QByteArray(b"display"),
            int(FACT_ROLE): QByteArray(b"fact"),
        }

    def supportedDropActions(self) -> Qt.DropAction:
        return Qt.DropAction.MoveAction

    def mimeTypes(self) -> list[str]:
        return [MIME]

    def mimeData(self, indexes: Sequence[QModelIndex]) -> QMimeData:
        data = QMimeData()
        if indexes:
            data.setData(MIME, QByteArray(self._facts[indexes[0].row()].id.encode()))
        return data

    def dropMimeData(
        self, data: QMimeData, action: Qt.DropAction, row: int, column: int, parent: Index
    ) -> bool:
        fact_id = bytes(data.data(MIME).data()).decode()
        fact = next((f for f in self._facts if f.id == fact_id), None)
        if fact is None:
            return False
        target = row if row >= 0 else (parent.row() if parent.isValid() else len(self._facts))
        if target > self._facts.index(fact):
            target -= 1  # the fact leaves its old place first
        self.moved.emit(fact, target)
        return False  # the new order arrives with the new state; the view removes nothing

    def set_facts(self, facts: Sequence[Fact]) -> None:
        self.beginResetModel()
        self._facts = list(facts)
        self.endResetModel()

    def facts(self) -> Sequence[Fact]:
        return self._facts


class FactsPanel(QWidget):
    """Signals:
    add_requested(str), edit_requested(object, str), delete_requested(object),
    restore_requested(object, int), move_requested(object, int),
    accept_requested(object, str), reject_requested(object),
    to_project_requested(object): share this fact with the project's chats.
    """

    add_requested = Signal(str)
    edit_requested = Signal(object, str)
    delete_requested = Signal(object)
    restore_requested = Signal(object, int)
    move_requested = Signal(object, int)
    accept_requested = Signal(object, str)
    to_project_requested = Signal(object)
    reject_requested = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = FactListModel(self)
        self.model.edited.connect(self.edit_requested)
        self.model.moved.connect(self.move_requested)
        self.list = QListView()
        self.list.setObjectName("facts")
        self.list.setModel(self.model)
        self.list.setWordWrap(True)
        self.list.setSpacing(2)
        self.list.setItemDelegate(FactCardDelegate(self.list))
        self.list.setResizeMode(QListView.ResizeMode.Adjust)  # cards re-wrap as it narrows
        self.list.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.list.setDefaultDropAction(Qt.DropAction.MoveAction)
        self.list.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
        )
        self.list.setToolTip("Drag, or press Alt+Up / Alt+Down, to change the order")
        self.list.installEventFilter(self)
        self.suggested = FactListModel(self)
        self.suggested_list = QListView()
        self.suggested_list.setObjectName("suggestedFacts")
        self.suggested_list.setModel(self.suggested)
        self.suggested_list.setWordWrap(True)
        self.suggested_list.setSpacing(2)
        self.suggested_list.setItemDelegate(FactCardDelegate(self.suggested_list, waiting=True))
        self.suggested_list.setResizeMode(QListView.ResizeMode.Adjust)
        self.suggested_list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.suggested_label = QLabel("<b>Suggested by Claude</b> — not sent until you accept them")

        self.add_button = QPushButton("Add…")
        self.add_button.clicked.connect(self._on_add_clicked)
        self.edit_button = QPushButton("Edit")
        self.edit_button.clicked.connect(self._on_edit_clicked)
        self.delete_button = QPushButton("Delete")
        self.delete_button.clicked.connect(self._on_delete_clicked)
        self.accept_button = QPushButton("Accept")
        self.accept_button.clicked.connect(self._on_accept_clicked)
        # An import may offer a whole memory at once: one click for all of them.
        self.accept_all_button = QPushButton("Accept all")
        self.accept_all_button.clicked.connect(self._on_accept_all_clicked)
        self.accept_edit_button = QPushButton("Edit…")
        self.accept_edit_button.clicked.connect(self._on_accept_edit_clicked)
        self.reject_button = QPushButton("Reject")
        self.reject_button.clicked.connect(self._on_reject_clicked)
        # For every chat of the project: a pinned fact moves there, a suggestion is
        # accepted there.
        self.to_project_button = QPushButton("Pin to project")
        self.to_project_button.setToolTip("Share it with every chat of this chat's project")
        self.to_project_button.clicked.connect(self._on_to_project_clicked)
        self.accept_to_project_button = QPushButton("Accept to project")
        self.accept_to_project_button.clicked.connect(self._on_accept_to_project_clicked)
        self.undo_bar = QWidget()
        self.undo_label = QLabel()
        self.undo_label.setWordWrap(True)
        self.undo_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.undo_button = QPushButton("Undo")
        self.undo_button.clicked.connect(self._on_undo_clicked)
        undo_row = QHBoxLayout(self.undo_bar)
        undo_row.setContentsMargins(0, 0, 0, 0)
        undo_row.addWidget(self.undo_label, 1)
        undo_row.addWidget(self.undo_button)
        self.undo_bar.hide()
        self._deleted: tuple[Fact, int] | None = None
        self._undo_timer = QTimer(self)
        self._undo_timer.setSingleShot(True)
        self._undo_timer.timeout.connect(self.undo_bar.hide)

        buttons = WrapRow(
            self.add_button, self.edit_button, self.delete_button, self.to_project_button
        )
        suggestion_buttons = WrapRow(
            self.accept_button,
            self.accept_all_button,
            self.accept_edit_button,
            self.accept_to_project_button,
            self.reject_button,
        )
        self.suggestions = QWidget()
        suggestions = QVBoxLayout(self.suggestions)
        suggestions.setContentsMargins(0, 6, 0, 0)
        suggestions.addWidget(self.suggested_label)
        suggestions.addWidget(self.suggested_list)
        suggestions.addWidget(suggestion_buttons)
        hint = QLabel("Sent verbatim at the top of every request; never summarized.")
        hint.setWordWrap(True)
        hint.setEnabled(False)
        layout = QVBoxLayout(self)
        layout.addWidget(hint)
        layout.addWidget(self.list, 1)
        layout.addWidget(buttons)
        layout.addWidget(self.undo_bar)
        layout.addWidget(self.suggestions, 1)  # (an import may offer many: room for them)

    def show_facts(self, facts: Sequence[Fact]) -> None:
        current = self._selected(self.list)
        self.model.set_facts([f for f in facts if not f.pending])
        shown = self.model.facts()
        row = next((i for i, f in enumerate(shown) if current and f.id == current.id), None)
        if row is not None:  # the fact just moved or edited stays current
            self.list.setCurrentIndex(self.model.index(row))
        pending = [f for f in facts if f.pending]
        self.suggested.set_facts(pending)
        self.suggested_label.setText(
            f"<b>Suggested by {escape(said.suggested_by(pending))}</b> — "
            "not sent until you accept them"
        )
        self.suggestions.setVisible(bool(pending))
        self.accept_all_button.setVisible(len(pending) > 1)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Alt+Up / Alt+Down move the current fact (the keyboard's drag)."""
        if (
            watched is self.list
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.modifiers() == Qt.KeyboardModifier.AltModifier
            and event.key() in (Qt.Key.Key_Up, Qt.Key.Key_Down)
        ):
            fact = self._selected(self.list)
            if fact is not None:
                row = self.list.currentIndex().row()
                to = row - 1 if event.key() == Qt.Key.Key_Up else row + 1
                if 0 <= to < self.model.rowCount():
                    self.move_requested.emit(fact, to)
            return True
        return super().eventFilter(watched, event)

    def _selected(self, view: QListView) -> Fact | None:
        index = view.currentIndex()
        return index.data(FACT_ROLE) if index.isValid() else None

    @Slot()
    def _on_add_clicked(self) -> None:
        text = ask_fact(self, "Pin a fact", "Sent, verbatim, with every request:")
        if text:
            self.add_requested.emit(text)

    @Slot()
    def _on_edit_clicked(self) -> None:
        index = self.list.currentIndex()
        if index.isValid():
            self.list.edit(index)

    @Slot()
    def _on_delete_clicked(self) -> None:
        fact = self._selected(self.list)
        if fact is None:
            return
        self._deleted = (fact, list(self.model.facts()).index(fact))
        self.delete_requested.emit(fact)
        short = fact.text if len(fact.text) <= 40 else fact.text[:39] + "…"
        self.undo_label.setText(f"Unpinned “{short}”.")
        self.undo_bar.show()
        self._undo_timer.start(UNDO_SECONDS * 1000)

    @Slot()
    def _on_undo_clicked(self) -> None:
        self.undo_bar.hide()
        if self._deleted is not None:
            self.restore_requested.emit(*self._deleted)
            self._deleted = None

    @Slot()
    def _on_to_project_clicked(self) -> None:
        fact = self._selected(self.list)
        if fact is not None:
            self.to_project_requested.emit(fact)

    @Slot()
    def _on_accept_to_project_clicked(self) -> None:
        fact = self._selected(self.suggested_list)
        if fact is not None:
            self.to_project_requested.emit(fact)

    @Slot()
    def _on_accept_clicked(self) -> None:
        fact = self._selected(self.suggested_list)
        if fact is not None:
            self.accept_requested.emit(fact, "")

    @Slot()
    def _on_accept_all_clicked(self) -> None:
        for fact in self.suggested.facts():
            self.accept_requested.emit(fact, "")

    @Slot()
    def _on_accept_edit_clicked(self) -> None:
        fact = self._selected(self.suggested_list)
        if fact is None:
            return
        text = ask_fact(self, "Edit, then pin", "The fact as it will be sent:", fact.text)
        if text:
            self.accept_requested.emit(fact, text)

    @Slot()
    def _on_reject_clicked(self) -> None:
        fact = self._selected(self.suggested_list)
        if fact is not None:
            self.reject_requested.emit(fact)
