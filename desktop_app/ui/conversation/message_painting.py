"""The painted parts of a message that are not its text: who speaks (the mark), the
switcher between its versions, the rule above what the next request holds again, a code
block's frame with Copy, and a block's chip."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette, QPen
from PySide6.QtWidgets import QStyleOptionViewItem

from desktop_app.core.blocks import ThinkingBlock
from desktop_app.core.branches import Siblings
from desktop_app.core.messages import Message
from desktop_app.ui import theme
from desktop_app.ui.conversation.markdown_style import HEADER_PX, CodeBlock
from desktop_app.ui.conversation.message_model import BlockChip, context_marker
from desktop_app.ui.conversation.message_words import speaker, status_label, time_label, token_label

PAD = 12  # around a message
DIVIDER_PX = 26  # the band a "above this line: …" rule takes
COPY_BUTTON_PX = 80  # the right end of a code block's header strip
MARK_PX = 20  # the round mark before who speaks


def paint_mark(painter: QPainter, spot: QRectF, message: Message, dark: bool) -> None:
    """Who speaks, at a glance: Claude's mark in its accent, the person's in grey."""
    claude = message.role == "assistant"
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(theme.role_colour(claude, dark))
    painter.drawEllipse(spot)
    letter = QFont(painter.font())
    letter.setBold(True)
    letter.setPixelSize(int(spot.height() * 0.55))
    painter.setFont(letter)
    painter.setPen(QColor("white"))
    painter.drawText(spot, Qt.AlignmentFlag.AlignCenter, "C" if claude else "Y")


def paint_switcher(
    painter: QPainter,
    spots: tuple[QRectF, QRectF, QRectF],
    siblings: Siblings,
    option: QStyleOptionViewItem,
) -> None:
    """‹ 1/2 ›: which version of the message this is; an arrow is dim at either end."""
    back, label, forward = spots
    quiet = option.palette.color(QPalette.ColorRole.PlaceholderText)
    strong = option.palette.color(QPalette.ColorRole.Text)
    painter.setFont(option.font)
    ends = (siblings.index == 0, siblings.index == len(siblings.ids) - 1)
    for arrow, glyph, at_end in ((back, "‹", ends[0]), (forward, "›", ends[1])):
        painter.setPen(quiet if at_end else strong)
        painter.drawText(arrow, Qt.AlignmentFlag.AlignCenter, glyph)
    painter.setPen(quiet)
    painter.drawText(label, Qt.AlignmentFlag.AlignCenter, siblings.label)


def paint_divider(painter: QPainter, rect: QRect, text: str, option: QStyleOptionViewItem) -> None:
    """A rule with its words in the middle, above the first message the next
    request holds again."""
    font = theme.font(option.font, "meta")
    painter.setFont(font)
    colour = option.palette.color(QPalette.ColorRole.PlaceholderText)
    band = QRectF(rect.left() + PAD, rect.top(), rect.width() - 2 * PAD, DIVIDER_PX)
    words = QFontMetrics(font).horizontalAdvance(text) + 16
    y = band.center().y()
    painter.setPen(QPen(colour, 1, Qt.PenStyle.DashLine))
    gap_left = band.center().x() - words / 2
    painter.drawLine(QPointF(band.left(), y), QPointF(gap_left, y))
    painter.drawLine(QPointF(gap_left + words, y), QPointF(band.right(), y))
    painter.setPen(colour)
    painter.drawText(band, Qt.AlignmentFlag.AlignCenter, text)


def paint_code_frame(
    painter: QPainter,
    width: float,
    code: CodeBlock,
    option: QStyleOptionViewItem,
    dark: bool,
    mono: QFont,
    copied: bool,
) -> None:
    """A code block's background and its header strip: the language, and Copy (or
    "Copied" just after a click: `copied`). Coordinates are the document's."""
    from desktop_app.ui.conversation.markdown_style import background

    box = QRectF(0, code.top, width, code.bottom - code.top)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(background(dark))
    painter.drawRoundedRect(box, 6, 6)
    font = QFont(mono)
    font.setPointSizeF(theme.font(option.font, "meta").pointSizeF())
    painter.setFont(font)
    painter.setPen(option.palette.color(QPalette.ColorRole.PlaceholderText))
    strip = QRectF(box.left() + 10, box.top(), box.width() - 20, HEADER_PX)
    centred = Qt.AlignmentFlag.AlignVCenter
    label = code.language or "code"
    if code.folded:
        label += f" · first {code.lines - code.folded} of {code.lines:,} lines"
    painter.drawText(strip, centred | Qt.AlignmentFlag.AlignLeft, label)
    if code.foldable:  # left of Copy: the lines not shown, or folding them again
        fold = f"Show all {code.lines:,} lines" if code.folded else "Fold"
        room = QRectF(strip.left(), strip.top(), strip.width() - COPY_BUTTON_PX, HEADER_PX)
        painter.drawText(room, centred | Qt.AlignmentFlag.AlignRight, fold)
    painter.drawText(strip, centred | Qt.AlignmentFlag.AlignRight, "Copied" if copied else "Copy")


