"""The bar above a conversation: the chat's title, its prompt cache counting down (warm
for 4:05, or cold; how long it is kept chosen here), its model with the model's context
window (switched here, for this chat), its thinking (as the model takes it: adaptive at an
effort, off, or a budget), and the Context view toggle — every block's chip, or one quiet
marker per message."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal, Slot
from PySide6.QtGui import QFontMetrics, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QMenu,
    QSizePolicy,
    QStyle,
    QStyleOptionComboBox,
    QStylePainter,
    QToolButton,
    QWidget,
)

from desktop_app.context.chat_settings import ContextSettings
from desktop_app.core.ports import ModelInfo
from desktop_app.core.thinking import ThinkingOptions
from desktop_app.ui import theme

EFFORT_NAMES = {
    "low": "Low",
    "medium": "Medium",
    "high": "High",
    "xhigh": "Extra high",
    "max": "Max",
}
OFF_MEANS = {
    "left out": "it does not think",
    "disabled": "it does not think",
    "between_tools": "no thinking before answering; its notes between tool calls still come back",
    "lowest effort": "it always thinks: the lowest effort it takes",
}


class ModelBox(QComboBox):
    """The chat's model: as wide as its chosen name up to 24 characters ("Claude Sonnet
    5.5 · 1M" whole), a longer one ending in … (its tooltip and the list say it whole) —
    the chat's title has the room first."""

    ARROW_PX = 40  # the arrow and the frame, in every style here
    SHORTEST_PX = 120
    LONGEST_CHARS = 24

    def sizeHint(self) -> QSize:
        metrics = self.fontMetrics()
        named = min(
            metrics.horizontalAdvance(self.currentText()),
            metrics.averageCharWidth() * self.LONGEST_CHARS,
        )
        return QSize(named + self.ARROW_PX, super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:
        return QSize(self.SHORTEST_PX, super().minimumSizeHint().height())

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QStylePainter(self)
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, option)
        field = self.style().subControlRect(
            QStyle.ComplexControl.CC_ComboBox, option, QStyle.SubControl.SC_ComboBoxEditField, self
        )
        option.currentText = self.fontMetrics().elidedText(
            option.currentText, Qt.TextElideMode.ElideRight, field.width()
        )
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, option)


