"""Where the context panel lives as the window narrows: docked on the right in a wide
window; below `NARROW_PX` a thin strip with the meter, and the panel opened over the
conversation by a click on it — so the conversation keeps its room at 900 px.

`ContextPlacement` is the one place that moves the panel between the dock and the
overlay; the window tells it its width and forwards the "Context panel" action to it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QRect, Qt, Signal
from PySide6.QtGui import QAction, QMouseEvent
from PySide6.QtWidgets import (
    QDockWidget,
    QFrame,
    QGraphicsDropShadowEffect,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.ui.context.meter import ContextMeter

if TYPE_CHECKING:
    from desktop_app.context.plan import Plan

NARROW_PX = 1100  # below this the panel folds into the strip
OVERLAY_PX = 440  # the panel's width over the conversation


class ContextStrip(QWidget):
    """The folded panel: how full the window is, as a vertical meter. Click to open.

    Signals: open_requested().
    """

    open_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("contextStrip")
        self._fit_width()
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.share = QLabel("")
        self.share.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.meter = ContextMeter(vertical=True)
        self.meter.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        column = QVBoxLayout(self)
        column.setContentsMargins(4, 6, 4, 6)
        column.addWidget(self.share)
        column.addWidget(self.meter, 1, Qt.AlignmentFlag.AlignHCenter)
        self.show_plan(None)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # Settings → Text size
            self._fit_width()

    def _fit_width(self) -> None:
        """Wide enough for "100%" at the text's size, and at least 40 px."""
        self.setFixedWidth(max(40, self.fontMetrics().horizontalAdvance("100%") + 10))

    def show_plan(self, plan: Plan | None) -> None:
        self.meter.show_plan(plan)
        if plan is None or not plan.context_window:
            self.share.setText("")
            self.setToolTip("Context: open a chat to see what its next request holds")
            return
        used = plan.estimated_input  # the panel's own figure: one number on screen
        self.share.setText(f"{used / plan.context_window:.0%}")
        self.setToolTip(
            f"Context: ≈{used:,} of {plan.context_window:,} tokens in the next request "
            "(estimated locally) — click to open the panel"
        )

    def add_streaming(self, tokens: int) -> None:
        self.meter.add_streaming(tokens)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.open_requested.emit()


class ContextOverlay(QFrame):
    """The panel over the conversation's right side, with a way to close it."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("contextOverlay")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        shadow = QGraphicsDropShadowEffect(self)
        shadow.setBlurRadius(24)
        shadow.setOffset(-2, 0)
        self.setGraphicsEffect(shadow)
        title = QLabel("<b>Context</b>")
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setToolTip("Close (Ctrl+Shift+C)")
        self.close_button.clicked.connect(self.hide)
        header = QHBoxLayout()
        header.addWidget(title, 1)
        header.addWidget(self.close_button)
        self.body = QVBoxLayout(self)
        self.body.setContentsMargins(8, 6, 8, 8)
        self.body.addLayout(header)
        self.hide()


class ContextPlacement(QObject):
    """Docked, or folded into the strip with the overlay: the window's width decides,
    and the "Context panel" action shows or hides whichever is in use."""

    def __init__(
        self,
        window: QMainWindow,
        dock: QDockWidget,
        panel: QWidget,
        strip: ContextStrip,
        action: QAction,
    ) -> None:
        super().__init__(window)
        self.window, self.dock, self.panel, self.strip, self.action = (
            window,
            dock,
            panel,
            strip,
            action,
        )
        self.overlay = ContextOverlay(window)
        self.overlay.close_button.clicked.connect(lambda: action.setChecked(False))
        self.narrow = False
        self._docked_wanted = True  # what the user chose for the wide window
        strip.open_requested.connect(self.toggle)
        action.setCheckable(True)
        action.setChecked(True)
        action.triggered.connect(self._on_action_triggered)
        dock.visibilityChanged.connect(self._on_dock_visibility_changed)
        window.installEventFilter(self)
        strip.hide()

    def fit(self, width: int) -> None:
        narrow = width < NARROW_PX
        if narrow == self.narrow:
            self._place_overlay()
            return
        self.narrow = narrow
        if narrow:
            self._docked_wanted = self.dock.isVisible()
            self.dock.hide()
            self.overlay.body.addWidget(self.panel, 1)
            self.strip.show()
            self.action.setChecked(False)
        else:
            self.overlay.hide()
            self.strip.hide()
            self.dock.setWidget(self.panel)
            self.dock.setVisible(self._docked_wanted)
            self.action.setChecked(self._docked_wanted)
        self._place_overlay()

    def toggle(self) -> None:
        if self.narrow:
            self.overlay.setVisible(not self.overlay.isVisible())
            self._place_overlay()
            self.overlay.raise_()
            self.action.setChecked(self.overlay.isVisible())
        else:
            self.dock.setVisible(not self.dock.isVisible())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window and event.type() == QEvent.Type.Resize:
            self.fit(self.window.width())
        return False

    def _place_overlay(self) -> None:
        """Over the right of the central area, beside the strip, full height."""
        central = self.window.centralWidget()
        if central is None:
            return
        area = central.geometry()
        width = min(OVERLAY_PX, max(200, area.width() - 80))
        right = self.strip.mapTo(self.window, self.strip.rect().topLeft()).x() - 2
        self.overlay.setGeometry(QRect(right - width, area.top(), width, area.height()))

    def _on_action_triggered(self) -> None:
        self.toggle()

    def _on_dock_visibility_changed(self, visible: bool) -> None:
        if not self.narrow:
            self.action.setChecked(visible)
