"""The context panel beside the conversation (`ContextDock`): docked on the right, or
folded into a strip in a narrow window (`ContextPlacement`), always showing the plan of
the chat shown — and, while a reply streams, the tokens it adds."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtWidgets import QDockWidget, QHBoxLayout, QLabel, QToolButton, QWidget

from desktop_app.ui import theme
from desktop_app.ui.context.panel import ContextPanel
from desktop_app.ui.context.placement import ContextPlacement, ContextStrip
from desktop_app.ui.context.request_view import message_needle

if TYPE_CHECKING:
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QBoxLayout, QMainWindow

    from desktop_app.context.plan import Plan
    from desktop_app.core.messages import Message
    from desktop_app.ui.conversation.session import ChatSession

DOCK_PX = 340  # the panel's first width, docked


class ContextDock(QObject):
    def __init__(self, window: QMainWindow, beside: QBoxLayout, action: QAction) -> None:
        """Docked in `window`; its strip at the end of `beside` (the window's central
        row); `action` (View → Context panel) shows and hides it."""
        super().__init__(window)
        self.panel = ContextPanel()
        self.dock = QDockWidget("Context", window)
        self.dock.setObjectName("contextDock")
        self.dock.setTitleBarWidget(_header(self.dock))
        self.dock.setWidget(self.panel)
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.dock)
        window.resizeDocks([self.dock], [DOCK_PX], Qt.Orientation.Horizontal)
        self.strip = ContextStrip()
        beside.addWidget(self.strip)
        self.placement = ContextPlacement(window, self.dock, self.panel, self.strip, action)
        self.placement.fit(window.width())
        self._followed: ChatSession | None = None

    def follow(self, session: ChatSession | None) -> None:
        """Show `session`'s plan from now on (and nothing of the one before)."""
        old = self._followed
        if old is not None:
            old.planned.disconnect(self._on_session_planned)
            old.text_streamed.disconnect(self._on_session_text_streamed)
        self._followed = session
        self.panel.set_session(session)
        self.strip.show_plan(session.plan if session is not None else None)
        if session is not None:
            session.planned.connect(self._on_session_planned)
            session.text_streamed.connect(self._on_session_text_streamed)

    @Slot(object)
    def _on_session_planned(self, plan: Plan) -> None:
        self.panel.show_plan(plan)
        self.strip.show_plan(plan)

    @Slot(object)
    def ask_ledger(self, message: Message) -> None:
        """A message's "In which requests was it sent?": the Request tab asks the ledger
        about its first line (the panel opened if it was closed)."""
        if not self.panel.isVisible():
            self.placement.toggle()
        self.panel.tabs.setCurrentWidget(self.panel.request)
        self.panel.request.ask_ledger(message_needle(message.text))

    @Slot(int)
    def _on_session_text_streamed(self, characters: int) -> None:
        tokens = max(1, characters // 4)  # ≈ tokens; exact after the plan
        self.panel.add_streaming(tokens)
        self.strip.add_streaming(tokens)


def _header(dock: QDockWidget) -> QWidget:
    """The panel's title in the window's type, and a close button (View → Context panel
    brings it back) — instead of the dock's stock bar; dragged, it still floats the panel."""
    header = QWidget()
    header.setObjectName("contextHeader")
    title = QLabel(dock.windowTitle())
    title.setFont(theme.font(title.font(), "heading"))
    close = QToolButton()
    close.setObjectName("closeContext")
    close.setText("×")
    close.setAutoRaise(True)
    close.setToolTip("Hide the context panel (View → Context panel shows it again)")
    close.clicked.connect(dock.close)
    row = QHBoxLayout(header)
    row.setContentsMargins(theme.space(3), theme.space(2), theme.space(1), theme.space(1))
    row.addWidget(title, 1)
    row.addWidget(close)
    return header
