"""The top of the context panel, read at a glance: the request's total as one large
number, then its parts as rows — colour, name, tokens, share of what is sent, a small
bar — each a click away from what it holds; below them, a line each for what matters
now (`status_text`), and the sentences that explain the counting, behind "How is this
counted?" (`counting_text`)."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QFontMetrics, QHelpEvent, QMouseEvent, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from desktop_app.ui import theme
from desktop_app.ui.context.meter import FREE, RESERVED, SEGMENTS

if TYPE_CHECKING:
    from collections.abc import Sequence

    from desktop_app.chats import Budget
    from desktop_app.context.plan import Plan

NOT_SENT = (FREE, RESERVED)  # room in the window, not part of what is sent
ROW_GAP = theme.space(1)
SWATCH = theme.space(3)


def total_line(plan: Plan, points: float) -> str:
    """The total ("≈3,085 of 16,000 tokens · 19%"), its number large (`points`: the
    text size it is drawn at); "exact" only when the server counted this very request."""
    figure = plan.input_figure
    share = figure.value / plan.context_window if plan.context_window else 0.0
    mark = "" if figure.exact else "≈"
    kind = "exact, counted by the server" if figure.exact else "estimated here"
    return (
        f'<span style="font-size:{points * theme.TYPE_SCALE["display"]:.1f}pt; '
        'font-weight:600">'
        f"{mark}{figure.value:,}</span> of {plan.context_window:,} tokens · {share:.0%}"
        f'<br><span style="color:{theme.tone("muted", theme.is_dark()).name()}">'
        f"{kind}</span>"
    )


def _calibration_line(plan: Plan) -> str:
    """The factor totals are scaled by, and what it is made of: it is learned per model and
    kind of content, and never applied to a block's own count."""
    calibration = plan.counter.calibration
    kinds = calibration.factors(plan.request.model)
    learned = " · ".join(f"{kind} ×{factor:.2f}" for kind, factor in sorted(kinds.items()))
    detail = f" — {learned}" if learned else ""
    source = (
        "a measured starting ratio for this model's tokenizer, until its replies teach it"
        if calibration.seeded(plan.request.model) and plan.calibration != 1.0
        else "learned from the API's counts"
    )
    return (
        f"Calibration ×{plan.calibration:.2f} for this request{detail} ({source}; it scales "
        "these totals, not the blocks' own counts)"
    )


def counting_text(plan: Plan) -> str:
    """How the figures above are counted, in sentences (behind "How is this counted?")."""
    lines = [
        f"≈{plan.estimated_input:,} of {plan.context_window:,} tokens: estimated locally for "
        f"the next request{_which_request(plan)}, each block with the local tokenizer."
    ]
    if plan.exact_input is not None:
        lines.append(
            f"Exact, next request: {plan.exact_input.value:,} tokens (counted by the server "
            "for this very request)"
        )
    if plan.last_reported is not None:
        lines.append(
            f"Exact, last reply: {plan.last_reported.value:,} tokens (as the API counted them)"
        )
    lines.append(_calibration_line(plan))
    lines.append(
        f"Auto-compaction comes at {plan.threshold:,} tokens (the red mark on the bar); until "
        "then, if the request would not fit, trimming keeps it within the window."
    )
    return "<br>".join(lines)


def _which_request(plan: Plan) -> str:
    """What the next request is when it is not the draft as typed (the Request tab's)."""
    if plan.retries:
        return " (Retry's: the last reply did not finish)"
    if plan.stand_in:
        return f' (with "{plan.stand_in}" standing for the empty composer)'
    return ""


def status_text(plan: Plan, spent: str, budgets: Sequence[Budget] = ()) -> str:
    """The lines that matter now: what is wrong, when auto-compaction comes, the spend and
    each budget it counts against (in bold from 80 % of its cap)."""
    lines = []
    if not plan.fits:
        lines.append("<b>The request does not fit the window</b>: compact, or exclude something.")
    if plan.compaction_due:
        lines.append(f"<b>Auto-compaction is due</b> because {escape(plan.due_reason)}.")
    else:
        share = plan.threshold / plan.context_window if plan.context_window else 0.0
        turns = plan.forecast_turns
        when = (
            f"in about {turns:,} turn{'s' if turns != 1 else ''} at the recent rate"
            if turns is not None
            else "when, once a few turns show the rate"
        )
        lines.append(f"Auto-compaction at {plan.threshold:,} ({share:.0%}) — {when}.")
    if plan.not_sent_count:
        lines.append(
            f"{plan.not_sent_count:,} message(s) not sent (trimmed, summarized or excluded)."
        )
    lines.append(escape(spent))
    for budget in budgets:
        words = "Budget, " + escape(budget.text())
        lines.append(f"<b>{words} — nearly spent</b>" if budget.warned else words)
    return "<br>".join(lines)


