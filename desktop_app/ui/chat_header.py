"""The bar above a conversation: the chat's title, its model with the model's context
window (switched here, for this chat), and the Context view toggle — every block's chip,
or one quiet marker per message."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QFontMetrics, QResizeEvent
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSizePolicy, QToolButton, QWidget

from desktop_app.core.ports import ModelInfo


class ChatHeader(QWidget):
    """Signals:
    model_chosen(str): the user picked another model for this chat.
    context_view_toggled(bool): show every block's chip (True) or quiet markers.
    """

    model_chosen = Signal(str)
    context_view_toggled = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatHeader")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)  # its rule below it
        self.title = QLabel()
        self.title.setObjectName("chatTitle")
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        font = self.title.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.1)
        self.title.setFont(font)
        self.model = QComboBox()
        self.model.setObjectName("chatModel")
        # Long names are elided in the box (the list shows them whole): the title keeps room.
        self.model.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.model.setMinimumContentsLength(16)
        self.model.setMaximumWidth(320)
        self.model.activated.connect(self._on_model_activated)
        self.context_view = QToolButton()
        self.context_view.setObjectName("contextViewToggle")
        self.context_view.setText("Context view")
        self.context_view.setCheckable(True)
        self.context_view.setToolTip(
            "Show each block's type, tokens and state in the next request "
            "(off: one marker per message; hover it for the breakdown)"
        )
        self.context_view.toggled.connect(self.context_view_toggled)
        row = QHBoxLayout(self)
        row.setContentsMargins(10, 4, 6, 4)
        row.addWidget(self.title, 1)
        row.addWidget(self.model)
        row.addWidget(self.context_view)
        self._model_id = ""
        self._title = ""

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide_title()

    def _elide_title(self) -> None:
        """A long title ends in … where the model's box begins (whole in its tooltip)."""
        room = max(0, self.title.width())
        metrics = QFontMetrics(self.title.font())
        self.title.setText(metrics.elidedText(self._title, Qt.TextElideMode.ElideRight, room))

    def show_chat(
        self, title: str, model: str, models: Sequence[ModelInfo], window: int, *, demo: bool
    ) -> None:
        """The chat shown now: its title, and the model its requests go to among those
        that can be chosen (in the offline demo, the simulator answers every chat)."""
        self._title = title
        self._elide_title()
        self.title.setToolTip(title)
        self._model_id = model
        self.model.blockSignals(True)
        self.model.clear()
        for info in models:
            self.model.addItem(_label(info.display_name, info.context_window), info.id)
        found = self.model.findData(model)
        if found < 0:  # typed in Settings, or from another server's list
            self.model.addItem(_label(model, window), model)
            found = self.model.count() - 1
        self.model.setCurrentIndex(found)
        self.model.blockSignals(False)
        self.model.setEnabled(not demo)
        self.model.setToolTip(
            "The offline demo's simulator answers every chat; with a key, choose a model here"
            if demo
            else "The model this chat's next message goes to, and its context window"
        )

    @Slot(int)
    def _on_model_activated(self, index: int) -> None:
        chosen = str(self.model.itemData(index))
        if chosen and chosen != self._model_id:
            self.model_chosen.emit(chosen)


def _label(name: str, window: int) -> str:
    size = f"{window // 1_000_000}M" if window >= 1_000_000 else f"{window // 1000}k"
    return f"{name} · {size} window"
