"""The main window: chats on the left, the conversation in the middle, the context dock on
the right. It lays them out, builds the menus, and shows one open chat's pane at a time
(`ConversationPane`: each open chat has its own, over its session); what the chat
list's actions do is in `ChatListController`, the key, the models and Settings in
`ConnectionController`, what a pane's widgets do in the pane, and what any action does
to a chat in the application layer (`desktop_app.chats`).

Start-up is built for a fast first paint: the window's frame and the chat list paint
from a light read (`FirstFrame`) before the engine loads; the engine is attached right
after (`attach`), then the conversation's widgets are made and the last chat opened. The
token encoding, the key lookup (a keyring may take seconds) and the last chat's plan
happen on the background thread afterwards.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from PySide6.QtCore import QTimer, Slot
from PySide6.QtWidgets import QApplication, QLabel, QLayout

from desktop_app.chats import NEW_CHAT_TITLE, FirstFrame
from desktop_app.config.window_state import AppState
from desktop_app.ui import theme
from desktop_app.ui.qt_later import Qt
from desktop_app.ui.startup.frame import WindowFrame
from desktop_app.ui.startup.menus import WindowMenus

if TYPE_CHECKING:
    # the engine and what drives it load right after the first frame; a
    # session (and the loop it drives) with the first chat opened
    from PySide6.QtGui import QCloseEvent
    from PySide6.QtWidgets import QDockWidget

    from desktop_app.chats import Engine
    from desktop_app.config.settings import Settings
    from desktop_app.core.errors import ErrorInfo
    from desktop_app.storage.chat_info import ChatInfo
    from desktop_app.ui.chat_list.controller import ChatListController
    from desktop_app.ui.connection_controller import ConnectionController
    from desktop_app.ui.context.dock import ContextDock
    from desktop_app.ui.context.panel import ContextPanel
    from desktop_app.ui.context.placement import ContextPlacement, ContextStrip
    from desktop_app.ui.conversation.banner import ErrorBanner
    from desktop_app.ui.conversation.pane import ConversationPane
    from desktop_app.ui.conversation.session import ChatSession
    from desktop_app.ui.dialogs.window_dialogs import WindowDialogs
    from desktop_app.ui.startup.menus import ChatAct
    from desktop_app.ui.startup.welcome import WelcomePage
    from desktop_app.ui.workers import BackgroundWorker

log = logging.getLogger(__name__)
T = TypeVar("T")

WATCH_MS = 1500  # how often the window looks for changes made by another program


class MainWindow(WindowFrame):
    started = False  # the work after the first frame has been done
    _centre_made = False
    # Given by `attach` (right after the first frame at start-up):
    engine: Engine
    background: BackgroundWorker
    chats: ChatListController
    connection: ConnectionController
    dialogs: WindowDialogs
    # Made by `_ensure_centre`, after the first frame:
    no_chat: QLabel
    banner: ErrorBanner  # problems that are no chat's own (a chat's are in its pane)
    welcome: WelcomePage
    side: ContextDock  # the context panel, and its parts (for tests and screenshots):
    context: ContextPanel
    dock: QDockWidget
    strip: ContextStrip
    placement: ContextPlacement

    def __init__(self, frame: FirstFrame, engine: Engine | None = None) -> None:
        """The window's frame and chat list from `frame`; with `engine`, attached at once
        (else it opens after the first paint: `_open_engine`)."""
        super().__init__(frame)
        self.shown: ConversationPane | None = None  # the pane in the middle, if any
        self.menus = WindowMenus(self, self, self.app_state.context_view)
        self.restore_state()
        self._show_mode()
        self.watch_timer = QTimer(self)
        self.watch_timer.setInterval(WATCH_MS)
        self.watch_timer.timeout.connect(self._on_watch_timer_timeout)
        if engine is not None:
            self.attach(engine)

    @classmethod
    def over(cls, engine: Engine, state: AppState | None = None) -> MainWindow:
        """The window over an engine already open (tests, screenshots), attached at once."""
        return cls(FirstFrame.of(engine, state or AppState()), engine)

    @property
    def settings(self) -> Settings:
        """As the engine has them; read from their file until it is here (an error shown
        before it still gets the window's banner)."""
        return self.engine.settings if self.attached else self.frame.read_settings()

    @property
    def current(self) -> ChatSession | None:
        """The session of the chat shown, if one is."""
        return self.shown.session if self.shown is not None else None

    @property
    def pane(self) -> ConversationPane:
        """The pane shown (only while a chat is shown: `shown` says whether one is)."""
        if self.shown is None:
            raise LookupError("no chat is shown")
        return self.shown

    def attach(self, engine: Engine) -> None:
        """The engine is open: the chat list's actions, the connection and the menus
        work from now on. (What the chat list asked for before — in the one turn of the
        event loop the first frame lasts — found no one to answer.)"""
        assert not self.attached
        from desktop_app.ui.chat_list.controller import ChatListController
        from desktop_app.ui.connection_controller import ConnectionController
        from desktop_app.ui.conversation.open_panes import OpenPanes
        from desktop_app.ui.dialogs.window_dialogs import WindowDialogs
        from desktop_app.ui.workers import BackgroundWorker

        self.engine = engine
        self.stop_early_input()
        self.background = background = BackgroundWorker(self)
        self.counting = BackgroundWorker(self)  # count_tokens calls: never ahead of a plan
        self.searching = searching = BackgroundWorker(self)  # a slow search holds up no plan
        self.chats = ChatListController(engine, self.chat_list, self, searching, background)
        self.chats.folder = self.app_state.last_folder
        self.connection = ConnectionController(engine, self.background, self)
        self.dialogs = WindowDialogs(self, engine, self.background, lambda: self.shown)
        self.panes = OpenPanes(engine, self.center, self.background, self.counting)
        self.attached = True
        self._connect()
        self.chats.refresh()  # as the engine lists it (leftover replies now interrupted)
        self.menus.enable()
        self._show_mode()
        self._enable_actions()

    def _connect(self) -> None:
        # Moving through the list by keys shows a chat; the composer takes the focus only
        # when one is chosen (Enter, a click).
        chat_list = self.chat_list
        chat_list.chat_selected.connect(lambda c, m: self.open_chat(c, focus=False, message_id=m))
        chat_list.chat_activated.connect(lambda c, m: self.open_chat(c, message_id=m))
        chat_list.project_requested.connect(self._on_chat_list_project_requested)
        chat_list.new_requested.connect(self.new_chat)
        self.chats.open_requested.connect(self.open_chat)
        self.chats.renamed.connect(self._on_chat_changed)
        self.chats.project_changed.connect(self.panes.replan)  # (edited on its page)
        self.chats.page_closed.connect(
            lambda: self.center.setCurrentWidget(self.shown or self.no_chat)
        )
        panes = self.panes
        panes.status.connect(self._on_status)
        panes.problem.connect(self.show_problem)
        panes.forked.connect(self.chats.show_fork)
        panes.open_requested.connect(self.open_chat)
        panes.context_view_toggled.connect(self.set_context_view)
        panes.actions_changed.connect(self._enable_actions)
        panes.chat_changed.connect(self._on_chat_changed)
        panes.activity.connect(self.chat_list.set_activity)
        self.chats.trashed.connect(self._on_chats_trashed)
        self.chats.problem.connect(self.show_problem)
        self.chats.status.connect(self._on_status)
        self.connection.mode_changed.connect(self._show_mode)
        self.connection.counter_ready.connect(self._on_connection_counter_ready)
        self.connection.settings_saved.connect(self._on_connection_settings_saved)
        self.connection.prices_changed.connect(self._on_connection_prices_changed)
        self.connection.problem.connect(self.show_problem)
        self.dialogs.replan_requested.connect(self.panes.replan)
        self.dialogs.chats_changed.connect(self.chats.refresh)
        self.dialogs.status.connect(self._on_status)
        self.dialogs.chat_made.connect(self.chats.show_new)

    def _ensure_centre(self) -> None:
        """Make the pages of the middle, the window's banner and the context panel (once:
        after the first frame, or sooner if something needs them)."""
        if self._centre_made:
            return
        self._centre_made = True
        from desktop_app.ui.context.dock import ContextDock
        from desktop_app.ui.conversation.banner import ErrorBanner, centred_row
        from desktop_app.ui.startup.welcome import WelcomePage

        # Bars that come and go (the undo bar, a banner) never resize the window.
        layout = self.layout()
        assert layout is not None
        layout.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)
        self.no_chat = QLabel("Pick a chat on the left, or press Ctrl+N for a new one.")
        self.no_chat.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.center.addWidget(self.no_chat)
        self.banner = ErrorBanner()
        self.banner.setMaximumWidth(self.settings.reading_width)
        self.middle_column.insertLayout(0, centred_row(self.banner))  # as a chat's stands
        self.banner.retry_requested.connect(self.banner.hide)  # (it offers no Retry)
        self.welcome = WelcomePage()
        self.welcome.enter_key_requested.connect(self.open_settings)
        self.welcome.demo_requested.connect(self.start_demo)
        self.center.addWidget(self.welcome)
        self.side = side = ContextDock(self, self.central_row, self.menus.context_action)
        self.context, self.dock, self.strip = side.panel, side.dock, side.strip
        self.placement = side.placement
        self.context.jump_requested.connect(self._on_context_jump_requested)
        self.context.compact_requested.connect(self.dialogs.open_compaction)
        self.context.handoff_requested.connect(self.dialogs.open_handoff)
        self.context.project_requested.connect(self.dialogs.open_project)
        self.context.tools_requested.connect(self.dialogs.open_tools)
        self.panes.trace_requested.connect(side.ask_ledger)  # a message: in which requests?
        self.center.setCurrentWidget(self.no_chat)
        self._show_mode()

    def after_first_paint(self) -> None:
        """Work the first paint must not wait for."""
        if self.closed:
            return  # closed at once (quitting): none of it is needed
        app = QApplication.instance()
        if isinstance(app, QApplication):  # the colours in full (the first frame read them
            theme.apply_system_scheme(app)  # from the palette), before anything is styled
        if not self.attached:
            opened = self._open_engine()
            if not opened:
                return
        self._ensure_centre()
        self.first_painted.emit()
        if self.app_state.splitter_sizes:  # once laid out: before that, sizes get rescaled
            self.splitter.setSizes(list(self.app_state.splitter_sizes))
        self.connection.start()
        self.watch_timer.start()
        from desktop_app.ui.startup.opening import back_up_if_due

        back_up_if_due(self.engine, self.background)
        self.dialogs.start_tool_servers()
        last = self.app_state.last_chat_id
        if last and self.current is None and self.chat_list.model.row_of(last) is not None:
            # Typing already begun (in the search box, say) keeps its focus.
            self.open_chat(last, focus=QApplication.focusWidget() is None)
        from desktop_app.ui.conversation.markdown_style import (
            warm_up_highlighting,  # (after the paint)
        )

        self.background.submit("highlighting", warm_up_highlighting, lambda _made: None)
        self.started = True

    def open_engine_now(self) -> None:
        """Input came before the engine was attached: attach it now, so that what the
        key or click asks for (a shortcut, a chat) is answered rather than lost."""
        if not self.attached and not self.closed:
            self._open_engine()

    def _open_engine(self) -> bool:
        """Start-up: the engine loads and opens now, after the first frame. False when
        it cannot (a database of a newer version, say): the window says so and closes."""
        from desktop_app.ui.startup.opening import open_engine

        engine = open_engine(self.frame, self)
        if engine is None:
            self.close()
            QApplication.exit(1)
            return False
        self.attach(engine)
        if self.frame.demo and not engine.list_chats():
            self.start_demo()  # `contextdesk demo` on a new folder: a chat to look around in
        return True

    # -- which chat is shown ------------------------------------------------------------------

    def open_chat(
        self, chat_id: str, *, focus: bool = True, message_id: str = ""
    ) -> ChatSession | None:
        """Show a chat, opening its pane on first use (panes stay while the app runs); at
        `message_id` (highlighted) if given. `focus`: go to the composer (not when the
        user is moving through the chat list by keys)."""
        self._ensure_centre()
        pane = self.panes.get(chat_id)
        if pane is None:
            pane = self._or_said(
                lambda: self.panes.open(chat_id, self.settings, self.app_state.context_view)
            )
            if pane is None:
                return None
        if pane is not self.shown:
            self._show_pane(pane)
            self.chat_list.select(chat_id)
            self.app_state = self.app_state._replace(last_chat_id=chat_id)
        self.center.setCurrentWidget(pane)
        if message_id:
            pane.show_found(message_id)
        if focus:
            pane.composer.edit.setFocus()
        return pane.session

    def _show_pane(self, pane: ConversationPane | None) -> None:
        """Swap the pane shown; the context panel follows its session."""
        from desktop_app.ui.conversation.pane import order_tab_stops

        if self.shown is not None:
            self.shown.leave()
        self.shown = pane
        self.side.follow(pane.session if pane is not None else None)
        if pane is None:
            self.center.setCurrentWidget(self.no_chat)
        else:
            pane.come_back()
            self.center.setCurrentWidget(pane)
            chats = self.chat_list  # Tab goes as the eye reads, then to the context panel
            order_tab_stops([*chats.tab_stops(), *pane.tab_stops()])
        self._show_mode()
        self._enable_actions()

    @Slot()
    def _enable_actions(self) -> None:
        """Stop and Retry only when there is something to stop or to answer again."""
        pane = self.shown
        self.menus.stop_action.setEnabled(pane is not None and pane.can_stop())
        self.menus.retry_action.setEnabled(pane is not None and pane.can_retry())

    def _on_shown(self, act: Callable[[ConversationPane], object]) -> None:
        """An action on the chat shown (none: nothing to act on)."""
        if self.shown is not None:
            act(self.shown)

    def shown_does(self, act: Callable[[ConversationPane], object]) -> Callable[[], None]:
        """A menu's action on the chat shown."""
        return lambda: self._on_shown(act)

    def shown_chat_does(self, act: ChatAct) -> Callable[[], None]:
        """A menu's action on the chat shown, as the chat list's menu does it to a chat."""
        return lambda: self._on_shown(lambda pane: act(self.chats, pane.session.chat.id))

    @Slot(str)
    def _on_chat_list_project_requested(self, chat_id: str) -> None:
        if self.open_chat(chat_id) is not None:
            self.dialogs.open_project()

    @Slot(str)
    def _on_chats_trashed(self, chat_id: str) -> None:
        if self.panes.close(chat_id) is self.shown is not None:
            self._show_pane(None)

    def new_chat(self, title: str = NEW_CHAT_TITLE) -> ChatSession | None:
        chat = self.chats.new_chat(title)
        return self.panes.sessions().get(chat.id) if chat is not None else None

    @Slot()
    def start_demo(self) -> None:
        """Switch to the offline demo model and open a demo chat to look around in."""
        chat = self._or_said(self.connection.start_demo)
        if chat is not None:
            self.chats.show_new(chat)

    def import_chat(self, path: str = "") -> ChatSession | None:
        chat = self.chats.import_chat(path)
        return self.panes.sessions().get(chat.id) if chat is not None else None

    # -- the menus' own ------------------------------------------------------------------------

    def search_chats(self) -> None:
        self.chat_list.focus_search()

    def show_archive(self) -> None:
        self.chats.show_archive()

    def rename_chat(self) -> None:
        """F2: the chat picked in the list when the list has the focus, else the open one."""
        in_list = self.chat_list.list.hasFocus() and self.chat_list.selected_id()
        chat_id = in_list or (self.shown.session.chat.id if self.shown is not None else None)
        if chat_id:
            self.chat_list.rename(chat_id)

    @Slot(bool)
    def set_context_view(self, on: bool) -> None:
        """Every block's chip, or one quiet marker per message (remembered), in every pane."""
        self.app_state = self.app_state._replace(context_view=on)
        action = self.menus.context_view_action
        action.blockSignals(True)
        action.setChecked(on)
        action.blockSignals(False)
        self.panes.set_context_view(on)

    # -- the context panel asks ----------------------------------------------------------

    @Slot(str)
    def _on_context_jump_requested(self, message_id: str) -> None:
        self._on_shown(lambda pane: pane.messages.scroll_to_message(message_id))

    # -- any session tells us ------------------------------------------------------------------

    @Slot(object)
    def _on_chat_changed(self, chat: ChatInfo) -> None:
        self.chat_list.update_chat(chat)
        if self.shown is not None and self.shown.session.chat.id == chat.id:
            self._show_mode()

    # -- problems and notes -----------------------------------------------------------------------

    def _or_said(self, act: Callable[[], T]) -> T | None:
        """What `act` gives, or None with the problem it raised shown."""
        from desktop_app.core.errors import ContextDeskError  # (loaded with the engine)

        try:
            return act()
        except ContextDeskError as exc:
            self.show_problem(exc.info)
            return None

    @Slot(object)
    def show_problem(self, error: ErrorInfo) -> None:
        """An error that is no chat's own: the window's banner says it (without Retry)."""
        self._ensure_centre()
        self.banner.show_error(error, can_retry=False)

    @Slot(str)
    @Slot(str, int)
    def _on_status(self, text: str, ms: int = 6000) -> None:
        self.statusBar().showMessage(text, ms)

    # -- another program wrote to the database ---------------------------------------------------

    @Slot()
    def _on_watch_timer_timeout(self) -> None:
        """Another program (the command line) may have written: show what it changed,
        and only that — the chat list row by row, a session only if its chat changed."""
        if self._or_said(self.engine.reload_settings_if_changed):
            self._on_connection_settings_saved()
        if (chats := self.chats.sync_with_elsewhere()) is not None:
            for chat_id in self.panes.gone_or_reloaded(chats):
                self._on_chats_trashed(chat_id)

    # -- the connection tells us ------------------------------------------------------------

    @Slot()
    def _on_connection_counter_ready(self) -> None:
        counter = self.engine.counter

        # A draft is a block: its own estimate, as its chip will show once sent.
        self.panes.set_counter(lambda text: counter.encoder.count(text))

    def restyle(self) -> None:
        if self.attached:
            self.panes.restyle()

    def focus_composer(self) -> None:
        self._on_shown(lambda pane: pane.composer.edit.setFocus())

    @Slot()
    def _on_connection_settings_saved(self) -> None:
        settings = self.engine.settings
        self._use_look(settings.appearance, settings.text_size)
        self.banner.setMaximumWidth(settings.reading_width)
        self.panes.use_settings(settings)
        self.panes.replan()

    @Slot()
    def _on_connection_prices_changed(self) -> None:
        # the panel's cost lines are drawn with the plan
        self._on_shown(lambda pane: pane.session.request_plan())

    @Slot()
    def open_settings(self) -> None:
        self.connection.open_settings()

    def _show_mode(self) -> None:
        demo = self.engine.demo if self.attached else self.frame.demo
        pane = self.shown
        self.show_demo_mode(demo, pane.session.chat.title if pane is not None else "")
        if not self._centre_made:
            return  # the centre stays blank until the first frame is up
        if pane is not None:
            pane.show_chat(self.connection.models, demo=demo)
        if self.attached and self.connection.no_key and pane is None:
            self.center.setCurrentWidget(self.welcome)
        elif self.center.currentWidget() is self.welcome:
            self.center.setCurrentWidget(self.no_chat if pane is None else pane)

    # -- closing ------------------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        self.closed = True
        self.watch_timer.stop()
        if self.attached:
            # (else closed before the engine opened: nothing was changed)
            self.panes.close_all()  # stops turns; their partial replies are stored
            self.app_state = self.frame_state()._replace(last_folder=self.chats.folder)
            from desktop_app.core.errors import ContextDeskError  # (with the engine)

            try:
                self.engine.save_window_state(self.app_state)
            except ContextDeskError as exc:
                log.warning("window state not saved: %s", exc)
            for worker in (self.background, self.counting, self.searching):
                worker.stop()
            self.connection.listing.stop()
        super().closeEvent(event)
