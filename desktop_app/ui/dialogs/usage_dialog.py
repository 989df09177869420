"""View → Usage: what was spent and on what — a day's bar per day, split by kind of token
or by model, in money or tokens; the share read from the prompt cache; the top chats and
projects; each budget against its cap; and the rows as CSV. The figures are the ledger's
(chats/usage.py), the same as `contextdesk spend --by day`."""

from __future__ import annotations

import datetime
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop_app.config.prices import format_amount, format_money
from desktop_app.ui import theme
from desktop_app.ui.dialogs.usage_chart import Series, StackedBars

if TYPE_CHECKING:
    from desktop_app.chats import Budget, Engine, UsageReport, UsageRow

# A period's start: the month's first day, the last N days (today too), or all time (0).
PERIODS: dict[str, int | str] = {
    "This month": "month",
    "Last 30 days": 30,
    "Last 7 days": 7,
    "All time": 0,
}
KIND_NAMES = {
    "input": "Input",
    "cache_write": "Cache write",
    "cache_read": "Cache read",
    "output": "Output",
}
KIND_COLOURS = {  # (light, dark): the request's own colours where a kind has one
    "input": theme.SECTION_COLOURS["messages"],
    "cache_write": theme.SECTION_COLOURS["reserved output"],
    "cache_read": theme.TONES["cache_warm"],
    "output": theme.SECTION_COLOURS["summary"],
}
MODELS_SHOWN = 5  # the costliest; the rest together as "Other models"


