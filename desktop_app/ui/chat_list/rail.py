"""The chat list folded to a rail of icons (a narrow window, or Ctrl+B): the chats, a new
chat and search stay one click away, as the sidebars of Claude's and ChatGPT's apps do."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Signal
from PySide6.QtGui import QColor, QIcon, QPainter, QPalette, QPen, QPixmap
from PySide6.QtWidgets import QToolButton, QVBoxLayout, QWidget

from desktop_app.ui import theme

RAIL_PX = theme.space(12)


class ChatRail(QWidget):
    """Signals: chats_requested(), new_requested(), search_requested()."""

    chats_requested = Signal()
    new_requested = Signal()
    search_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatRail")
        self.setFixedWidth(RAIL_PX)
        column = QVBoxLayout(self)
        column.setContentsMargins(theme.space(1), theme.space(2), theme.space(1), theme.space(2))
        column.setSpacing(theme.space(1))
        self.buttons: dict[str, QToolButton] = {}
        for name, glyph, says, signal in (
            ("chats", "☰", "Show the chats (Ctrl+B)", self.chats_requested),
            ("new", "+", "New chat (Ctrl+N)", self.new_requested),
            ("search", "", "Search the chats (Ctrl+K)", self.search_requested),
        ):
            button = QToolButton()
            button.setObjectName(f"rail_{name}")
            button.setText(glyph)
            button.setToolTip(says)
            button.setAccessibleName(says)
            button.setAutoRaise(True)
            button.setFont(theme.font(button.font(), "title"))
            button.setFixedSize(RAIL_PX - theme.space(2), RAIL_PX - theme.space(2))
            button.clicked.connect(signal)
            column.addWidget(button)
            self.buttons[name] = button
        self.buttons["search"].setIcon(magnifier(self.palette().color(QPalette.ColorRole.Text)))
        self.buttons["search"].setIconSize(QSize(theme.space(5), theme.space(5)))
        column.addStretch(1)


def magnifier(colour: QColor) -> QIcon:
    """A magnifying glass, drawn (no icon theme is certain to have one, nor every font
    the glyph)."""
    size = 64
    picture = QPixmap(size, size)
    picture.fill(QColor(0, 0, 0, 0))
    painter = QPainter(picture)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QPen(colour, 6))
    painter.drawEllipse(QRectF(10, 10, 30, 30))
    painter.drawLine(QPointF(36, 36), QPointF(54, 54))
    painter.end()
    return QIcon(picture)
