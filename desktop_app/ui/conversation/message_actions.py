"""A message's actions, in one list: the right-click menu and the bar that appears over
a message on hover (or on keyboard focus) both show it, so an action is written once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QHBoxLayout, QToolButton, QWidget


@dataclass(frozen=True)
class MessageAction:
    key: str  # copy, exclude, pin, fork, edit, retry
    short: str  # the hover bar's word
    label: str  # the menu's words (and the bar button's tooltip)
    run: Callable[[], object]


class HoverBar(QWidget):
    """A row of small buttons in a message's header (after who and when)."""

    def __init__(self, viewport: QWidget) -> None:
        super().__init__(viewport)
        self.setObjectName("messageActions")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        self.row = QHBoxLayout(self)
        self.row.setContentsMargins(2, 0, 2, 0)
        self.row.setSpacing(2)
        # (message id, its actions' words): the bar is rebuilt only when these change
        self._shown: tuple[str, tuple[tuple[str, str, str], ...]] = ("", ())
        self.hide()

    @property
    def message_id(self) -> str:
        """The message whose actions the bar shows (or showed last)."""
        return self._shown[0]

    def show_for(
        self, message_id: str, actions: list[MessageAction], spot: Callable[[int], QPoint]
    ) -> None:
        """Show these actions where `spot` (given the bar's width) says."""
        shown = (message_id, tuple((a.key, a.short, a.label) for a in actions))
        if shown != self._shown or not self.isVisible():
            self.hide()  # buttons added to a shown bar would show only later, sized 0
            self._shown = shown
            while (item := self.row.takeAt(0)) is not None:
                widget = item.widget()
                if widget is not None:
                    widget.deleteLater()
            for action in actions:
                button = QToolButton(self)
                button.setObjectName(f"action_{action.key}")
                button.setText(action.short)
                button.setToolTip(action.label)
                button.setAutoRaise(True)
                button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the keys stay in the view
                button.clicked.connect(action.run)
                self.row.addWidget(button)
        self.adjustSize()
        at, room = spot(self.width()), self.parentWidget()
        if room is not None:  # (a message scrolled half out: its bar stays whole, in view)
            at.setY(max(0, min(at.y(), room.height() - self.height())))
        self.move(at)
        self.show()
        self.raise_()

    def buttons(self) -> dict[str, QToolButton]:
        """The buttons shown, by their action's key."""
        found = {}
        for i in range(self.row.count()):
            item = self.row.itemAt(i)
            button = item.widget() if item is not None else None
            if isinstance(button, QToolButton):
                found[button.objectName().removeprefix("action_")] = button
        return found
