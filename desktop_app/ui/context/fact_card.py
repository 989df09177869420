"""A pinned fact drawn as a card: its words whole, then who pinned it, its tokens and when
it was last sent, in the meta line; the facts' colour marks its edge (the colour the
meter gives the pinned facts) — a suggestion waiting for the user's yes is dashed, its
edge in the colour of what is not sent."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QFontMetrics, QPainter, QPalette, QPen
from PySide6.QtWidgets import QListView, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from desktop_app.ui import theme

Index = QModelIndex | QPersistentModelIndex
PAD = theme.space(3)
EDGE = theme.space(1)
WRAP = Qt.TextFlag.TextWordWrap


class FactCardDelegate(QStyledItemDelegate):
    """For a list whose rows' DisplayRole is "text\\nmeta" (`FactListModel`)."""

    def __init__(self, view: QListView, *, waiting: bool = False) -> None:
        """`waiting`: suggested facts, not sent until accepted — their edge in the colour
        of what is not sent, their card dashed."""
        super().__init__(view)
        self.view = view
        self.waiting = waiting

    @staticmethod
    def _parts(index: Index) -> tuple[str, str]:
        text, _, meta = str(index.data(Qt.ItemDataRole.DisplayRole) or "").rpartition("\n")
        return text, meta

    def _text_width(self) -> int:
        return max(60, self.view.viewport().width() - 2 * PAD - EDGE - 2 * self.view.spacing())

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        text, meta = self._parts(index)
        width = self._text_width()
        words = QFontMetrics(option.font).boundingRect(QRect(0, 0, width, 100_000), WRAP, text)
        small = QFontMetrics(theme.font(option.font, "meta"))
        lines = small.boundingRect(QRect(0, 0, width, 100_000), WRAP, meta)
        return QSize(width + 2 * PAD, words.height() + lines.height() + 2 * PAD + theme.space(1))

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = option.palette
        dark = theme.is_dark(palette)
        card = QRectF(option.rect).adjusted(1, 1, -1, -1)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        border = theme.tone("accent" if selected else "border", dark)
        dashes = Qt.PenStyle.DashLine if self.waiting and not selected else Qt.PenStyle.SolidLine
        painter.setPen(QPen(border, 2 if selected else 1, dashes))
        painter.setBrush(palette.color(QPalette.ColorRole.Base))
        painter.drawRoundedRect(card, 8, 8)
        edge = QRectF(card.left() + 1, card.top() + PAD / 2, EDGE, card.height() - PAD)
        painter.setPen(Qt.PenStyle.NoPen)
        sent = theme.section_colour("facts", dark) or border
        painter.setBrush(theme.state_colour("not sent", dark) if self.waiting else sent)
        painter.drawRoundedRect(edge, 2, 2)
        text, meta = self._parts(index)
        width = self._text_width()
        left = int(card.left()) + PAD + EDGE
        painter.setPen(palette.color(QPalette.ColorRole.Text))
        painter.setFont(option.font)
        words = QFontMetrics(option.font).boundingRect(QRect(0, 0, width, 100_000), WRAP, text)
        top = int(card.top()) + PAD
        painter.drawText(QRect(left, top, width, words.height()), WRAP, text)
        small = theme.font(option.font, "meta")
        painter.setFont(small)
        painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
        under = top + words.height() + theme.space(1)
        painter.drawText(QRect(left, under, width, int(card.bottom()) - under), WRAP, meta)
        painter.restore()
