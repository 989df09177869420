"""The document of a text being streamed: what arrived since the last frame is added to
it, and its layout goes on from there. Laying the whole text out again each frame grew
with the reply (25 ms at 19,000 characters, 20 times a second)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QFont, QTextCursor, QTextDocument

from desktop_app.ui.conversation.markdown_style import utf16_length

Where = tuple[str, int]  # (message id, block number)
SETTLE_MS = 40  # a reply that ended is laid out whole after the window shows it ended


class StreamedText:
    """One streaming text's document at a time (the newest reply's), made by `make` —
    plain text: its Markdown is read when it ends."""

    def __init__(self, make: Callable[[str, QFont, int], QTextDocument], owner: QObject) -> None:
        self._make = make
        self._owner = owner  # (its timers end with it)
        self._held: tuple[Where, str, QTextDocument] | None = None
        self._settling: set[str] = set()  # replies that ended, still shown as streamed

    def document(self, where: Where, text: str, font: QFont, width: int) -> QTextDocument:
        """`text` (as shown) laid out: the document it grew from, when it did."""
        if self._held is not None and self._held[0] == where:
            _, before, doc = self._held
            same_box = doc.defaultFont() == font and doc.textWidth() == width
            # It goes on from all the text before; or, once cut to its first part, from
            # all before the line that counts the rest ("… 1,234 more characters")
            kept = len(before) if text.startswith(before) else before.rfind("\n… ")
            if same_box and kept > 0 and text.startswith(before[:kept]):
                if text != before:
                    cursor = QTextCursor(doc)
                    cursor.setPosition(utf16_length(before[:kept]))
                    cursor.movePosition(
                        QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor
                    )
                    cursor.insertText(text[kept:])
                self._held = (where, text, doc)
                return doc
        doc = self._make(text, font, width)
        self._held = (where, text, doc)
        return doc

    def streamed(self, message_id: str) -> bool:
        """Whether a text of this message is the one held (it streamed, and may just have
        ended)."""
        return self._held is not None and self._held[0][0] == message_id

    def ended(self, message_id: str, settled: Callable[[str], None]) -> bool:
        """Whether this reply, which has ended (Stop, or its last word), is still to be
        laid out as it streamed: until the window has shown that it ended. Laying it out
        whole (its Markdown, tables, code) takes long; `settled(message_id)` is called
        SETTLE_MS later, for that."""
        if not self.streamed(message_id):
            return False
        if message_id not in self._settling:
            self._settling.add(message_id)
            QTimer.singleShot(SETTLE_MS, self._owner, lambda: self._settle(message_id, settled))
        return True

    def settling(self, message_id: str) -> bool:
        return message_id in self._settling

    def _settle(self, message_id: str, settled: Callable[[str], None]) -> None:
        self._settling.discard(message_id)
        if self.streamed(message_id):  # (not the next reply's, already streaming)
            self._held = None
        settled(message_id)

    def holds(self, doc: QTextDocument) -> bool:
        """Whether `doc` is the streaming text's document (for tests and checks)."""
        return self._held is not None and self._held[2] is doc