class ChatHeader(QWidget):
    """Signals:
    model_chosen(str): the user picked another model for this chat.
    settings_chosen(dict): chat settings to change, as `chat set` takes them
        ({"thinking": "adaptive"}, {"effort": "high"}, {"cache_ttl": "1h"}…).
    context_view_toggled(bool): show every block's chip (True) or quiet markers.
    """

    model_chosen = Signal(str)
    settings_chosen = Signal(dict)
    context_view_toggled = Signal(bool)
    ROOMY_PX = 540  # a bar this wide says "Thinking: …" whole (the title keeps its room)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatHeader")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)  # its rule below it
        self._title = ""
        self.title = QLabel()
        self.title.setObjectName("chatTitle")
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.title.installEventFilter(self)  # its width changes with the model box's too
        self._size_title()
        self.model = ModelBox()
        self.model.setObjectName("chatModel")
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
        self.thinking = QToolButton()
        self.thinking.setObjectName("chatThinking")
        self.thinking.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.thinking.setMenu(QMenu(self.thinking))
        self.thinking.menu().aboutToShow.connect(self._fill_thinking_menu)
        # never cut ("Think…ptive"): the title and the model's box give way first
        self.thinking.setSizePolicy(QSizePolicy.Policy.Minimum, QSizePolicy.Policy.Preferred)
        self.cache = QToolButton()
        self.cache.setObjectName("chatCache")
        self.cache.setAutoRaise(True)
        self.cache.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.cache.setMenu(QMenu(self.cache))
        self.cache.menu().aboutToShow.connect(self._fill_cache_menu)
        self.cache.hide()  # until a plan says what the cache holds
        row = QHBoxLayout(self)
        row.setContentsMargins(10, 4, 6, 4)
        row.addWidget(self.title, 1)
        row.addWidget(self.cache)
        row.addWidget(self.model)
        row.addWidget(self.thinking)
        row.addWidget(self.context_view)
        self._options: ThinkingOptions | None = None
        self._settings = ContextSettings()
        self._model_id = ""
        self._cache_line = ""
        self._breakers = ""
        self._write_prices: tuple[str, str] | None = None  # 5-minute, 1-hour: "$2.50/M"

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.title and event.type() == QEvent.Type.Resize:
            self._elide_title()
        return False

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # Settings → Text size
            self._size_title()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._label_thinking()

    def _label_thinking(self) -> None:
        """The thinking button's words: whole ("Thinking: adaptive"), or its choice alone
        ("adaptive") in a bar short of room (its tooltip says what it is)."""
        if self._options is None:
            return
        whole = thinking_label(self._options, self._settings)
        text = whole if self.width() >= self.ROOMY_PX else whole.removeprefix("Thinking: ")
        if self.thinking.text() != text:
            self.thinking.setText(text)

    def _keep_title_room(self) -> None:
        """The title keeps room for its first words (16 characters, or all of a shorter
        one) when the bar is short of room: the model's name gives way first."""
        metrics = QFontMetrics(self.title.font())
        whole = metrics.horizontalAdvance(self._title)
        self.title.setMinimumWidth(min(whole, metrics.averageCharWidth() * 16))

    def _size_title(self) -> None:
        """The title a little larger than the text, and bold — from the header's font,
        so it follows the text size (a font set once would stay at its first size)."""
        self.title.setFont(theme.font(self.font(), "title"))
        self._keep_title_room()
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
        self._keep_title_room()
        self._model_id = model
        self.model.blockSignals(True)
        self.model.clear()
        for info in models:  # (this chat's own window beside its model: it may be smaller)
            size = window if info.id == model else info.context_window
            self.model.addItem(_label(info.display_name, size), info.id)
        found = self.model.findData(model)
        if found < 0:  # typed in Settings, or from another server's list
            self.model.addItem(_label(model, window), model)
            found = self.model.count() - 1
        self.model.setCurrentIndex(found)
        self.model.updateGeometry()  # (its width follows the name chosen)
        self.model.blockSignals(False)
        self.model.setEnabled(not demo)
        self._tip(
            self.model,
            f"{self.model.currentText()}: "
            + (
                "the offline demo's simulator answers every chat; with a key, choose a model here"
                if demo
                else "the model this chat's next message goes to, and its context window (1M: "
                "a million tokens)"
            ),
        )

    def show_thinking(self, options: ThinkingOptions, settings: ContextSettings) -> None:
        """The chat's thinking as its model takes it, on the button; the menu offers what
        the model can do (made when it opens)."""
        self._options, self._settings = options, settings
        self._label_thinking()
        self._tip(
            self.thinking,
            f"How {options.model} thinks in this chat — click to change. "
            f"Off: {OFF_MEANS[options.off]}.",
        )

    def show_cache(self, short: str, line: str, state: str, breakers: str = "") -> None:
        """The prompt cache in a few words ("Cache 4:05"); the whole line — both prices
        of the next turn — in its tooltip and at the top of its menu; and, while it is
        warm, what breaks it and at what cost, said on what would break it (the model,
        thinking) before the user clicks."""
        self._cache_line = line
        if breakers != self._breakers:
            self._breakers = breakers
            for widget in (self.model, self.thinking):
                self._tip(widget, str(widget.property("baseTip") or ""))
        self.cache.setVisible(state in ("warm", "cold"))  # (the panel says the rest)
        self.cache.setText(short)
        # Whole, never elided ("Cache 4:05" is all there is): the title gives way first.
        self.cache.setMinimumWidth(self.cache.sizeHint().width())
        self.cache.setToolTip(f"{line}. Click to choose how long the cache keeps this chat.")
        if self.cache.property("cacheState") != state:  # (not on every second's tick)
            self.cache.setProperty("cacheState", state)  # the style sheet colours a warm one
            self.cache.style().unpolish(self.cache)
            self.cache.style().polish(self.cache)

    def _tip(self, widget: QWidget, base: str) -> None:
        """`widget`'s own tooltip, and after it what would start the cache over, if any."""
        widget.setProperty("baseTip", base)
        widget.setToolTip(f"{base}\n\n{self._breakers}" if self._breakers else base)

    def show_write_prices(self, prices: tuple[str, str] | None) -> None:
        """What a cache write costs kept 5 minutes and kept an hour (None: no price)."""
        self._write_prices = prices

    @Slot()
    def _fill_cache_menu(self) -> None:
        menu = self.cache.menu()
        menu.clear()
        for words in (self._cache_line, self._breakers):
            if words:
                menu.addAction(words).setEnabled(False)
        menu.addSeparator()
        five, hour = self._write_prices or ("", "")
        for ttl, text, price in (
            ("5m", "Keep it 5 minutes", five),
            ("1h", "Keep it 1 hour", hour),
        ):
            action = menu.addAction(f"{text} — writes cost {price}" if price else text)
            action.setCheckable(True)
            action.setChecked(self._settings.cache_ttl == ttl)
            action.triggered.connect(lambda _=False, t=ttl: self._choose({"cache_ttl": t}))

    @Slot()
    def _fill_thinking_menu(self) -> None:
        menu = self.thinking.menu()
        menu.clear()
        options, settings = self._options, self._settings
        if options is None:
            return
        mode = settings.thinking if settings.thinking in options.modes else options.modes[0]
        if "adaptive" in options.modes:
            chosen = mode == "adaptive"
            default = EFFORT_NAMES.get(options.default_effort, "its default")
            levels = [("", f"Adaptive — {options.model}'s default effort ({default})")]
            levels += [(e, f"Adaptive — {EFFORT_NAMES[e]} effort") for e in options.efforts]
            if not options.efforts:
                levels = [("", "Adaptive — Claude decides how much")]
            for effort, text in levels:
                action = menu.addAction(text)
                action.setCheckable(True)
                action.setChecked(chosen and settings.effort == effort)
                action.triggered.connect(
                    lambda _=False, e=effort: self._choose({"thinking": "adaptive", "effort": e})
                )
        off = menu.addAction(f"Off — {OFF_MEANS[options.off]}")
        off.setCheckable(True)
        off.setChecked(mode == "off")
        off.triggered.connect(lambda _=False: self._choose({"thinking": "off"}))
        if options.budgets:
            budget = menu.addAction(
                f"A budget — {settings.thinking_budget:,} tokens…"
                if settings.thinking_budget
                else "A budget…"
            )
            budget.setCheckable(True)
            budget.setChecked(mode == "budget")
            budget.triggered.connect(self._on_budget_triggered)
        menu.addSeparator()
        shown = menu.addAction("Show thinking's text")
        shown.setCheckable(True)
        shown.setChecked(settings.thinking_display != "omitted")
        shown.setToolTip("Off: only that Claude thought, and its tokens (display: omitted)")
        shown.toggled.connect(
            lambda on: self._choose({"thinking_display": "summarized" if on else "omitted"})
        )

    def _choose(self, values: dict[str, str]) -> None:
        self.settings_chosen.emit(values)

    @Slot()
    def _on_budget_triggered(self) -> None:
        budget, ok = QInputDialog.getInt(
            self,
            "Thinking budget",
            "Tokens Claude may think for (at least 1,024, and below the longest reply):",
            self._settings.thinking_budget or 4096,
            1024,
            self._settings.max_tokens - 1 if self._settings.max_tokens > 1025 else 1024,
            1024,
        )
        if ok:
            self._choose({"thinking": str(budget)})

    @Slot(int)
    def _on_model_activated(self, index: int) -> None:
        chosen = str(self.model.itemData(index))
        if chosen and chosen != self._model_id:
            self.model_chosen.emit(chosen)


def thinking_label(options: ThinkingOptions, settings: ContextSettings) -> str:
    """The button's words: what the chat's thinking is on its model now."""
    mode = settings.thinking if settings.thinking in options.modes else options.modes[0]
    if mode == "budget":
        return f"Thinking: {settings.thinking_budget:,} tokens"
    if mode == "off":
        return "Thinking: lowest" if options.off == "lowest effort" else "Thinking: off"
    effort = settings.effort if settings.effort in options.efforts else ""
    return f"Thinking: {EFFORT_NAMES[effort].lower()}" if effort else "Thinking: adaptive"


def _label(name: str, window: int) -> str:
    """ "Claude Sonnet 5.5 · 1M": the name and its context window (the tooltip says what
    the figure is)."""
    size = f"{window // 1_000_000}M" if window >= 1_000_000 else f"{window // 1000}k"
    return f"{name} · {size}"
