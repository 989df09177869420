"""How a chat list row looks: its group's header above it when it starts one, the title
with an activity dot, and a quieter second line — size and age, or the search match
with the matched words in bold. Also edits the title in place."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QRect, QSize, Signal
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QLineEdit, QStyledItemDelegate, QWidget

from desktop_app.ui import theme
from desktop_app.ui.chat_list.model import (
    ACTIVITY_ROLE,
    CHAT_ROLE,
    HEADER_ROLE,
    HIT_ROLE,
    ID_ROLE,
    Activity,
    Index,
)
from desktop_app.ui.qt_later import Qt

if TYPE_CHECKING:  # (fonts and painters: their types are made when the first row is drawn)
    from PySide6.QtGui import QFont, QFontMetrics, QPainter
    from PySide6.QtWidgets import QStyleOptionViewItem

    from desktop_app.storage.chat_info import ChatInfo
    from desktop_app.storage.search import SearchHit

PAD = 8  # inside a row, around its two lines
HEADER_GAP = 10  # above a group's header


class ChatRowDelegate(QStyledItemDelegate):
    """Paints a row — its group's header above it if it starts one, the title with an
    activity mark, and a quieter second line (size and age, or the search match) — and
    edits the title in place (F2, double-click or the menu)."""

    renamed = Signal(str, str)  # a chat's id, the title given in place

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self._font_key = ""
        self._font_set: tuple[QFont, QFont, QFont] | None = None  # made by `_fonts`
        self._heights: tuple[int, ...] = (0, 0, 0)
        self._metrics: tuple[QFontMetrics, ...] = ()

    # -- geometry ----------------------------------------------------------------------------

    def _fonts(self, option: QStyleOptionViewItem) -> tuple[QFont, QFont, QFont]:
        """The title's, the second line's and the headers' fonts (made once per base
        font: every row's size is asked for when the list fills)."""
        key = option.font.key()
        fonts = self._font_set
        if fonts is None or self._font_key != key:
            from PySide6.QtGui import QFont, QFontMetrics

            title = QFont(option.font)
            small = theme.font(option.font, "meta")
            small.setPointSizeF(max(7.0, small.pointSizeF()))
            header = QFont(small)
            header.setBold(True)
            fonts = self._font_set = (title, small, header)
            self._metrics = tuple(QFontMetrics(f) for f in fonts)
            self._heights = tuple(m.height() for m in self._metrics)
            self._font_key = key
        return fonts

    def _header(self, index: Index) -> str:
        """The group header shown above this row ("" when it continues a group)."""
        return str(index.data(HEADER_ROLE) or "")

    def _header_height(self, option: QStyleOptionViewItem, index: Index) -> int:
        if not self._header(index):
            return 0
        self._fonts(option)
        return HEADER_GAP + self._heights[2] + 4

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        self._fonts(option)
        rows = self._heights[0] + 3 + self._heights[1]
        return QSize(120, self._header_height(option, index) + rows + 2 * PAD)

    def _row_rect(self, option: QStyleOptionViewItem, index: Index) -> QRect:
        return option.rect.adjusted(0, self._header_height(option, index), -4, 0)

    def updateEditorGeometry(
        self, editor: QWidget, option: QStyleOptionViewItem, index: Index
    ) -> None:
        row = self._row_rect(option, index)
        self._fonts(option)
        height = self._heights[0] + 8  # the title's line
        editor.setGeometry(row.left() + 4, row.top() + PAD - 4, row.width() - 8, height)

    # -- painting ------------------------------------------------------------------------------

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        chat: ChatInfo | None = index.data(CHAT_ROLE)
        if chat is None:
            return
        painter.save()
        title_font, small_font, header_font = self._fonts(option)
        palette = option.palette
        muted = QColor(palette.color(palette.ColorRole.PlaceholderText))
        header = self._header(index)
        if header:
            painter.setFont(header_font)
            painter.setPen(muted)
            top = option.rect.top() + HEADER_GAP
            painter.drawText(
                QRect(option.rect.left() + PAD, top, option.rect.width() - 2 * PAD, 40),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop,
                header,
            )
        # QStyle's Python type costs ~15 ms to make: an empty list's first frame skips it
        from PySide6.QtWidgets import QStyle

        row = self._row_rect(option, index)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        hovered = bool(option.state & QStyle.StateFlag.State_MouseOver)
        if selected or hovered:
            fill = QColor(palette.color(palette.ColorRole.Highlight))
            fill.setAlpha(60 if selected else 25)
            painter.setRenderHint(painter.RenderHint.Antialiasing)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(fill)
            painter.drawRoundedRect(row, 6, 6)
        if option.state & QStyle.StateFlag.State_HasFocus:  # the keyboard's row: a ring
            painter.setRenderHint(painter.RenderHint.Antialiasing)
            painter.setPen(QPen(palette.color(palette.ColorRole.Highlight), 2))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(row.adjusted(1, 1, -1, -1), 6, 6)
        text = palette.color(palette.ColorRole.Text)
        inner = row.adjusted(PAD, PAD, -PAD, -PAD)
        title_metrics = self._metrics[0]
        mark = _activity_mark(index.data(ACTIVITY_ROLE) or "")
        mark_width = 14 if mark else 0
        painter.setFont(title_font)
        painter.setPen(text)
        title_rect = QRect(
            inner.left(), inner.top(), inner.width() - mark_width, title_metrics.height()
        )
        painter.drawText(
            title_rect,
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            title_metrics.elidedText(chat.title, Qt.TextElideMode.ElideRight, title_rect.width()),
        )
        if mark:
            painter.setRenderHint(painter.RenderHint.Antialiasing)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(mark))
            centre = title_rect.center()
            painter.drawEllipse(inner.right() - 8, centre.y() - 4, 8, 8)
        second = QRect(
            inner.left(),
            title_rect.bottom() + 3,
            inner.width(),
            inner.bottom() - title_rect.bottom() - 2,
        )
        painter.setFont(small_font)
        hit: SearchHit | None = index.data(HIT_ROLE)
        if hit is not None:
            _draw_match(painter, second, hit.snippet, small_font, muted, text)
        else:
            painter.setPen(muted)
            metrics = self._metrics[1]
            subtitle = str(index.data(Qt.ItemDataRole.DisplayRole)).partition("\n")[2]
            painter.drawText(
                second,
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                metrics.elidedText(subtitle, Qt.TextElideMode.ElideRight, second.width()),
            )
        painter.restore()

    # -- renaming --------------------------------------------------------------------------------

    def setEditorData(self, editor: QWidget, index: Index) -> None:
        """The row changing meanwhile (its size counted, a reply streaming) must not
        overwrite what the user is typing."""
        if isinstance(editor, QLineEdit) and editor.isModified():
            return
        super().setEditorData(editor, index)
        if isinstance(editor, QLineEdit):
            editor.selectAll()  # as when it opened: typing replaces the title

    def setModelData(self, editor: QWidget, model: Any, index: Index) -> None:
        title = editor.text().strip() if isinstance(editor, QLineEdit) else ""
        if title:
            self.renamed.emit(index.data(ID_ROLE), title)