class SectionRows(QWidget):
    """One row per part of the request (the project's only in a project; the room kept
    for the reply and the free room last, without a share: they are not sent), painted:
    a row costs no widget, and a streaming reply repaints this alone.

    Signals:
        section_clicked(str): show what this section holds.
    """

    section_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[tuple[str, int]] = []  # (section, tokens), in the meter's order
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.setCursor(Qt.CursorShape.PointingHandCursor)

    def show_plan(self, plan: Plan | None) -> None:
        if plan is None:
            self.rows = []
        else:
            sizes = {str(section): tokens for section, tokens in plan.sections.items()}
            self.rows = [
                (section, sizes.get(section, 0))
                for section in SEGMENTS
                if not (section.startswith("project ") and plan.project is None)
            ]
        self.updateGeometry()
        self.update()

    def tokens_of(self, section: str) -> int:
        return dict(self.rows).get(section, 0)

    def _row_height(self) -> int:
        return QFontMetrics(self.font()).height() + ROW_GAP

    def sizeHint(self) -> QSize:
        return QSize(260, len(self.rows) * self._row_height())

    def minimumSizeHint(self) -> QSize:
        return QSize(120, len(self.rows) * self._row_height())

    def _used(self) -> int:
        return sum(tokens for section, tokens in self.rows if section not in NOT_SENT) or 1

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        dark = theme.is_dark(palette)
        metrics = QFontMetrics(self.font())
        height = self._row_height()
        used = self._used()
        width = self.width()
        numbers = metrics.horizontalAdvance("≈0,000,000") + theme.space(2)
        share_w = metrics.horizontalAdvance("100%") + theme.space(2)
        bar_w = max(0, min(theme.space(16), width // 6))
        name_w = max(0, width - SWATCH - theme.space(2) - numbers - share_w - bar_w)
        for n, (section, tokens) in enumerate(self.rows):
            top = n * height
            middle = top + height / 2
            colour = theme.section_colour(section, dark) or theme.tone("raised", dark)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colour)
            painter.drawRoundedRect(QRectF(0, middle - SWATCH / 2, SWATCH, SWATCH), 3, 3)
            x = SWATCH + theme.space(2)
            painter.setPen(palette.color(QPalette.ColorRole.Text))
            name = metrics.elidedText(section.capitalize(), Qt.TextElideMode.ElideRight, name_w)
            centred = Qt.AlignmentFlag.AlignVCenter
            painter.drawText(QRectF(x, top, name_w, height), centred, name)
            x += name_w
            right = centred | Qt.AlignmentFlag.AlignRight
            painter.drawText(QRectF(x, top, numbers, height), right, f"≈{tokens:,}")
            x += numbers
            painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
            share = "" if section in NOT_SENT else f"{tokens / used:.0%}"
            painter.drawText(QRectF(x, top, share_w, height), right, share)
            x += share_w + theme.space(2)
            if section not in NOT_SENT and bar_w > theme.space(4):
                track = QRectF(x, middle - 3, bar_w - theme.space(2), 6)
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(theme.tone("raised", dark))
                painter.drawRoundedRect(track, 3, 3)
                filled = QRectF(track.left(), track.top(), track.width() * tokens / used, 6)
                painter.setBrush(colour)
                painter.drawRoundedRect(filled, 3, 3)
        painter.end()

    def row_rect(self, section: str) -> QRectF:
        """Where a section's row is (empty when it has none)."""
        names = [name for name, _ in self.rows]
        if section not in names:
            return QRectF()
        height = self._row_height()
        return QRectF(0, names.index(section) * height, self.width(), height)

    def section_at(self, pos: QPointF) -> str | None:
        row = int(pos.y() // self._row_height())
        return self.rows[row][0] if 0 <= row < len(self.rows) and pos.y() >= 0 else None

    def mousePressEvent(self, event: QMouseEvent) -> None:
        event.accept()  # (QWidget's passes it on, and the release would go elsewhere)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        section = self.section_at(event.position())
        if section is not None and event.button() == Qt.MouseButton.LeftButton:
            self.section_clicked.emit(section)

    def event(self, event: QEvent) -> bool:
        if isinstance(event, QHelpEvent):
            section = self.section_at(QPointF(event.pos()))
            if section is None:
                QToolTip.hideText()
            else:
                tokens = self.tokens_of(section)
                where = "" if section == FREE else " — click to see it"
                QToolTip.showText(
                    event.globalPos(),
                    f"{section.capitalize()}: ≈{tokens:,} tokens, {SEGMENTS[section]}{where}",
                    self,
                )
            return True
        return super().event(event)
