"""The context meter: the model's window as one stacked bar — system prompt, pinned
facts, tool definitions, summary, messages, reserved output, free — with the
auto-compaction threshold marked. Hover a segment to see what it holds; click the
messages segment to jump to where the context starts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QHelpEvent, QMouseEvent, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from desktop_app.ui import theme

if TYPE_CHECKING:
    from desktop_app.context.plan import Plan

# section (the values of plan.Section, a StrEnum) → what it holds (its colour: theme's)
SEGMENTS: dict[str, str] = {
    "project instructions": "the project's instructions, shared by its chats",
    "project facts": "the project's pinned facts, shared by its chats",
    "project knowledge": "the project's knowledge files, sent whole",
    "system": "the chat's system prompt",
    "facts": "the pinned facts, sent verbatim every turn",
    "tools": "the tool definitions",
    "summary": "the summary of compacted turns",
    "messages": "the messages sent (click to see where they start)",
    "reserved output": "room kept for the reply (max output tokens)",
    "free": "free",
}
MESSAGES, TOOLS, RESERVED, FREE = "messages", "tools", "reserved output", "free"
ZOOM_BELOW = 0.25  # what is sent, under this share of the window, gets a bar of its own


def tools_by_server(plan: Plan) -> list[tuple[str, int]]:
    """The tools segment by where the tools come from (each MCP server, built-in), largest
    first, scaled as the segment is."""
    from desktop_app.chats import people_name

    totals: dict[str, int] = {}
    for spec in plan.request.tools:
        named = people_name(spec.name)
        source = named.partition(".")[0] if named != spec.name else "built-in"
        totals[source] = totals.get(source, 0) + plan.counter.tools((spec,))
    scaled = {name: round(raw * plan.calibration) for name, raw in totals.items()}
    return sorted(scaled.items(), key=lambda item: -item[1])


class ContextMeter(QWidget):
    """Signals:
    messages_clicked(): the user clicked the messages segment.
    """

    messages_clicked = Signal()

    def __init__(self, parent: QWidget | None = None, *, vertical: bool = False) -> None:
        super().__init__(parent)
        self.setObjectName("contextMeter")
        self.plan: Plan | None = None
        self.streaming_tokens = 0  # a reply being written: counted into messages live
        self.vertical = vertical  # filled from the bottom up (the narrow window's strip)
        self.setMouseTracking(True)
        if vertical:
            self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Expanding)
            self.setMinimumWidth(18)
        else:
            self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
            self.setMinimumHeight(30)

    def sizeHint(self) -> QSize:
        if self.vertical:
            return QSize(18, 200)
        return QSize(260, 52 if self.zoomed() else 30)

    def show_plan(self, plan: Plan | None) -> None:
        was = self.zoomed()
        self.plan = plan
        self.streaming_tokens = 0
        if self.zoomed() != was:
            self.setMinimumHeight(self.sizeHint().height())
            self.updateGeometry()
        self.update()

    def zoomed(self) -> bool:
        """Is what is sent drawn a second time, on a scale of its own? (A 2,700-token
        chat fills 0% of a 1,000,000-token window: one bar alone would look empty.)"""
        if self.vertical or self.plan is None or not self.plan.context_window:
            return False
        sizes = dict(self.segments())
        sent = self.plan.context_window - sizes.get(FREE, 0) - sizes.get(RESERVED, 0)
        return sent / self.plan.context_window < ZOOM_BELOW

    def add_streaming(self, tokens: int) -> None:
        self.streaming_tokens += tokens
        self.update()

    def segments(self) -> list[tuple[str, int]]:
        """Each section's tokens, in bar order (the streamed reply taken from free)."""
        if self.plan is None:
            return []
        sizes: dict[str, int] = {str(section): n for section, n in self.plan.sections.items()}
        extra = min(self.streaming_tokens, sizes.get(FREE, 0))
        sizes[MESSAGES] = sizes.get(MESSAGES, 0) + extra
        sizes[FREE] = sizes.get(FREE, 0) - extra
        return [(section, sizes.get(section, 0)) for section in SEGMENTS]

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        bar = self._bar()
        palette = self.palette()
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(palette.color(QPalette.ColorRole.AlternateBase))
        painter.drawRoundedRect(bar, 4, 4)
        dark = theme.is_dark(palette)
        for section, rect in self._rects(bar):
            colour = theme.section_colour(section, dark)
            if colour is not None:
                painter.setBrush(colour)
                painter.drawRect(rect)
        if self.plan is not None and self.plan.context_window:
            share = self.plan.threshold / self.plan.context_window
            painter.setPen(QPen(theme.status_colour("error", dark), 2))
            if self.vertical:
                y = bar.bottom() - bar.height() * share
                painter.drawLine(QPointF(bar.left() - 3, y), QPointF(bar.right() + 3, y))
            else:
                x = bar.left() + bar.width() * share
                painter.drawLine(QPointF(x, bar.top() - 3), QPointF(x, bar.bottom() + 3))
        painter.setPen(QPen(palette.color(QPalette.ColorRole.Mid), 1))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(bar, 4, 4)
        if self.zoomed():
            self._paint_zoom(painter, bar, dark)

    def _paint_zoom(self, painter: QPainter, bar: QRectF, dark: bool) -> None:
        """What is sent, again, across the whole width, joined to its end on the bar."""
        zoom = self._zoom_bar()
        rects = self._rects(zoom, used_only=True)
        sent = [r.right() for s, r in self._rects(bar) if s not in (FREE, RESERVED)]
        used_end = max(sent, default=bar.left())
        painter.setPen(QPen(theme.tone("border", dark), 1, Qt.PenStyle.DashLine))
        painter.drawLine(QPointF(bar.left(), bar.bottom()), QPointF(zoom.left(), zoom.top()))
        painter.drawLine(QPointF(used_end, bar.bottom()), QPointF(zoom.right(), zoom.top()))
        painter.setPen(Qt.PenStyle.NoPen)
        for section, rect in rects:
            colour = theme.section_colour(section, dark)
            if colour is not None:
                painter.setBrush(colour)
                painter.drawRect(rect)
        painter.setPen(QPen(theme.tone("border", dark), 1))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(zoom, 4, 4)

    def event(self, event: QEvent) -> bool:
        if isinstance(event, QHelpEvent):
            found = self._section_at(QPointF(event.pos()))
            if found is None:
                QToolTip.hideText()
            else:
                QToolTip.showText(event.globalPos(), self.describe(found), self)
            return True
        return super().event(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        event.accept()  # (QWidget's passes it on, and the release would go elsewhere)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._section_at(event.position()) is MESSAGES:
            self.messages_clicked.emit()

    def describe(self, section: str) -> str:
        tokens = dict(self.segments()).get(section, 0)
        window = self.plan.context_window if self.plan else 0
        share = f" ({tokens / window:.0%} of the window)" if window else ""
        scaled = ""
        if self.plan and section not in (RESERVED, FREE) and round(self.plan.calibration, 2) != 1:
            scaled = f", with calibration ×{self.plan.calibration:.2f}"
        what = SEGMENTS[section]
        text = f"{section.capitalize()}: ≈{tokens:,} tokens{scaled}{share} — {what}"
        if section == TOOLS and self.plan is not None:
            text += "".join(f"\n  {name}: ≈{n:,}" for name, n in tools_by_server(self.plan))
        return text

    def segment_rect(self, section: str) -> QRectF:
        """Where a section's segment is drawn (empty when it has no tokens)."""
        return dict(self._rects(self._bar())).get(section, QRectF())

    def _bar(self) -> QRectF:
        if self.vertical:
            return QRectF(4, 1, self.width() - 8, self.height() - 2)
        if self.zoomed():
            return QRectF(1, 4, self.width() - 2, 12)
        return QRectF(1, 6, self.width() - 2, self.height() - 12)

    def _zoom_bar(self) -> QRectF:
        return QRectF(1, 28, self.width() - 2, self.height() - 32)

    def _rects(self, bar: QRectF, *, used_only: bool = False) -> list[tuple[str, QRectF]]:
        window = self.plan.context_window if self.plan else 0
        segments = self.segments()
        if used_only:  # what is sent: without the room kept for the reply, or free
            segments = [s for s in segments if s[0] not in (FREE, RESERVED)]
            window = sum(tokens for _, tokens in segments)
        if not window:
            return []
        rects, along = [], 0.0
        length = bar.height() if self.vertical else bar.width()
        for section, tokens in segments:
            size = length * tokens / window
            if self.vertical:  # bottom up
                rect = QRectF(bar.left(), bar.bottom() - along - size, bar.width(), size)
            else:
                rect = QRectF(bar.left() + along, bar.top(), size, bar.height())
            rects.append((section, rect))
            along += size
        return rects

    def _section_at(self, pos: QPointF) -> str | None:
        if self.zoomed():
            for section, rect in self._rects(self._zoom_bar(), used_only=True):
                if rect.contains(pos) and not rect.isEmpty():
                    return section
        for section, rect in self._rects(self._bar()):
            if rect.contains(pos) and not rect.isEmpty():
                return section
        return None