def _activity_mark(activity: str) -> str:
    """The colour of the dot beside a chat's title ("" for none)."""
    return {Activity.ANSWERING: "#2f7de1", Activity.FAILED: "#d64545"}.get(activity, "")


def _draw_match(
    painter: QPainter, rect: QRect, snippet: str, font: QFont, muted: QColor, text: QColor
) -> None:
    """The snippet on one line with its match in bold, a little of what comes before it
    kept so the match is always in view."""
    from PySide6.QtGui import QFont, QFontMetrics

    from desktop_app.storage.search import MARK_END, MARK_START  # (loaded by the search)

    before, _, rest = " ".join(snippet.split()).partition(MARK_START)
    match, _, after = rest.partition(MARK_END)
    if len(before) > 24:
        before = "…" + before[-23:]
    bold = QFont(font)
    bold.setBold(True)
    x = rect.left()
    for part, part_font, colour in (
        (before, font, muted),
        (match, bold, text),
        (after, font, muted),
    ):
        metrics = QFontMetrics(part_font)
        room = rect.right() - x
        if room <= 0 or not part:
            continue
        shown = metrics.elidedText(part, Qt.TextElideMode.ElideRight, room)
        painter.setFont(part_font)
        painter.setPen(colour)
        painter.drawText(
            QRect(x, rect.top(), room, rect.height()),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            shown,
        )
        x += metrics.horizontalAdvance(shown)