class UsageDialog(QDialog):
    def __init__(self, engine: Engine, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Usage")
        self.setObjectName("usageDialog")
        self.engine = engine
        self.period = QComboBox()
        self.period.addItems(list(PERIODS))
        self.split = QComboBox()
        self.split.addItems(["By kind of token", "By model"])
        self.measure = QComboBox()
        self.measure.addItems(["Money", "Tokens"])
        for box in (self.period, self.split, self.measure):
            box.currentIndexChanged.connect(self.refresh)
        self.export_button = QPushButton("Export CSV…")
        self.export_button.clicked.connect(self._on_export_clicked)
        controls = QHBoxLayout()
        for widget in (self.period, self.split, self.measure):
            controls.addWidget(widget)
        controls.addStretch(1)
        controls.addWidget(self.export_button)
        self.headline = QLabel()
        self.headline.setObjectName("usageHeadline")
        self.headline.setWordWrap(True)
        self.headline.setTextFormat(Qt.TextFormat.RichText)
        self.chart = StackedBars()
        self.budgets = QGridLayout()
        self.budgets.setColumnStretch(1, 1)
        self.chats = _table("Chat")
        self.projects = _table("Project")
        tops = QHBoxLayout()
        tops.addWidget(self.chats)
        tops.addWidget(self.projects)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        column = QVBoxLayout(self)
        column.addLayout(controls)
        column.addWidget(self.headline)
        column.addWidget(self.chart, 2)
        column.addLayout(self.budgets)
        column.addLayout(tops, 1)
        column.addWidget(buttons)
        self.resize(880, 640)
        self.by_day: UsageReport | None = None
        self._opening = True  # (the first figures choose the measure: `refresh`)
        self.refresh()

    def since(self) -> float | None:
        chosen = PERIODS[self.period.currentText()]
        now = self.engine.clock()
        if chosen == "month":
            from desktop_app.chats import month_start

            return month_start(now)
        if not isinstance(chosen, int) or not chosen:
            return None
        day = datetime.date.fromtimestamp(now) - datetime.timedelta(days=chosen - 1)
        return time.mktime(day.timetuple())

    @Slot()
    def refresh(self) -> None:
        since = self.since()
        engine = self.engine
        reports = engine.usage_reports(since)
        self.by_day = report = reports["day"]
        by_kind = self.split.currentIndex() == 0
        self.measure.setEnabled(by_kind)  # a model's bar is in money only
        total = report.total
        if self._opening and total.unpriced and not total.cost:
            self.measure.blockSignals(True)  # nothing priced: tokens say more than "$0.00"
            self.measure.setCurrentText("Tokens")
            self.measure.blockSignals(False)
        self._opening = False
        money = self.measure.currentText() == "Money" or not by_kind
        figure = format_money(total.cost, report.currency) if money else f"{_tokens(total)} tokens"
        unpriced = (
            f" · {total.unpriced:,} without a price, counted in tokens only"
            if total.unpriced
            else ""
        )
        self.headline.setText(
            f'<span style="font-size:{self.font().pointSizeF() * theme.TYPE_SCALE["display"]:.1f}pt;'
            f' font-weight:600">{figure}</span> · {total.requests:,} requests · '
            f"{total.cache_read_share:.0%} of input read from the prompt cache{unpriced}"
            f'<br><span style="color:{theme.tone("muted", theme.is_dark()).name()}">Usage as '
            f"the API reported it; money by the prices of {report.prices_of}</span>"
        )
        days = _days(report, since, engine.clock())
        rows = {row.key: row for row in report.rows}
        dark = theme.is_dark()
        if self.split.currentIndex() == 0:
            series = [
                Series(
                    KIND_NAMES[kind],
                    QColor(KIND_COLOURS[kind][dark]),
                    tuple(
                        (rows[d].money[kind] if money else rows[d].tokens[kind])
                        if d in rows
                        else 0.0
                        for d in days
                    ),
                )
                for kind in KIND_NAMES
            ]
            if money and total.searches:  # the API's web searches, priced apiece
                searched = tuple(rows[d].search_money if d in rows else 0.0 for d in days)
                series.append(
                    Series("Web searches", QColor(theme.SECTION_COLOURS["tools"][dark]), searched)
                )
        else:
            series = self._model_series(reports["model"], days, rows, dark)
        labels = [_short_day(d) for d in days]
        if money:
            self.chart.show_bars(labels, series, lambda v: format_amount(v, report.currency))
        else:
            self.chart.show_bars(labels, series, lambda v: f"{v:,.0f}")
        self._show_budgets(engine.all_budgets())
        _fill(self.chats, reports["chat"], report.currency)
        _fill(self.projects, reports["project"], report.currency)

    def _model_series(
        self, by_model: UsageReport, days: list[str], rows: dict[str, UsageRow], dark: bool
    ) -> list[Series]:
        """A series per costly model, in money (the rest together as "Other models")."""
        names = [row.key for row in by_model.rows if row.cost][:MODELS_SHOWN]  # (priced)
        colours = list(theme.SECTION_COLOURS.values())
        out = []
        for n, name in enumerate(names):
            values = tuple(rows[d].by_model.get(name, 0.0) if d in rows else 0.0 for d in days)
            out.append(Series(name, QColor(colours[n % len(colours)][dark]), values))
        rest = tuple(
            sum(v for m, v in rows[d].by_model.items() if m not in names) if d in rows else 0.0
            for d in days
        )
        if any(rest):
            out.append(Series("Other models", theme.tone("muted", dark), rest))
        return out

    def _show_budgets(self, budgets: list[Budget]) -> None:
        while self.budgets.count():
            item = self.budgets.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:  # out of the dialog now, not at the next event loop
                widget.setParent(None)
                widget.deleteLater()
        if not budgets:
            hint = QLabel(
                "No budget set: a month's in Settings (Monthly budget), a chat's in the "
                "context panel (Budget), a project's in its dialog (Spending cap)."
            )
            hint.setWordWrap(True)
            hint.setEnabled(False)
            self.budgets.addWidget(hint, 0, 0, 1, 3)
            return
        for n, budget in enumerate(budgets):
            name = QLabel(budget.name[:1].upper() + budget.name[1:])
            bar = QProgressBar()
            bar.setRange(0, 100)
            bar.setValue(min(100, round(budget.share * 100)))
            bar.setTextVisible(False)
            bar.setProperty("warned", budget.warned)
            words = QLabel(budget.text().split(": ", 1)[1])
            self.budgets.addWidget(name, n, 0)
            self.budgets.addWidget(bar, n, 1)
            self.budgets.addWidget(words, n, 2)

    @Slot()
    def _on_export_clicked(self) -> None:
        if self.by_day is None:
            return
        path, _ = QFileDialog.getSaveFileName(
            self, "Export usage as CSV", "contextdesk-usage.csv", "CSV (*.csv)"
        )
        if not path:
            return
        try:
            with open(path, "w", encoding="utf-8", newline="") as out:
                out.write(self.by_day.csv())
        except OSError as exc:
            QMessageBox.warning(self, "Not exported", f"{path}: {exc.strerror or exc}")


def _tokens(row: UsageRow) -> str:
    return f"{sum(row.tokens.values()):,}"


def _cost_cell(row: UsageRow, currency: str) -> str:
    """Money; where some requests had no price, their tokens are not in it: said so."""
    if row.unpriced == row.requests:
        return f"{_tokens(row)} tokens, no price"
    money = format_money(row.cost, currency)
    return f"{money} + {row.unpriced:,} unpriced" if row.unpriced else money


def _days(report: UsageReport, since: float | None, now: float) -> list[str]:
    """Every day from the period's start (or the first request) to today, in order."""
    from desktop_app.chats import day_of

    first = (
        day_of(since) if since is not None else (report.rows[0].key if report.rows else day_of(now))
    )
    day = datetime.date.fromisoformat(first)
    last = datetime.date.fromisoformat(day_of(now))
    out = []
    while day <= last:
        out.append(day.isoformat())
        day += datetime.timedelta(days=1)
    return out


def _short_day(day: str) -> str:
    """2026-12-03 as "Dec 3" (the year is the period's)."""
    date = datetime.date.fromisoformat(day)
    return f"{date.strftime('%b')} {date.day}"


def _table(first: str) -> QTreeWidget:
    table = QTreeWidget()
    table.setRootIsDecorated(False)
    table.setHeaderLabels([first, "Requests", "Cost", "Cache read"])
    table.setAlternatingRowColors(True)
    header = table.header()
    header.setStretchLastSection(False)
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)  # the name takes the rest
    for column in (1, 2, 3):
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
    return table


def _fill(table: QTreeWidget, report: UsageReport, currency: str) -> None:
    table.clear()
    for row in report.rows[:10]:
        item = QTreeWidgetItem(
            [
                row.label or row.key,
                f"{row.requests:,}",
                _cost_cell(row, currency),
                f"{row.cache_read_share:.0%}",
            ]
        )
        for column in (1, 2, 3):
            item.setTextAlignment(
                column, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
            )
        table.addTopLevelItem(item)
