"""Help → Keyboard shortcuts: every menu action with its keys, read from the menus
themselves (so the sheet can never miss one), then the keys that belong to one place."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QMenu,
    QMenuBar,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

# Keys that act in one widget rather than through a menu.
IN_PLACE = [
    ("Composer", "Send (or a new line, as Settings say)", "Enter"),
    ("Composer", "New line (or send)", "Shift+Enter"),
    ("Composer", "Leave the composer", "Tab / Shift+Tab / Ctrl+Tab"),
    ("Chat list", "Open the chat and go to the composer", "Enter"),
    ("Chat list", "Move between chats (each opens, the focus stays)", "Up / Down"),
    ("Chat list", "Rename in place (Esc cancels)", "F2"),
    ("Conversation", "Move between messages (the focused one is outlined)", "Up / Down"),
    ("Conversation", "The focused message's actions", "Menu / Shift+F10"),
    ("Search box", "Go to the results", "Down"),
    ("Search box", "Open the first result at its match", "Enter"),
    ("Search box", "Clear the search", "Esc"),
    ("Find bar", "Next / previous match", "Enter / Shift+Enter"),
    ("Find bar", "Close", "Esc"),
    ("Pinned facts", "Move the fact up / down", "Alt+Up / Alt+Down"),
    ("Pinned facts", "Edit the fact", "F2"),
]


def menu_shortcuts(bar: QMenuBar) -> list[tuple[str, str, str]]:
    """(menu, action, keys) for every menu action that has keys, in menu order."""
    rows = []
    for top in bar.actions():
        menu = top.menu()
        if not isinstance(menu, QMenu):
            continue
        for action in menu.actions():
            keys = action.shortcut()
            if not action.isSeparator() and not keys.isEmpty():
                rows.append(
                    (
                        top.text().replace("&", ""),
                        action.text().replace("&", "").rstrip("…"),
                        keys.toString(QKeySequence.SequenceFormat.NativeText),
                    )
                )
    return rows


class ShortcutsDialog(QDialog):
    def __init__(self, bar: QMenuBar, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.setObjectName("shortcutsDialog")
        rows = menu_shortcuts(bar) + IN_PLACE
        self.table = QTableWidget(len(rows), 3)
        self.table.setHorizontalHeaderLabels(["Where", "Action", "Keys"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QTableWidget.SelectionMode.NoSelection)
        self.table.setShowGrid(False)
        for row, values in enumerate(rows):
            for column, value in enumerate(values):
                self.table.setItem(row, column, QTableWidgetItem(value))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(560, 560)
