"""A stacked bar chart, painted: one bar per day, a segment per series (a kind of token,
or a model), a light grid with its values, the days beneath, a legend above, and each
bar's figures in its tooltip.

Painted here rather than with Qt Charts: Qt Charts is deprecated since Qt 6.10, and its
successor Qt Graphs draws through Qt Quick with no widget API (doc.qt.io/qt-6/
qtcharts-index.html and qtgraphs-migration-guide-2d.html, read 2026-12-03); both ship only
in PySide6-Addons, a 175 MB wheel beside the Essentials we install, for one chart of
rectangles. This is that chart, in the window's own colours.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QHelpEvent, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from desktop_app.ui import theme

BAR_GAP = 0.25  # of a bar's slot, left empty between bars


@dataclass(frozen=True, slots=True)
class Series:
    name: str
    colour: QColor
    values: tuple[float, ...]  # one per bar


def nice_top(value: float) -> float:
    """The grid's top: `value` rounded up to 1, 2 or 5 × a power of ten (0 stays 1)."""
    if value <= 0:
        return 1.0
    power = 10 ** len(str(int(value))) / 10 if value >= 1 else 1.0
    while power > value:
        power /= 10
    for step in (1, 2, 5, 10):
        if value <= step * power:
            return step * power
    return 10 * power


class StackedBars(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("usageChart")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.labels: tuple[str, ...] = ()
        self.series: tuple[Series, ...] = ()
        self.figure: Callable[[float], str] = lambda v: f"{v:,.0f}"
        self._top = 1.0
        self._lines = 4  # grid lines above the axis

    def sizeHint(self) -> QSize:
        return QSize(640, 260)

    def show_bars(
        self, labels: Sequence[str], series: Sequence[Series], figure: Callable[[float], str]
    ) -> None:
        """`labels` along the bottom, `series` stacked in order from the bottom up,
        `figure` the words for a value (money, or tokens)."""
        self.labels, self.series, self.figure = tuple(labels), tuple(series), figure
        totals = [sum(s.values[i] for s in self.series) for i in range(len(self.labels))]
        self._top = nice_top(max(totals, default=0.0))
        # Round steps: a top of 5 × 10ⁿ in fifths, 1 or 2 × 10ⁿ in quarters.
        self._lines = 5 if f"{self._top:e}".startswith("5") else 4
        self.update()

    def total(self, index: int) -> float:
        return sum(s.values[index] for s in self.series)

    def _plot(self) -> QRectF:
        metrics = QFontMetrics(self.font())
        ticks = (self.figure(self._top * n / self._lines) for n in range(self._lines + 1))
        left = max(metrics.horizontalAdvance(tick) for tick in ticks) + theme.space(2)
        top = metrics.height() + theme.space(3)  # the legend's row
        bottom = metrics.height() + theme.space(2)
        return QRectF(
            left, top, max(1, self.width() - left - 8), max(1, self.height() - top - bottom)
        )

    def bar_rect(self, index: int) -> QRectF:
        """Where bar `index` stands, whole (its stack's total), in widget coordinates."""
        plot = self._plot()
        slot = plot.width() / max(1, len(self.labels))
        height = plot.height() * self.total(index) / self._top
        x = plot.left() + slot * index + slot * BAR_GAP / 2
        return QRectF(x, plot.bottom() - height, slot * (1 - BAR_GAP), height)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        muted = theme.tone("muted", theme.is_dark(palette))
        metrics = QFontMetrics(self.font())
        plot = self._plot()
        painter.setPen(QPen(theme.tone("border", theme.is_dark(palette)), 1))
        for n in range(self._lines + 1):
            y = plot.bottom() - plot.height() * n / self._lines
            painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
            painter.save()
            painter.setPen(muted)
            text = self.figure(self._top * n / self._lines)
            box = QRectF(
                0, y - metrics.height() / 2, plot.left() - theme.space(1), metrics.height()
            )
            painter.drawText(box, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, text)
            painter.restore()
        self._paint_bars(painter, plot)
        self._paint_days(painter, plot, metrics, muted)
        self._paint_legend(painter, metrics, palette)

    def _paint_bars(self, painter: QPainter, plot: QRectF) -> None:
        painter.setPen(Qt.PenStyle.NoPen)
        for index in range(len(self.labels)):
            whole = self.bar_rect(index)
            y = plot.bottom()
            for series in self.series:
                height = plot.height() * series.values[index] / self._top
                if height <= 0:
                    continue
                painter.setBrush(series.colour)
                painter.drawRect(QRectF(whole.left(), y - height, whole.width(), height))
                y -= height

    def _paint_days(
        self, painter: QPainter, plot: QRectF, metrics: QFontMetrics, pen: QColor
    ) -> None:
        """The days beneath, as many as fit without touching; the last always."""
        count = len(self.labels)
        if not count:
            return
        painter.setPen(pen)
        slot = plot.width() / count
        room = max(metrics.horizontalAdvance(label) for label in self.labels) + theme.space(3)
        every = max(1, int(room // max(1.0, slot)) + 1)
        shown = list(range(0, count, every))
        if count - 1 - shown[-1] >= every:
            shown.append(count - 1)
        elif shown[-1] != count - 1:  # the last day, in place of the one too near it
            shown[-1] = count - 1
        for index in shown:
            centre = plot.left() + slot * (index + 0.5)
            box = QRectF(centre - room / 2, plot.bottom() + 4, room, metrics.height())
            painter.drawText(box, Qt.AlignmentFlag.AlignHCenter, self.labels[index])

    def _paint_legend(self, painter: QPainter, metrics: QFontMetrics, palette: QPalette) -> None:
        x = float(self._plot().left())
        swatch = metrics.height() * 0.7
        for series in self.series:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(series.colour)
            painter.drawRoundedRect(
                QRectF(x, (metrics.height() - swatch) / 2 + 2, swatch, swatch), 2, 2
            )
            x += swatch + theme.space(1)
            painter.setPen(palette.color(QPalette.ColorRole.WindowText))
            painter.drawText(QPointF(x, metrics.ascent() + 2), series.name)
            x += metrics.horizontalAdvance(series.name) + theme.space(3)

    def index_at(self, point: QPointF) -> int | None:
        plot = self._plot()
        if not self.labels or not plot.contains(point):
            return None
        return min(
            len(self.labels) - 1, int((point.x() - plot.left()) / (plot.width() / len(self.labels)))
        )

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            index = self.index_at(QPointF(event.pos()))
            if index is None:
                QToolTip.hideText()
                return True
            QToolTip.showText(event.globalPos(), self.tooltip(index), self)
            return True
        return super().event(event)

    def tooltip(self, index: int) -> str:
        """A bar's day, its total and each segment (biggest first)."""
        parts = sorted(
            ((s.name, s.values[index]) for s in self.series if s.values[index]),
            key=lambda part: -part[1],
        )
        lines = [f"{self.labels[index]}: {self.figure(self.total(index))}"]
        lines += [f"  {name}: {self.figure(value)}" for name, value in parts]
        return "\n".join(lines)
