"""Paints one message: a header (who, when, status, tokens), then every block with its
chip — type, token count, context state — and its content.

Layouts are the expensive part (docs/architecture.md, *Costs that shape the window*:
~0.7 ms for a short Markdown message, ~20 ms for 20 KB), so they are made only for rows
Qt asks about and cached by (message id, revision, width, which blocks are expanded). A streaming reply is laid out as plain text
and switches to Markdown once it is complete, so a flush never re-parses Markdown.
Chips are painted from the model's data on every paint and never cached: a new plan
changes them without touching any layout.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QEvent,
    QPoint,
    QPointF,
    QRect,
    QRectF,
    QSize,
    Qt,
    QTimer,
    QUrl,
    Signal,
)
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QDesktopServices,
    QFont,
    QFontMetrics,
    QGuiApplication,
    QHelpEvent,
    QMouseEvent,
    QPainter,
    QPalette,
    QPen,
    QTextDocument,
)
from PySide6.QtWidgets import QListView, QStyle, QStyledItemDelegate, QStyleOptionViewItem, QToolTip

from desktop_app import said
from desktop_app.cited import cited_runs, passage_for
from desktop_app.context.plan import BlockState
from desktop_app.core.blocks import (
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from desktop_app.core.branches import Siblings
from desktop_app.core.messages import Message, MessageStatus
from desktop_app.ui import theme
from desktop_app.ui.conversation.code_colouring import LATER_FROM_CHARS, LaterColouring
from desktop_app.ui.conversation.long_text import SHOW_ALL, shown_plain
from desktop_app.ui.conversation.markdown_style import (
    HEADER_PX,
    CodeBlock,
    has_inline_code,
    place,
    style_code,
    style_text,
)
from desktop_app.ui.conversation.message_content import (
    block_content,
    make_document,
    thinking_content,
)
from desktop_app.ui.conversation.message_model import (
    BlockChip,
    Index,
    MessageListModel,
    Role,
    TurnPlace,
    out_of_request,
)
from desktop_app.ui.conversation.message_painting import (
    COPY_BUTTON_PX,
    DIVIDER_PX,
    MARK_PX,
    PAD,
    paint_chip,
    paint_code_frame,
    paint_divider,
    paint_header,
    text_colour,
)
from desktop_app.ui.conversation.message_words import (
    speaker,
    status_label,
    time_label,
    token_label,
)
from desktop_app.ui.conversation.streamed_text import StreamedText

if TYPE_CHECKING:
    from desktop_app.config.prices import ReplyCost

INDENT = 14  # blocks sit under the header
GAP = 6  # between a chip and its content, and between blocks
CHIP_GAP = 4
CACHE_SIZE = 600  # rows whose laid-out documents are kept (≈12 KB each)
# Rows whose heights are kept: every row loaded is measured at every layout pass; without
# its height a row beyond CACHE_SIZE was laid out again each time (370 ms at 610 rows).
HEIGHTS_KEPT = 200_000
LINK_SCHEMES = ("http", "https", "mailto")
COPIED_MS = 1500  # how long "Copied" shows
FOLD_BUTTON_PX = 150  # "Show all N lines", left of Copy
CONTINUED_PX = 4  # the gap between two rows of one turn of Claude's
ARROW_PX = 22  # each arrow of a message's ‹ 1/2 › (its versions: branches)
COLUMN_PX = 780  # messages are read in a centred column this wide at most (lines of
# ~90 characters); a wider window adds margins, not longer lines


@dataclass
class _Part:
    """One block as laid out: its chip row at `top` (`row` high: 0 when it has none),
    then `doc` (None when collapsed)."""

    block: int
    top: float
    doc: QTextDocument | None
    collapsible: bool
    summary: str  # the chip row's text after the chip: "show" hints, image sizes, …
    row: float = 0.0
    codes: list[CodeBlock] = field(default_factory=list)  # its fenced code, placed

    @property
    def doc_top(self) -> float:
        return self.top + self.row + (GAP / 2 if self.row else 0)


@dataclass
class _Layout:
    height: int
    parts: list[_Part] = field(default_factory=list)
    top: float = 0.0  # where the message starts: below the divider, when it has one
    divider: str = ""  # "Above this line: summarized in #2" (MessageListModel.divider_of)
    continues: bool = False  # more of Claude's turn, under the row above (no header)


class MessageDelegate(QStyledItemDelegate):
    """Signals:
    branch_chosen(str): an arrow of a message's ‹ 1/2 › was clicked — show that version
        (its id).
    show_all_requested(str): *Show all* under a message too long to lay out whole.
    """

    branch_chosen = Signal(str)
    show_all_requested = Signal(str)

    def __init__(self, view: QListView) -> None:
        super().__init__(view)
        self._view = view
        self._cache: OrderedDict[tuple[Any, ...], _Layout] = OrderedDict()
        self._heights: dict[tuple[Any, ...], int] = {}  # every row laid out: its height
        # While every row is measured: the view's width, the column's, the font's key,
        # Context view, dark (`layout_pass`)
        self._pass: tuple[int, int, str, bool, bool] | None = None
        self.streamed = StreamedText(make_document, self)  # the text being streamed, laid out
        self.colouring = LaterColouring(lambda: self._view.viewport().update(), self)
        self._expanded: set[tuple[str, int]] = set()
        self._unfolded: set[tuple[str, int, int]] = set()  # long code shown whole: (id, block, key)
        self._mono = theme.monospace()
        # What a reply's request cost (said on hover); None: no record of it
        self.cost_of: Callable[[str], ReplyCost | None] | None = None
        self.column_px = COLUMN_PX  # the reading column's widest
        # Context view: every block's chip (type · tokens · state). Off, a message shows
        # one quiet marker in its header, and a block has a row only for what it says
        # beside the chip (a collapsed result, an image's size, …).
        self.context_view = False
        self._copied: tuple[str, int] | None = None  # the code block just copied

    # -- Qt's side ------------------------------------------------------------------------

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        height = self._height(index, option.font)
        return QSize(self._pass[0] if self._pass else self._view_width(), height)

    @contextmanager
    def layout_pass(self, font: QFont) -> Iterator[None]:
        """While the view measures every row (`MessageListView.doItemsLayout`): what the
        rows' layouts share — the view's width, the font, the view's modes — read once.
        (The rows' font is the view's: Qt's item options take it from there.)"""
        self._pass = (
            self._view_width(),
            self._width(),
            font.key(),
            self.context_view,
            theme.is_dark(),
        )
        try:
            yield
        finally:
            self._pass = None

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        message: Message = index.data(Role.MESSAGE)
        chips: tuple[BlockChip, ...] = index.data(Role.BLOCKS)
        layout = self._layout(index, option.font)
        palette = option.palette
        dark = theme.is_dark(palette)
        rect = self.column_rect(option.rect)
        visible = option.rect.intersected(self._view.viewport().rect())
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if layout.divider:
            paint_divider(painter, rect, layout.divider, option)
            rect = rect.adjusted(0, int(layout.top), 0, 0)
        if out_of_request(chips):  # summarized, excluded or not sent: set apart, dimmed
            painter.setOpacity(0.55)
        bubble = QRectF(rect.adjusted(6, 3, -6, -3))
        if message.role == "user" and not message.is_tool_results:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(palette.color(QPalette.ColorRole.AlternateBase))
            painter.drawRoundedRect(bubble, 8, 8)
        # The keyboard's message (the list has the focus) gets a ring; a selected one a line.
        focused = bool(option.state & QStyle.StateFlag.State_HasFocus)
        if focused or option.state & QStyle.StateFlag.State_Selected:
            painter.setPen(
                QPen(palette.color(QPalette.ColorRole.Highlight), 2.5 if focused else 1.5)
            )
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(bubble, 8, 8)
        if not layout.continues:
            siblings = index.data(Role.SIBLINGS)
            spots = self._switcher_at(rect, message, option.font) if siblings else None
            switcher = (siblings, spots) if siblings is not None and spots else None
            paint_header(painter, rect, message, chips, option, dark, switcher, self.context_view)
        for part in layout.parts:
            chip = chips[part.block] if part.block < len(chips) else BlockChip("?", 0, False, None)
            top = rect.top() - layout.top + part.top
            left = rect.left() + PAD + INDENT
            if part.row and self.context_view:
                chip_right = paint_chip(
                    painter, left, top, chip, dark, self._chip_font(), self._chip_height()
                )
            else:
                chip_right = left - 8  # the summary starts where the chip would
            if part.row and part.summary:
                painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
                font = theme.font(option.font, "meta")
                painter.setFont(font)
                room = rect.right() - PAD - chip_right - 8
                text = QFontMetrics(font).elidedText(
                    self._line_text(message, part, chip), Qt.TextElideMode.ElideRight, int(room)
                )
                painter.drawText(
                    QRectF(chip_right + 8, top, room, self._chip_height()),
                    Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                    text,
                )
            if part.doc is not None:
                painter.save()
                origin = QPointF(left, rect.top() - layout.top + part.doc_top)
                painter.translate(origin)
                for code in part.codes:
                    copied = self._copied == (code.code, code.first)
                    width = part.doc.textWidth()
                    paint_code_frame(painter, width, code, option, dark, self._mono, copied)
                context = QAbstractTextDocumentLayout.PaintContext()
                # Only the lines on screen are drawn (a long reply is mostly off it)
                context.clip = QRectF(visible).translated(-origin)
                context.palette = palette
                context.palette.setColor(
                    QPalette.ColorRole.Text, text_colour(message, part.block, palette)
                )
                part.doc.documentLayout().draw(painter, context)
                painter.restore()
        painter.restore()

    def editorEvent(
        self, event: QEvent, model: Any, option: QStyleOptionViewItem, index: Index
    ) -> bool:
        """A click on a collapsible block's chip row shows or hides its content."""
        if event.type() != QEvent.Type.MouseButtonRelease or not isinstance(event, QMouseEvent):
            return False
        if event.button() != Qt.MouseButton.LeftButton:
            return False
        siblings: Siblings | None = index.data(Role.SIBLINGS)
        if siblings is not None:
            back, _, forward = self.switcher(index, option)
            for arrow, step in ((back, -1), (forward, 1)):
                if arrow.contains(event.position()):
                    if 0 <= siblings.index + step < len(siblings.ids):
                        self.branch_chosen.emit(siblings.ids[siblings.index + step])
                    return True
        link = self.link_at(index, option, event.position())
        if link == SHOW_ALL:  # the line after a long text's first part
            self.show_all_requested.emit(index.data(Role.MESSAGE).id)
            return True
        if link:  # a web link opens in the browser, as anywhere else; nothing else does:
            url = QUrl(link)  # a reply (or a tool result it quotes) may link to a file
            if url.scheme().lower() in LINK_SCHEMES:
                QDesktopServices.openUrl(url)
            return True
        fold = next(
            (
                (j, c)
                for r, j, c in self.fold_buttons(index, option)
                if r.contains(event.position())
            ),
            None,
        )
        if fold is not None:
            self.toggle_fold(index, *fold)
            return True
        code = self._copy_button_at(index, option, event.position())
        if code is not None:
            QGuiApplication.clipboard().setText(code.code)
            self._copied = (code.code, code.first)
            self._view.viewport().update()
            QTimer.singleShot(COPIED_MS, self, self._forget_copied)
            return True
        part = self._part_at(index, option, event.position())
        if part is None or not part.collapsible:
            return False
        self.toggle(index, part.block)
        return True

    def step_text(self, index: Index, option: QStyleOptionViewItem, block: int) -> str:
        """A block's one line as painted (a tool call, its result, thinking folded…)."""
        layout = self._layout(index, option.font)
        chips: tuple[BlockChip, ...] = index.data(Role.BLOCKS)
        part = next(p for p in layout.parts if p.block == block)
        chip = chips[block] if block < len(chips) else BlockChip("?", 0, False, None)
        return self._line_text(index.data(Role.MESSAGE), part, chip)

    def _line_text(self, message: Message, part: _Part, chip: BlockChip) -> str:
        """A result's line says what it costs in the next request too, unless Context
        view's chip (beside it) already does."""
        block = message.blocks[part.block] if part.block < len(message.blocks) else None
        if self.context_view or not isinstance(block, ToolResultBlock) or not chip.tokens:
            return part.summary
        cost = f"≈{chip.tokens:,} tokens"
        if chip.state not in (None, BlockState.IN_CONTEXT):
            cost += f", {chip.label}"
        head, dash, preview = part.summary.partition(" — ")  # before the preview: never elided
        return f"{head} · {cost}{dash}{preview}"

    def _forget_copied(self) -> None:
        self._copied = None
        self._view.viewport().update()

    def _copy_button_at(
        self, index: Index, option: QStyleOptionViewItem, pos: QPointF
    ) -> CodeBlock | None:
        return next(
            (code for rect, code in self.copy_buttons(index, option) if rect.contains(pos)), None
        )

    def actions_spot(
        self, index: Index, option: QStyleOptionViewItem, bar_width: int = 0
    ) -> QPoint:
        """Where a message's hover bar goes: in its header, after who and when — clear of
        the marker on the right (hovered for its breakdown) and below any divider."""
        message: Message = index.data(Role.MESSAGE)
        layout = self._layout(index, option.font)
        rect = self.column_rect(option.rect)
        if layout.continues:  # no header: over the top right of the step
            return QPoint(int(rect.right() - PAD - bar_width), int(rect.top() + layout.top))
        x = self._after_when(rect, message, option.font) + 6
        if index.data(Role.SIBLINGS) is not None:
            x = self.switcher(index, option)[2].right() + 6
        status = status_label(message)
        if status:  # after it: the bar must not cover "● interrupted"
            x += QFontMetrics(option.font).horizontalAdvance(status) + 10
        return QPoint(int(x), int(rect.top() + layout.top + PAD / 2))

    def switcher(self, index: Index, option: QStyleOptionViewItem) -> tuple[QRectF, QRectF, QRectF]:
        """Where a message's ‹ 1/2 › is, in the view: back arrow, label, forward arrow."""
        rect = self.column_rect(option.rect)
        top = int(self._layout(index, option.font).top)
        return self._switcher_at(rect.adjusted(0, top, 0, 0), index.data(Role.MESSAGE), option.font)

    def _switcher_at(
        self, rect: QRect, message: Message, font: QFont
    ) -> tuple[QRectF, QRectF, QRectF]:
        x = self._after_when(rect, message, font)
        height = QFontMetrics(font).height()
        label = QFontMetrics(font).horizontalAdvance("88/88")
        y = rect.top() + PAD
        return (
            QRectF(x, y, ARROW_PX, height),
            QRectF(x + ARROW_PX, y, label, height),
            QRectF(x + ARROW_PX + label, y, ARROW_PX, height),
        )

    @staticmethod
    def _after_when(rect: QRect, message: Message, font: QFont) -> float:
        """Where a header's words end: after who and when."""
        bold = QFont(font)
        bold.setBold(True)
        x = rect.left() + PAD + MARK_PX + 8
        x += QFontMetrics(bold).horizontalAdvance(speaker(message)) + 10
        return x + QFontMetrics(font).horizontalAdvance(time_label(message.created_at)) + 10

    def documents(self, index: Index, option: QStyleOptionViewItem) -> list[tuple[QPointF, _Part]]:
        """Each shown block's document with where its top left is, in the view."""
        layout = self._layout(index, option.font)
        rect = self.column_rect(option.rect)
        left = rect.left() + PAD + INDENT
        return [
            (QPointF(left, rect.top() + part.doc_top), part)
            for part in layout.parts
            if part.doc is not None
        ]

    def copy_buttons(
        self, index: Index, option: QStyleOptionViewItem
    ) -> list[tuple[QRectF, CodeBlock]]:
        """Each code block of a message with its Copy button (the right of its header
        strip), in the view's coordinates."""
        buttons = []
        for origin, part in self.documents(index, option):
            assert part.doc is not None
            right = origin.x() + part.doc.textWidth()
            for code in part.codes:
                top = origin.y() + code.top
                buttons.append(
                    (QRectF(right - COPY_BUTTON_PX, top, COPY_BUTTON_PX, HEADER_PX), code)
                )
        return buttons

    def fold_buttons(
        self, index: Index, option: QStyleOptionViewItem
    ) -> list[tuple[QRectF, int, CodeBlock]]:
        """Each long code block's "Show all N lines" / "Fold" (left of Copy), in the
        view's coordinates, with its block's index."""
        buttons = []
        for origin, part in self.documents(index, option):
            assert part.doc is not None
            right = origin.x() + part.doc.textWidth() - COPY_BUTTON_PX
            for code in part.codes:
                if code.foldable:
                    top = origin.y() + code.top
                    rect = QRectF(right - FOLD_BUTTON_PX, top, FOLD_BUTTON_PX, HEADER_PX)
                    buttons.append((rect, part.block, code))
        return buttons

    def toggle_fold(self, index: Index, block: int, code: CodeBlock) -> None:
        """Show a long code block whole, or fold it back to its first lines."""
        message: Message = index.data(Role.MESSAGE)
        self._unfolded.symmetric_difference_update({(message.id, block, code.key)})
        self.sizeHintChanged.emit(index)

    def link_at(self, index: Index, option: QStyleOptionViewItem, pos: QPointF) -> str:
        """The address of the link under `pos` in a message's text, or ""."""
        for origin, part in self.documents(index, option):
            assert part.doc is not None
            anchor = part.doc.documentLayout().anchorAt(pos - origin)
            if anchor:
                return anchor
        return ""

    def helpEvent(
        self, event: QHelpEvent, view: Any, option: QStyleOptionViewItem, index: Index
    ) -> bool:
        part = self._part_at(index, option, QPointF(event.pos()))
        chips: tuple[BlockChip, ...] = index.data(Role.BLOCKS) or ()
        if part is None and (
            self._on_header(index, option, QPointF(event.pos()))
            or self._layout(index, option.font).continues  # (it has no header: its text)
        ):
            return self._header_tip(event, view, index)
        link = self.link_at(index, option, QPointF(event.pos()))
        if tip := link and passage_for(index.data(Role.MESSAGE).blocks, link):
            QToolTip.showText(event.globalPos(), tip, view)  # a footnote's cited passage
            return True
        if part is None or part.block >= len(chips):
            return super().helpEvent(event, view, option, index)
        chip = chips[part.block]
        how = "exact (reported by the API)" if chip.exact else "estimated locally"
        state = chip.label or "not counted yet"
        tip = f"{chip.kind} block · {chip.tokens:,} tokens, {how}\nIn the next request: {state}"
        if part.collapsible:
            tip += "\nClick to show or hide."
        QToolTip.showText(event.globalPos(), tip, view)
        return True

    def _header_tip(self, event: QHelpEvent, view: Any, index: Index) -> bool:
        """Over a message's header: each block's tokens and state in the next request,
        and (a reply) what its request cost, from the request ledger."""
        message: Message = index.data(Role.MESSAGE)
        chips: tuple[BlockChip, ...] = index.data(Role.BLOCKS) or ()
        lines = [
            f"{chip.kind} · {'' if chip.exact else '≈'}{chip.tokens:,} tokens · "
            f"{chip.label or 'not counted yet'}"
            for chip in chips
        ]
        if lines:
            lines.insert(0, f"In the next request ({token_label(message, chips)}):")
        cost = self.cost_of(message.id) if self.cost_of and message.role == "assistant" else None
        if cost is not None:
            lines.append(said.reply_cost(cost))
        if not lines:
            QToolTip.hideText()
            return False
        QToolTip.showText(event.globalPos(), "\n".join(lines), view)
        return True

    def _on_header(self, index: Index, option: QStyleOptionViewItem, pos: QPointF) -> bool:
        layout = self._layout(index, option.font)
        if layout.continues:
            return False
        first = layout.parts[0].top if layout.parts else option.rect.height()
        return pos.y() - option.rect.top() < first

    # -- our side -------------------------------------------------------------------------

    def toggle(self, index: Index, block: int) -> None:
        message: Message = index.data(Role.MESSAGE)
        key = (message.id, block)
        self._expanded.symmetric_difference_update({key})
        self.sizeHintChanged.emit(index)

    def is_expanded(self, message_id: str, block: int) -> bool:
        return (message_id, block) in self._expanded

    def _width(self) -> int:
        """The reading column's width: the view's, up to `column_px`."""
        return min(self._view_width(), max(200, self.column_px))

    def _view_width(self) -> int:
        return max(200, self._view.viewport().width())

    def column_rect(self, row: QRect) -> QRect:
        """A row's message, in the column centred in it."""
        width = self._width()
        return QRect(row.left() + (row.width() - width) // 2, row.top(), width, row.height())

    def _mono_like(self, font: QFont) -> QFont:
        """The monospace font at the text's size (Settings' text size reaches code too)."""
        mono = QFont(self._mono)
        mono.setPointSizeF(font.pointSizeF())
        return mono

    def _chip_height(self) -> int:
        return QFontMetrics(self._chip_font()).height() + 4

    def _chip_font(self) -> QFont:
        return theme.font(self._view.font(), "meta")

    def _part_at(self, index: Index, option: QStyleOptionViewItem, pos: QPointF) -> _Part | None:
        layout = self._layout(index, option.font)
        y = pos.y() - option.rect.top()
        for part in layout.parts:
            if part.row and part.top <= y <= part.top + part.row:
                return part
        return None

    def _lay_out_again(self, message_id: str) -> None:
        model = self._view.model()
        row = model.row_of(message_id) if isinstance(model, MessageListModel) else None
        if row is not None:
            self.sizeHintChanged.emit(model.index(row, 0))

    def _layout(self, index: Index, font: QFont) -> _Layout:
        layout = self._layout_or_height(index, font, only_height=False)
        assert isinstance(layout, _Layout)
        return layout

    def _height(self, index: Index, font: QFont) -> int:
        """A row's height: all a layout pass asks of every row loaded, kept for each
        (the laid-out documents are kept for the newest CACHE_SIZE rows: painting needs
        them for the few on screen)."""
        height = self._layout_or_height(index, font, only_height=True)
        return height if isinstance(height, int) else height.height

    def _layout_or_height(self, index: Index, font: QFont, *, only_height: bool) -> _Layout | int:
        # Asked for every row whenever any row changes (QListView lays them all out
        # again): one model call, and a key made of plain values
        model = index.model()
        assert isinstance(model, MessageListModel)  # the only model this delegate paints
        message, revision, divider, turn = model.layout_inputs(index.row())
        ended = message.status is not MessageStatus.STREAMING
        if ended and self.streamed.ended(message.id, self._lay_out_again):  # (not kept)
            provisional = self._make_layout(
                message, self._width(), font, divider, turn, index.data(Role.CALLS) or {}
            )
            return provisional.height if only_height else provisional
        expanded = (
            tuple(j for j in range(len(message.blocks)) if (message.id, j) in self._expanded)
            if self._expanded
            else ()
        )
        unfolded = (
            tuple(sorted((j, k) for m, j, k in self._unfolded if m == message.id))
            if self._unfolded
            else ()
        )
        _, width, font_key, context_view, dark = self._pass or (
            0,
            self._width(),
            font.key(),
            self.context_view,
            theme.is_dark(),  # code is coloured for the scheme
        )
        key = (
            message.id,
            divider,
            revision,
            message.revision,
            width,
            expanded,
            unfolded,
            font_key,
            context_view,
            dark,
            turn,  # (its neighbours load and arrive later)
        )
        layout = self._cache.get(key)
        if layout is not None:
            self._cache.move_to_end(key)
            return layout
        if only_height:
            height = self._heights.get(key)
            if height is not None:
                return height
        layout = self._make_layout(
            message,
            width,
            font,
            divider,
            turn,
            index.data(Role.CALLS) or {},
            unfolded,
        )
        self._cache[key] = layout
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        if len(self._heights) > HEIGHTS_KEPT:  # (old widths' and fonts' heights)
            self._heights.clear()
        self._heights[key] = layout.height
        return layout.height if only_height else layout

    def _make_layout(
        self,
        message: Message,
        width: int,
        font: QFont,
        divider: str,
        turn: TurnPlace,
        calls: dict[str, ToolUseBlock],
        unfolded: tuple[tuple[int, int], ...] = (),
    ) -> _Layout:
        continues = turn.continues
        text_width = max(100, width - 2 * PAD - INDENT)
        top = float(DIVIDER_PX if divider else 0)
        # More of Claude's turn reads on from the row above: no header, no gap
        y = top + (CONTINUED_PX if continues else PAD + QFontMetrics(font).height() + GAP)
        parts: list[_Part] = []
        streaming = message.status is MessageStatus.STREAMING or self.streamed.settling(message.id)
        runs = {} if streaming else cited_runs(message.blocks)  # (read as one, with sources)
        joined = {k for run in runs.values() for k in run.others}
        for j, block in enumerate(message.blocks):
            open_ = (message.id, j) in self._expanded
            call = calls.get(block.tool_use_id) if isinstance(block, ToolResultBlock) else None
            if j in runs or j in joined:
                text = runs[j].markdown if j in runs else ""
                doc = make_document(text, font, text_width, markdown=True) if text else None
                collapsible, summary = False, ""
            elif isinstance(block, ThinkingBlock):
                doc, collapsible, summary = thinking_content(
                    message, j, block, open_, font, text_width
                )
            elif streaming and isinstance(block, TextBlock):
                text = shown_plain(block.text).text  # (bounded: its first part, if long)
                doc = self.streamed.document((message.id, j), text, font, text_width)
                collapsible, summary = False, ""
            else:
                mono = self._mono_like(font)
                doc, collapsible, summary = block_content(
                    block, open_, font, text_width, mono, call
                )
            row = self._chip_height() if self.context_view or summary else 0.0
            part = _Part(j, y, doc, collapsible, summary, row)
            if doc is not None and isinstance(block, TextBlock) and not streaming:
                whole = {k for block_number, k in unfolded if block_number == j}
                dark = theme.is_dark()
                style_text(doc, dark, inline_code=has_inline_code(block.text))  # (before code)
                now = len(block.text) < LATER_FROM_CHARS
                part.codes = style_code(doc, dark, whole, colour=now)
                if not now:
                    self.colouring.add(doc, part.codes, dark)
                doc.setTextWidth(text_width)  # laid out again with the new margins
                place(doc, part.codes)
            parts.append(part)
            y = part.doc_top + (doc.size().height() if doc is not None else 0)
            y += 0 if j in joined and not row else GAP  # (a joined block adds no gap)
        if not message.blocks:
            y += QFontMetrics(font).height()  # a reply that has not said anything yet
        bottom = CONTINUED_PX - GAP if turn.continued else PAD - GAP  # the turn reads on below
        return _Layout(int(y + bottom), parts, top, divider, continues)