def paint_chip(
    painter: QPainter, x: float, y: float, chip: BlockChip, dark: bool, font: QFont, height: int
) -> float:
    """The pill: type · tokens · state, outlined and lettered in the state's colour."""
    parts = [chip.kind]
    if chip.tokens:
        parts.append(f"{'' if chip.exact else '≈'}{chip.tokens:,}")
    parts.append(chip.label or "counting…")
    text = " · ".join(parts)
    metrics = QFontMetrics(font)
    box = QRectF(x, y, metrics.horizontalAdvance(text) + 14, height)
    colour = theme.state_colour(chip.tone, dark)
    fill = QColor(colour)
    fill.setAlpha(34)
    painter.setPen(QPen(colour, 1))
    painter.setBrush(fill)
    painter.drawRoundedRect(box, box.height() / 2, box.height() / 2)
    painter.setFont(font)
    painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)
    return box.right()


def text_colour(message: Message, block_number: int, palette: QPalette) -> QColor:
    blocks = message.blocks
    block = blocks[block_number] if block_number < len(blocks) else None
    if isinstance(block, ThinkingBlock):
        return palette.color(QPalette.ColorRole.PlaceholderText)
    return palette.color(QPalette.ColorRole.Text)


def paint_header(
    painter: QPainter,
    rect: QRect,
    message: Message,
    chips: tuple[BlockChip, ...],
    option: QStyleOptionViewItem,
    dark: bool,
    switcher: tuple[Siblings, tuple[QRectF, QRectF, QRectF]] | None,
    context_view: bool,
) -> None:
    """Who, when, the versions switcher, the status — and on the right every block's
    tokens (the context view) or one quiet marker of the message's state in the request."""
    font, palette = option.font, option.palette
    metrics = QFontMetrics(font)
    x, y = rect.left() + PAD, rect.top() + PAD
    paint_mark(
        painter,
        QRectF(x, y + (metrics.height() - MARK_PX) / 2, MARK_PX, MARK_PX),
        message,
        dark,
    )
    x += MARK_PX + 8
    bold = QFont(font)
    bold.setBold(True)
    painter.setFont(bold)
    painter.setPen(palette.color(QPalette.ColorRole.Text))
    who = speaker(message)
    if message.is_tool_results:  # a step of Claude's turn, quieter than a message
        painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
    painter.drawText(QPointF(x, y + metrics.ascent()), who)
    x += QFontMetrics(bold).horizontalAdvance(who) + 10
    painter.setFont(font)
    painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
    when = time_label(message.created_at)
    painter.drawText(QPointF(x, y + metrics.ascent()), when)
    x += metrics.horizontalAdvance(when) + 10
    if switcher is not None:
        siblings, spots = switcher
        paint_switcher(painter, spots, siblings, option)
        x = int(spots[2].right()) + 6
    status = status_label(message)
    if status:
        painter.setPen(theme.status_colour(message.status.value, dark))
        painter.drawText(QPointF(x, y + metrics.ascent()), status)
    right = QRectF(rect.left(), y, rect.width() - PAD, metrics.height())
    if context_view:
        text = token_label(message, chips)
        painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
        painter.drawText(right, Qt.AlignmentFlag.AlignRight, text)
        return
    state, text = context_marker(chips)
    if not text:
        return
    small = theme.font(font, "meta")
    painter.setFont(small)
    painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
    painter.drawText(right, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, text)
    dot = QFontMetrics(small).horizontalAdvance(text) + 12
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(theme.state_colour(state, dark))
    painter.drawEllipse(QPointF(right.right() - dot, right.center().y()), 3.5, 3.5)
