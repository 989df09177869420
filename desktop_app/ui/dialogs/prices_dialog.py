"""Settings → Prices: the price table ContextDesk turns usage into money with (dated and
sourced), and a row to enter or correct one model's price — a model the table lacks
shows tokens only until it has one."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from pathlib import Path

from PySide6.QtCore import Slot
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop_app.config.prices import Price, PriceTable
from desktop_app.core.errors import ContextDeskError
from desktop_app.ui.dialogs.settings_dialog import row_widget

COLUMNS = ("Model", "Input", "Output", "Cache write 5 min", "Cache write 1 h", "Cache read")


class PricesDialog(QDialog):
    """`prices`: the table as it stands; `set_price(model, values)` saves one model's
    price (the engine's), returning the file it went to; `reload()` the table again."""

    def __init__(
        self,
        prices: PriceTable,
        set_price: Callable[[str, dict[str, float]], Path],
        reload: Callable[[], PriceTable],
        model: str = "",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Prices")
        self.setObjectName("pricesDialog")
        self._set_price = set_price
        self._reload = reload
        self.about = QLabel()
        self.about.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("priceTable")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.itemSelectionChanged.connect(self._on_table_item_selection_changed)
        self.model = QLineEdit(model)
        self.model.setObjectName("priceModel")
        self.model.setPlaceholderText("a model id, as the chat bar shows it")
        self.input = _rate()
        self.input.setObjectName("priceInput")
        self.output = _rate()
        self.output.setObjectName("priceOutput")
        self.save = QPushButton("Save this price")
        self.save.setObjectName("savePrice")
        self.save.clicked.connect(self._on_save_clicked)
        self.said = QLabel()
        self.said.setObjectName("priceSaid")
        self.said.setWordWrap(True)
        rates = QHBoxLayout()
        rates.addWidget(QLabel("Input"))
        rates.addWidget(self.input)
        rates.addWidget(QLabel("Output"))
        rates.addWidget(self.output)
        rates.addWidget(self.save)
        rates.addStretch(1)
        form = QFormLayout()
        form.addRow("Model", self.model)
        form.addRow("Per million tokens", row_widget(rates))
        form.addRow(
            "",
            QLabel(
                "Cache rates follow the API's: writes 1.25× (5 min) and 2× (1 h) the input price, reads 0.1×."
            ),
        )
        form.addRow("", self.said)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.about)
        layout.addWidget(self.table, 1)
        layout.addLayout(form)
        layout.addWidget(close)
        self.show_table(prices)
        self.resize(760, 520)

    def show_table(self, prices: PriceTable) -> None:
        unit = f"{prices.currency} per {prices.per_tokens:,} tokens"
        problems = "".join(f"<br><i>{escape(p)}</i>" for p in prices.problems)
        self.about.setText(
            f"Prices of {prices.updated or 'an unknown date'}, in {unit}. A model that is not "
            f"listed shows tokens only, never a guess.{problems}"
        )
        self.table.setRowCount(len(prices.models))
        for row, (name, price) in enumerate(sorted(prices.models.items())):
            cells = (name, *_figures(price))
            for column, text in enumerate(cells):
                self.table.setItem(row, column, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()

    @Slot()
    def _on_table_item_selection_changed(self) -> None:
        row = self.table.currentRow()
        cells = [self.table.item(row, column) for column in range(3)] if row >= 0 else []
        if len(cells) < 3 or any(cell is None for cell in cells):
            return
        name, rate_in, rate_out = (cell.text() for cell in cells if cell is not None)
        self.model.setText(name)
        self.input.setValue(float(rate_in))
        self.output.setValue(float(rate_out))

    @Slot()
    def _on_save_clicked(self) -> None:
        model = self.model.text().strip()
        try:
            path = self._set_price(
                model, {"input": self.input.value(), "output": self.output.value()}
            )
        except ContextDeskError as exc:
            self.said.setText(f"Not saved: {exc.message}")
            return
        self.said.setText(f"Saved for {model} (in {path}); costs use it from now on.")
        self.show_table(self._reload())


def _figures(price: Price) -> tuple[str, ...]:
    rates = (
        price.input,
        price.output,
        price.cache_write_5m,
        price.cache_write_1h,
        price.cache_read,
    )
    return tuple(f"{rate:g}" for rate in rates)


def _rate() -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setDecimals(3)
    box.setRange(0, 100_000)
    box.setSingleStep(0.1)
    return box
