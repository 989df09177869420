"""The document of a text being streamed: what arrived since the last frame is added to
it, and its layout goes on from there. Laying the whole text out again each frame grew
with the reply (25 ms at 19,000 characters, 20 times a second)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QFont, QTextCursor, QTextDocument

from desktop_app.ui.conversation.markdown_style import utf16_length

Where = tuple[str, int]  # (message id, block number)


class StreamedText:
    """One streaming text's document at a time (the newest reply's), made by `make` —
    plain text: its Markdown is read when it ends."""

    def __init__(self, make: Callable[[str, QFont, int], QTextDocument]) -> None:
        self._make = make
        self._held: tuple[Where, str, QTextDocument] | None = None

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

    def release(self) -> None:
        self._held = None

    def holds(self, doc: QTextDocument) -> bool:
        """Whether `doc` is the streaming text's document (for tests and checks)."""
        return self._held is not None and self._held[2] is doc
