"""The window's frame (`WindowFrame`): what its first frame shows — the chat list, an
empty middle, the status bar — and how it keeps its shape as it narrows and widens.
`MainWindow` builds on it with the engine, the panes and the context panel.

The first frame paints from a light read (`FirstFrame`) before the engine loads: nothing
here uses `Qt`'s enums (`desktop_app/ui/qt_later.py`) or loads a chat's machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from desktop_app.ui import theme
from desktop_app.ui.chat_list.panel import ChatListPanel

if TYPE_CHECKING:
    from PySide6.QtGui import QResizeEvent

    from desktop_app.chats import FirstFrame
    from desktop_app.config.window_state import AppState
    from desktop_app.ui.chat_list.rail import ChatRail
    from desktop_app.ui.startup.early_input import EarlyInput
    from desktop_app.ui.startup.menus import WindowMenus

CONVERSATION_MIN_PX = 320  # with the chat list and the dock: a window of 900 px fits
WINDOW_MIN_PX = 600  # the chat list, the conversation and the strip still fit
CHAT_LIST_FOLD_PX = 1000  # narrower, the chat list folds away (Ctrl+B still shows it)


class WindowFrame(QMainWindow):
    """Signals: first_painted(): the window has shown its first frame; what it does not
    need (the last chat, the connection, the single-instance server) starts now."""

    first_painted = Signal()
    _painted = False  # until then, only what the first frame shows is done (a class
    # default: events reach `event` while __init__ is still making the children)
    attached = False  # the engine is here (`MainWindow.attach`)
    closed = False
    _early_input: EarlyInput | None = None  # between the first paint and the engine
    menus: WindowMenus  # made by the window, which knows what they do

    def __init__(self, frame: FirstFrame) -> None:
        # The look before the window: a widget made before the text size is set, or
        # styled by a sheet meanwhile, can keep the size it was made with.
        self._use_look(*frame.look)
        super().__init__()
        self.frame = frame
        self.app_state = frame.state
        self._list_folded = False  # the window is narrower than CHAT_LIST_FOLD_PX
        self.rail: ChatRail | None = None  # the folded list's icons (`_show_rail`)
        self.setObjectName("mainWindow")
        self.resize(1280, 820)
        # The docked panel's own minimum must not stop the window from narrowing: below
        # NARROW_PX it folds into a strip (ContextPlacement), which needs far less.
        self.setMinimumSize(WINDOW_MIN_PX, 420)
        self.chat_list = ChatListPanel()
        # The first frame shows the menus, the chat list and an empty centre; the pages,
        # the banner and the context dock are made right after it, a chat's pane when it
        # is opened.
        self.blank = QWidget()
        self.center = QStackedWidget()
        self.center.setMinimumWidth(CONVERSATION_MIN_PX)  # not the widest page's wish
        self.center.addWidget(self.blank)
        self.middle = QWidget()  # the window's banner (when it has something to say) above
        self.middle_column = QVBoxLayout(self.middle)
        self.middle_column.setContentsMargins(0, 0, 0, 0)
        self.middle_column.setSpacing(0)
        self.middle_column.addWidget(self.center, 1)
        self.splitter = QSplitter()  # (side by side)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.addWidget(self.chat_list)
        self.splitter.addWidget(self.middle)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([280, 1000])
        central = QWidget()
        self.central_row = QHBoxLayout(central)
        self.central_row.setContentsMargins(0, 0, 0, 0)
        self.central_row.setSpacing(0)
        self.central_row.addWidget(self.splitter, 1)
        self.setCentralWidget(central)
        self.demo_label = QLabel(
            "  Offline demo: replies come from a simulator on this computer, not Claude  "
        )
        self.demo_label.setObjectName("demoLabel")
        self.statusBar().addPermanentWidget(self.demo_label)

    def restore_state(self) -> None:
        """Where the window was, and whether its chat list was shown, when it closed."""
        state = self.app_state
        if state.window_geometry:
            from PySide6.QtCore import QByteArray  # (a first start's frame does without)

            self.restoreGeometry(QByteArray.fromBase64(state.window_geometry.encode("ascii")))
        if state.chat_list_hidden:
            self.menus.chat_list_action.setChecked(False)
        if self.frame.chats is not None:
            self.chat_list.set_projects(self.frame.projects)
            self.chat_list.set_chats(self.frame.chats)

    def event(self, event: QEvent) -> bool:
        handled = super().event(event)
        if not self._painted and event.type() == QEvent.Type.Paint:
            # A timer started in __init__ would fire before the first frame (the paint
            # is posted after it): the last chat, the connection and the rest wait here.
            self._painted = True
            QTimer.singleShot(0, _give_app_icon)
            QTimer.singleShot(0, self._first_frame_done)
            QTimer.singleShot(0, self.after_first_paint)
            app = QApplication.instance()
            if not self.attached and app is not None:
                from desktop_app.ui.startup.early_input import EarlyInput

                self._early_input = EarlyInput(self.open_engine_now, self)
                app.installEventFilter(self._early_input)
        return handled

    def frame_state(self) -> AppState:
        """What the next start restores: where the window was, and the list's width as
        last seen (folded, the splitter gives it 0)."""
        shown = self.chat_list.isVisible()
        return self.app_state._replace(
            window_geometry=bytes(self.saveGeometry().toBase64().data()).decode("ascii"),
            splitter_sizes=tuple(self.splitter.sizes()) if shown else self.app_state.splitter_sizes,
        )

    def _first_frame_done(self) -> None:
        """The chat list's part (a first start's list view is made now), with the early
        input's filter off meanwhile: through a filter on the whole application, each
        event of the view's own private children is typed in Python, which makes ~150
        enum types of every widget class (~15 ms). No input comes in between: nothing
        here runs the event loop."""
        app = QApplication.instance()
        early = self._early_input
        if early is not None and app is not None:
            app.removeEventFilter(early)
        try:
            self.chat_list.first_frame_done()
        finally:
            if app is not None and early is not None and self._early_input is early:
                app.installEventFilter(early)  # (not attached meanwhile)

    def stop_early_input(self) -> None:
        app = QApplication.instance()
        if self._early_input is not None and app is not None:
            app.removeEventFilter(self._early_input)
            self._early_input = None

    def after_first_paint(self) -> None:
        """Work the first paint must not wait for (the window's)."""

    def open_engine_now(self) -> None:
        """Input came before the engine was attached (the window's)."""

    # -- its shape -------------------------------------------------------------------------------

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fold_chat_list(event.size().width())

    def _fold_chat_list(self, width: int) -> None:
        """Narrower than CHAT_LIST_FOLD_PX the chat list folds away, so the conversation
        keeps its room (Ctrl+B shows it over the fold); wide again, it is back as the
        user last left it in a wide window."""
        folded = width < CHAT_LIST_FOLD_PX
        if folded == self._list_folded:
            return
        self._list_folded = folded
        self.menus.chat_list_action.setChecked(not folded and not self.app_state.chat_list_hidden)

    @Slot(bool)
    def show_chat_list(self, shown: bool) -> None:
        self.chat_list.setVisible(shown)
        self._show_rail(not shown)
        if not self._list_folded:  # the choice for a wide window; a narrow one folds anyway
            self.app_state = self.app_state._replace(chat_list_hidden=not shown)
        focused = QApplication.focusWidget()
        if not shown and focused is not None and self.chat_list.isAncestorOf(focused):
            self.focus_composer()

    def _show_rail(self, shown: bool) -> None:
        """The folded list's rail of icons: the chats, a new chat, search (made the first
        time the list folds: the first frame needs none of it)."""
        if self.rail is None:
            if not shown:
                return
            from desktop_app.ui.chat_list.rail import ChatRail

            self.rail = ChatRail()
            self.rail.chats_requested.connect(lambda: self.menus.chat_list_action.setChecked(True))
            # (the action asked for when pressed: a window started narrow folds its list
            # before the first frame, which makes none of the menus' actions)
            self.rail.new_requested.connect(lambda: self.menus.new_action.trigger())
            self.rail.search_requested.connect(self._on_rail_search_requested)
            self.central_row.insertWidget(0, self.rail)
        self.rail.setVisible(shown)

    @Slot()
    def _on_rail_search_requested(self) -> None:
        self.menus.chat_list_action.setChecked(True)
        self.chat_list.search.setFocus()
        self.chat_list.search.selectAll()

    def focus_composer(self) -> None:
        """The focus leaves the chat list for the conversation (the window's)."""

    def _use_look(self, appearance: str, text_size: int) -> None:
        """Settings' appearance and text size (the system's, untouched, by default)."""
        app = QApplication.instance()
        if isinstance(app, QApplication) and (appearance, text_size) != theme.chosen():
            theme.choose(app, appearance, text_size, first_frame=not self._painted)
            self.restyle()

    def restyle(self) -> None:
        """New colours or a new text size, for what the window made since (the window's)."""

    def show_demo_mode(self, demo: bool, title: str) -> None:
        """The demo's label, and the window's title: the chat shown (and "offline demo")."""
        self.demo_label.setVisible(demo)
        colour = theme.status_colour("streaming", theme.is_dark()).name()
        self.demo_label.setStyleSheet(f"color: {colour}; font-weight: bold;")
        # Qt adds " — ContextDesk" (the application's display name) itself.
        parts = [title] if title else []
        self.setWindowTitle(" — ".join([*parts, "offline demo"] if demo else parts))

    @Slot()
    def bring_to_front(self) -> None:
        """Another copy was started on this data folder: show this one instead."""
        from desktop_app.ui.qt_later import Qt

        self.setWindowState(
            (self.windowState() & ~Qt.WindowState.WindowMinimized) | Qt.WindowState.WindowActive
        )
        self.show()
        self.raise_()
        self.activateWindow()


def _give_app_icon() -> None:
    """(After the first frame: `startup/icon.py`.)"""
    from desktop_app.ui.startup.icon import give_app_icon

    give_app_icon()
