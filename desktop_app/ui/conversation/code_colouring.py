"""A long reply's code, coloured a block per event after it is laid out.

Highlighting is most of the cost of laying out a reply full of code (a 12,000-character
reply with 27 blocks: 385 of its 530 ms, most of it Pygments). When a reply ends —
Stop, or its last word — it is laid out whole at once: its code is framed then and left
plain, and coloured here one block per turn of the event loop, so the window answers
between blocks. Colours, bold and italic in a fixed-pitch font change no line's width:
the layout keeps its height, only the row is painted again.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Slot
from PySide6.QtGui import QTextDocument

from desktop_app.ui.conversation.markdown_style import CodeBlock, colour_code

# A text this long or longer has its code coloured later (shorter: at once, no flash)
LATER_FROM_CHARS = 4_000


class LaterColouring(QObject):
    def __init__(self, repaint: Callable[[], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._repaint = repaint
        self._waiting: deque[tuple[QTextDocument, CodeBlock, bool]] = deque()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)  # after the events already waiting: a paint, a key
        self._timer.timeout.connect(self._on_timer_timeout)

    def add(self, doc: QTextDocument, codes: list[CodeBlock], dark: bool) -> None:
        """Colour `codes` of `doc` (framed by `style_code(colour=False)`) soon."""
        self._waiting.extend((doc, code, dark) for code in codes)
        if self._waiting and not self._timer.isActive():
            self._timer.start()

    def pending(self) -> int:
        """Blocks still to colour (a layout dropped meanwhile is coloured all the same:
        harmless, and rare)."""
        return len(self._waiting)

    @Slot()
    def _on_timer_timeout(self) -> None:
        doc, code, dark = self._waiting.popleft()
        colour_code(doc, code, dark)
        self._repaint()
        if self._waiting:
            self._timer.start()
