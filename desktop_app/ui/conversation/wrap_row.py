"""A row of buttons that wraps onto more lines when it is short of room, as words do: at a
large text size or in a narrow panel "Clear old tool results…" moves under "Compact
now…", whole, instead of being cut (a button cannot elide its words)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRect, QSize
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QWidget

SPACING_PX = 6


class WrapRow(QWidget):
    def __init__(self, *widgets: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.widgets = widgets
        for widget in widgets:
            widget.setParent(self)
            widget.installEventFilter(self)  # shown or hidden: laid out again

    def _shown(self) -> list[QWidget]:
        return [w for w in self.widgets if not w.isHidden()]

    def _lines(self, width: int) -> list[list[QWidget]]:
        lines: list[list[QWidget]] = []
        line: list[QWidget] = []
        used = 0
        for widget in self._shown():
            need = widget.sizeHint().width()
            if line and used + SPACING_PX + need > width:
                lines.append(line)
                line, used = [], 0
            used += (SPACING_PX if line else 0) + need
            line.append(widget)
        return [*lines, line] if line else lines

    @staticmethod
    def _line_height(line: list[QWidget]) -> int:
        return max(w.sizeHint().height() for w in line)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        lines = self._lines(width)
        return sum(map(self._line_height, lines)) + SPACING_PX * max(0, len(lines) - 1)

    def sizeHint(self) -> QSize:
        shown = self._shown()
        width = sum(w.sizeHint().width() for w in shown) + SPACING_PX * max(0, len(shown) - 1)
        return QSize(width, self.heightForWidth(width))

    def minimumSizeHint(self) -> QSize:
        """As narrow as the widest one: a line each, that is all it needs."""
        widest = max((w.sizeHint().width() for w in self._shown()), default=0)
        return QSize(widest, self.heightForWidth(widest))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._place()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.Show, QEvent.Type.Hide):
            self.updateGeometry()
            self._place()
        return False

    def _place(self) -> None:
        top = 0
        for line in self._lines(self.width()):
            height, left = self._line_height(line), 0
            for widget in line:
                width = min(widget.sizeHint().width(), self.width())
                widget.setGeometry(QRect(left, top, width, height))
                left += width + SPACING_PX
            top += height + SPACING_PX
