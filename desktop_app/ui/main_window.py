"""The main window: chats on the left, the conversation in the middle, the context dock on
the right. It owns the open chats' sessions and turns the views' requests into actions.

Startup is built for a fast first paint (≤ 1 s): the window shows with the chat list
first; the token encoding, the key lookup (a keyring may take seconds) and the last
chat's plan all happen on the background thread afterwards.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, Qt, QTimer, Slot
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from desktop_app.config.files import write_atomically
from desktop_app.config.secrets import ApiKey
from desktop_app.config.settings import AppState, save
from desktop_app.core.blocks import Block, ImageBlock, TextBlock
from desktop_app.core.errors import ContextDeskError, ErrorInfo
from desktop_app.core.messages import Message
from desktop_app.services import Services
from desktop_app.storage.store import ChatInfo
from desktop_app.ui import theme
from desktop_app.ui.approval_dialog import ApprovalDialog
from desktop_app.ui.banner import ErrorBanner
from desktop_app.ui.chat_list import ChatListPanel
from desktop_app.ui.composer import Composer
from desktop_app.ui.context_panel import ContextPanel
from desktop_app.ui.message_view import MessageListView
from desktop_app.ui.session import NEW_CHAT_TITLE, ChatSession
from desktop_app.ui.welcome import WelcomePage
from desktop_app.ui.workers import BackgroundWorker, PendingApproval

if TYPE_CHECKING:
    from desktop_app.context.projection import Plan

log = logging.getLogger(__name__)

APP_NAME = "ContextDesk"


class MainWindow(QMainWindow):
    def __init__(self, services: Services, state: AppState | None = None) -> None:
        super().__init__()
        self.services = services
        self.app_state = state or AppState()
        self.background = BackgroundWorker(self)
        self.sessions: dict[str, ChatSession] = {}
        self.current: ChatSession | None = None
        self.key: ApiKey | None = None
        self.key_known = False  # the background lookup has answered
        self.approvals: list[ApprovalDialog] = []
        self.models: list[object] = _known_models()  # the server's list replaces it
        self.setObjectName("mainWindow")
        self.resize(1280, 820)

        self.chat_list = ChatListPanel()
        self.messages = MessageListView()
        self.banner = ErrorBanner()
        self.composer = Composer()
        self.composer.set_send_with_enter(services.settings.send_with_enter)
        self.welcome = WelcomePage()
        self.no_chat = QLabel("Pick a chat on the left, or press Ctrl+N for a new one.")
        self.no_chat.setAlignment(Qt.AlignmentFlag.AlignCenter)
        conversation = QWidget()
        column = QVBoxLayout(conversation)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(4)
        column.addWidget(self.messages, 1)
        column.addWidget(self.banner)
        column.addWidget(self.composer)
        self.center = QStackedWidget()
        for page in (self.no_chat, self.welcome, conversation):
            self.center.addWidget(page)
        self.conversation = conversation
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.addWidget(self.chat_list)
        self.splitter.addWidget(self.center)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([280, 1000])
        self.setCentralWidget(self.splitter)
        self.context = ContextPanel()
        self.dock = QDockWidget("Context", self)
        self.dock.setObjectName("contextDock")
        self.dock.setWidget(self.context)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.dock)
        self.resizeDocks([self.dock], [340], Qt.Orientation.Horizontal)
        self.demo_label = QLabel(
            "  Offline demo: replies come from a simulator on this computer, not Claude  "
        )
        self.demo_label.setObjectName("demoLabel")
        self.statusBar().addPermanentWidget(self.demo_label)

        self._build_menus()
        self._connect()
        self._restore_state()
        self._show_mode()
        self.chat_list.set_chats(services.store.list_chats())
        self.center.setCurrentWidget(self.no_chat)
        QTimer.singleShot(0, self._after_first_paint)

    # -- building ---------------------------------------------------------------------------

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self.new_action = _action(
            self, "&New chat", QKeySequence.StandardKey.New, self._on_new_triggered
        )
        file_menu.addAction(self.new_action)
        file_menu.addAction(
            _action(self, "Export as &JSON…", None, lambda: self._export_current("json"))
        )
        file_menu.addAction(
            _action(self, "Export as &Markdown…", None, lambda: self._export_current("md"))
        )
        file_menu.addAction(_action(self, "&Import a chat…", "Ctrl+O", self.import_chat))
        file_menu.addSeparator()
        file_menu.addAction(
            _action(self, "&Settings…", QKeySequence.StandardKey.Preferences, self.open_settings)
        )
        file_menu.addAction(_action(self, "&Quit", QKeySequence.StandardKey.Quit, self.close))
        chat_menu = self.menuBar().addMenu("&Chat")
        self.stop_action = _action(self, "&Stop reply", None, self._on_stop_triggered)
        chat_menu.addAction(self.stop_action)
        chat_menu.addAction(_action(self, "&Retry", None, self._on_retry_triggered))
        chat_menu.addAction(_action(self, "Re&name…", "F2", self._on_rename_triggered))
        chat_menu.addAction(_action(self, "Move to &trash", None, self._on_trash_triggered))
        view_menu = self.menuBar().addMenu("&View")
        view_menu.addAction(self.dock.toggleViewAction())
        search = _action(self, "Search chats", "Ctrl+K", self.chat_list.focus_search)
        self.addAction(search)
        view_menu.addAction(search)
        # Esc stops the reply wherever the focus is (the draft, the list, a button).
        self.stop_shortcut = QShortcut(QKeySequence(Qt.Key.Key_Escape), self)
        self.stop_shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
        self.stop_shortcut.activated.connect(self._on_stop_triggered)

    def _connect(self) -> None:
        panel = self.chat_list
        panel.chat_selected.connect(self._on_chat_list_chat_selected)
        panel.new_requested.connect(self._on_new_triggered)
        panel.rename_requested.connect(self._on_chat_list_rename_requested)
        panel.delete_requested.connect(self._on_chat_list_delete_requested)
        panel.undo_delete_requested.connect(self._on_chat_list_undo_delete_requested)
        panel.export_requested.connect(self._on_chat_list_export_requested)
        self.composer.send_requested.connect(self._on_composer_send_requested)
        self.composer.stop_requested.connect(self._on_stop_triggered)
        self.composer.draft_changed.connect(self._on_composer_draft_changed)
        self.composer.problem.connect(self._on_composer_problem)
        self.banner.retry_requested.connect(self._on_retry_triggered)
        self.banner.dismissed.connect(self._on_banner_dismissed)
        self.welcome.enter_key_requested.connect(self.open_settings)
        self.welcome.demo_requested.connect(self.start_demo)
        context = self.context
        context.jump_requested.connect(self._on_context_jump_requested)
        context.compact_requested.connect(self._on_context_compact_requested)
        view = self.messages
        view.exclude_toggled.connect(self._on_messages_exclude_toggled)
        view.pin_requested.connect(self._on_messages_pin_requested)
        view.fork_requested.connect(self._on_messages_fork_requested)
        view.edit_requested.connect(self._on_messages_edit_requested)
        view.retry_requested.connect(self._on_retry_triggered)

    def _restore_state(self) -> None:
        state = self.app_state
        if state.window_geometry:
            self.restoreGeometry(QByteArray.fromBase64(state.window_geometry.encode("ascii")))

    def _after_first_paint(self) -> None:
        """Work the first paint must not wait for."""
        if self.app_state.splitter_sizes:  # once laid out: before that, sizes get rescaled
            self.splitter.setSizes(self.app_state.splitter_sizes)
        counter = self.services.counter
        self.background.submit("warm-up", lambda: counter.text("warm up"), self._on_counter_ready)
        self.background.submit(
            "key", self.services.secrets.get, self._on_key_found, self._on_key_failed
        )
        last = self.app_state.last_chat_id
        if last and self.chat_list.model.row_of(last) is not None:
            self.open_chat(last)

    # -- chats ------------------------------------------------------------------------------

    def open_chat(self, chat_id: str) -> ChatSession | None:
        """Show a chat, opening its session on first use (sessions stay while the app runs)."""
        if self.current is not None and self.current.chat.id == chat_id:
            self.center.setCurrentWidget(self.conversation)
            return self.current
        try:
            session = self.sessions.get(chat_id) or self._open_session(chat_id)
        except ContextDeskError as exc:
            self.banner.show_error(exc.info, can_retry=False)
            return None
        if self.current is not None:
            self.current.scroll_value = (
                None
                if self.messages.sticks_to_bottom
                else self.messages.verticalScrollBar().value()
            )
        self.current = session
        self.messages.setModel(session.model)
        self.messages.excluded = set(session.state().excluded_messages)
        self.messages.restore_scroll(session.scroll_value)
        self.center.setCurrentWidget(self.conversation)
        self.banner.show_error(session.error)
        self.composer.set_busy(session.busy)
        self.context.set_session(session)
        self.chat_list.select(chat_id)
        self.app_state = replace(self.app_state, last_chat_id=chat_id)
        self.setWindowTitle(f"{session.chat.title} — {self._app_title()}")
        self.composer.edit.setFocus()
        return session

    def _open_session(self, chat_id: str) -> ChatSession:
        session = ChatSession(
            self.services, self.background, self.services.store.chat(chat_id), self
        )
        session.busy_changed.connect(self._on_session_busy_changed)
        session.planned.connect(self._on_session_planned)
        session.error_changed.connect(self._on_session_error_changed)
        session.approval_requested.connect(self._on_session_approval_requested)
        session.chat_changed.connect(self._on_session_chat_changed)
        session.text_streamed.connect(self._on_session_text_streamed)
        session.load()
        self.sessions[chat_id] = session
        return session

    def new_chat(self, title: str = NEW_CHAT_TITLE) -> ChatSession | None:
        settings = self.services.settings
        chat = self.services.store.create_chat(title, settings.model, settings.system_prompt)
        self.chat_list.update_chat(chat)
        return self.open_chat(chat.id)

    @Slot()
    def start_demo(self) -> None:
        """Switch to the offline demo model and open a demo chat to look around in."""
        from desktop_app.demo_chat import create_demo_chat

        self.services.reconnect(demo=True)
        self._show_mode()
        chat = create_demo_chat(self.services.store)
        self.chat_list.update_chat(chat)
        self.open_chat(chat.id)

    # -- the current chat's actions ----------------------------------------------------------

    @Slot(object)
    def _on_composer_send_requested(self, blocks: Sequence[Block]) -> None:
        session = self.current or self.new_chat()
        if session is None:
            return
        if session.send(blocks):
            self.composer.clear()
            self.messages.restore_scroll(None)  # sending jumps to the newest message

    @Slot()
    def _on_stop_triggered(self) -> None:
        if self.current is not None and self.current.busy:
            self.current.stop()
            self.statusBar().showMessage("Stopped.", 3000)

    @Slot()
    def _on_retry_triggered(self) -> None:
        if self.current is not None:
            self.current.retry()

    @Slot(object)
    def _on_messages_exclude_toggled(self, message: Message) -> None:
        session = self.current
        if session is None:
            return
        session.set_excluded(message, not session.is_excluded(message))
        self.messages.excluded = set(session.state().excluded_messages)

    @Slot(object)
    def _on_messages_pin_requested(self, message: Message) -> None:
        if self.current is None:
            return
        text, ok = QInputDialog.getMultiLineText(
            self,
            "Pin a fact",
            "Keep the part that matters; it is sent, verbatim, with every request:",
            message.text,
        )
        if ok and text.strip():
            self.current.pin_fact(text)
            self.statusBar().showMessage("Pinned. It is sent with every request from now on.", 4000)

    @Slot(object)
    def _on_messages_fork_requested(self, message: Message) -> None:
        if self.current is not None:
            self._open_new(self.current.fork(message))

    @Slot(object)
    def _on_messages_edit_requested(self, message: Message) -> None:
        session = self.current
        if session is None:
            return
        text, ok = QInputDialog.getMultiLineText(
            self, "Edit and resend", "Sent in a new chat; this one stays as it is:", message.text
        )
        if not ok or not text.strip():
            return
        fork = self._open_new(session.fork_before(message))
        if fork is not None:
            images = tuple(b for b in message.blocks if isinstance(b, ImageBlock))
            fork.send((*images, TextBlock(text.strip())))

    # -- the context panel asks ----------------------------------------------------------

    @Slot(str)
    def _on_context_jump_requested(self, message_id: str) -> None:
        self.messages.scroll_to_message(message_id)

    @Slot()
    def _on_context_compact_requested(self) -> None:
        from desktop_app.ui.compaction_dialog import CompactionDialog

        if self.current is None:
            return
        if self.current.busy:
            self.statusBar().showMessage(
                "Wait for the reply to finish, or stop it, then compact.", 5000
            )
            return
        CompactionDialog(self.current, self).exec()

    def _open_new(self, chat: ChatInfo) -> ChatSession | None:
        self.chat_list.update_chat(chat)
        return self.open_chat(chat.id)

    @Slot(str)
    def _on_composer_draft_changed(self, text: str) -> None:
        if self.current is not None:
            self.current.request_plan(text)

    @Slot(str)
    def _on_composer_problem(self, text: str) -> None:
        self.banner.show_error(ErrorInfo("Could not attach", text), can_retry=False)

    @Slot()
    def _on_banner_dismissed(self) -> None:
        if self.current is not None:
            self.current.error = None

    # -- the chat list --------------------------------------------------------------------

    @Slot(str)
    def _on_chat_list_chat_selected(self, chat_id: str) -> None:
        self.open_chat(chat_id)

    @Slot()
    def _on_new_triggered(self) -> None:
        self.new_chat()

    @Slot(str, str)
    def _on_chat_list_rename_requested(self, chat_id: str, title: str) -> None:
        chat = self.services.store.update_chat(chat_id, title=title)
        self._on_session_chat_changed(chat)

    @Slot()
    def _on_rename_triggered(self) -> None:
        if self.current is not None:
            self.chat_list.rename(self.current.chat.id)

    @Slot(str)
    def _on_chat_list_delete_requested(self, chat_id: str) -> None:
        session = self.sessions.pop(chat_id, None)
        if session is not None:
            session.close()
        chat = self.services.store.chat(chat_id)
        self.services.store.delete_chat(chat_id)
        self.chat_list.removed(chat)
        if self.current is session and session is not None:
            self.current = None
            self.context.set_session(None)
            self.messages.setModel(None)
            self.center.setCurrentWidget(self.no_chat)
            self.setWindowTitle(self._app_title())

    @Slot()
    def _on_trash_triggered(self) -> None:
        if self.current is not None:
            self._on_chat_list_delete_requested(self.current.chat.id)

    @Slot(str)
    def _on_chat_list_undo_delete_requested(self, chat_id: str) -> None:
        self.services.store.restore_chat(chat_id)
        self.chat_list.set_chats(self.services.store.list_chats())
        self.open_chat(chat_id)

    @Slot(str, str)
    def _on_chat_list_export_requested(self, chat_id: str, fmt: str) -> None:
        chat = self.services.store.chat(chat_id)
        suffix = "json" if fmt == "json" else "md"
        name = (
            "".join(c if c.isalnum() or c in " -_" else "_" for c in chat.title).strip() or "chat"
        )
        path, _ = QFileDialog.getSaveFileName(
            self, "Export chat", f"{name}.{suffix}", f"*.{suffix}"
        )
        if not path:
            return
        try:
            write_atomically(Path(path), self.services.export_text(chat_id, fmt).encode("utf-8"))
        except (ContextDeskError, OSError) as exc:
            info = error_info(exc, "Export failed")
            self.banner.show_error(info, can_retry=False)
            return
        self.statusBar().showMessage(f"Exported to {path}", 5000)

    @Slot()
    def import_chat(self, path: str = "") -> ChatSession | None:
        """Import a JSON chat (ours, or a Messages API request body): all or nothing; the
        problems, if any, are listed by their JSON path."""
        from desktop_app.storage.exchange import import_chat as import_file

        if not path:
            path, _ = QFileDialog.getOpenFileName(
                self, "Import a chat", "", "JSON (*.json);;All files (*)"
            )
        if not path:
            return None
        try:
            result = import_file(self.services.store, Path(path).read_bytes())
        except (ContextDeskError, OSError) as exc:
            info = error_info(exc, "Cannot read the file")
            box = QMessageBox(QMessageBox.Icon.Warning, info.title, info.message, parent=self)
            box.setObjectName("importProblems")
            box.setInformativeText(info.details)  # the list: JSON path and problem, one a line
            box.open()
            return None
        if result.repairs:
            self.statusBar().showMessage(
                f"Imported, with {len(result.repairs)} repair(s): see the chat's export.", 8000
            )
        return self._open_new(result.chat)

    def _export_current(self, fmt: str) -> None:
        if self.current is not None:
            self._on_chat_list_export_requested(self.current.chat.id, fmt)

    # -- sessions tell us -----------------------------------------------------------------

    @Slot(bool)
    def _on_session_busy_changed(self, busy: bool) -> None:
        if self.sender() is self.current:
            self.composer.set_busy(busy)

    @Slot(object)
    def _on_session_planned(self, plan: Plan) -> None:
        session = self.current
        if self.sender() is session and session is not None:
            self.context.show_plan(plan)
            self.messages.excluded = set(session.state().excluded_messages)

    @Slot()
    def _on_session_error_changed(self) -> None:
        if self.sender() is self.current and self.current is not None:
            self.banner.show_error(self.current.error)

    @Slot(int)
    def _on_session_text_streamed(self, characters: int) -> None:
        if self.sender() is self.current:
            self.context.add_streaming(max(1, characters // 4))  # ≈ tokens; exact after the plan

    @Slot(object)
    def _on_session_chat_changed(self, chat: ChatInfo) -> None:
        self.chat_list.update_chat(chat)
        if self.current is not None and self.current.chat.id == chat.id:
            self.current.chat = chat
            self.setWindowTitle(f"{chat.title} — {self._app_title()}")

    @Slot(object)
    def _on_session_approval_requested(self, pending: PendingApproval) -> None:
        session = self.sender()
        title = session.chat.title if isinstance(session, ChatSession) else ""
        dialog = ApprovalDialog(pending, title, self)
        if isinstance(session, ChatSession):
            session.approval_withdrawn.connect(dialog.withdraw)
        dialog.finished.connect(lambda _result, d=dialog: self._forget_dialog(d))
        self.approvals.append(dialog)
        dialog.show()  # not modal: Stop must stay reachable
        dialog.raise_()
        dialog.activateWindow()

    def _forget_dialog(self, dialog: ApprovalDialog) -> None:
        if dialog in self.approvals:
            self.approvals.remove(dialog)
        dialog.deleteLater()

    # -- key, settings, mode -------------------------------------------------------------

    def _on_counter_ready(self, _count: int) -> None:
        counter = self.services.counter

        def count(text: str) -> int | None:
            return (
                counter.calibrated(counter.encoder.count(text), self._model())
                if counter.ready
                else None
            )

        self.composer.set_counter(count)

    def _on_key_found(self, key: ApiKey | None) -> None:
        self.key, self.key_known = key, True
        self._show_mode()
        if key is not None or self.services.demo:  # also imports the SDK early, off-thread
            self.background.submit("models", self._fetch_models, self._on_models_fetched)

    def _fetch_models(self) -> list[object]:
        backend = self.services.backend()
        models = getattr(backend, "models", None)
        release = getattr(backend, "release_thread", None)
        try:
            return list(models()) if models is not None else []
        finally:
            if release is not None:  # this backend's: Settings may have replaced it meanwhile
                release()

    def _on_models_fetched(self, models: list[object]) -> None:
        if models:
            self.models = models

    def _on_key_failed(self, error: ErrorInfo) -> None:
        self.key_known = True
        self.banner.show_error(
            ErrorInfo(
                error.title,
                f"{error.message} Open Settings to use a key for this session only.",
                details=error.details,
                kind=error.kind,
            ),
            can_retry=False,
        )

    @Slot()
    def open_settings(self) -> None:
        from desktop_app.ui.settings_dialog import SettingsDialog

        source = self.key.source.value if self.key else "none yet"
        if self.services.demo:
            source += " (the offline demo needs none)"
        dialog = SettingsDialog(
            self.services.settings, self.services.secrets, source, self.models, self
        )
        if dialog.exec() != SettingsDialog.DialogCode.Accepted:
            return
        settings = dialog.chosen()
        try:
            save(self.services.paths.settings_file, settings)
        except (ContextDeskError, OSError) as exc:
            info = error_info(exc, "Settings not saved")
            self.banner.show_error(info, can_retry=False)
            return
        server_changed = settings.base_url != self.services.settings.base_url
        self.services.settings = settings
        self.composer.set_send_with_enter(settings.send_with_enter)
        if dialog.key_changed or server_changed:
            self.services.reconnect(demo=False if dialog.key_changed else None)
            self.models = _known_models()
            self.background.submit(
                "key", self.services.secrets.get, self._on_key_found, self._on_key_failed
            )
        for session in self.sessions.values():
            session.settings_changed()
        self._show_mode()

    def _show_mode(self) -> None:
        demo = self.services.demo
        self.demo_label.setVisible(demo)
        colour = theme.status_colour("streaming", theme.is_dark()).name()
        self.demo_label.setStyleSheet(f"color: {colour}; font-weight: bold;")
        no_key = self.key_known and self.key is None and not demo
        if no_key and self.current is None:
            self.center.setCurrentWidget(self.welcome)
        elif self.center.currentWidget() is self.welcome:
            self.center.setCurrentWidget(
                self.no_chat if self.current is None else self.conversation
            )
        title = self.current.chat.title + " — " if self.current else ""
        self.setWindowTitle(title + self._app_title())

    def _app_title(self) -> str:
        return f"{APP_NAME} — offline demo" if self.services.demo else APP_NAME

    def _model(self) -> str:
        return (
            self.services.model_of(self.current.chat)
            if self.current
            else self.services.settings.model
        )

    # -- closing ------------------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        for session in self.sessions.values():
            session.close()  # stops turns; their partial replies are stored
        for dialog in list(self.approvals):
            dialog.withdraw()
        self.app_state = replace(
            self.app_state,
            window_geometry=bytes(self.saveGeometry().toBase64().data()).decode("ascii"),
            splitter_sizes=list(self.splitter.sizes()),
        )
        try:
            save(self.services.paths.state_file, self.app_state)
        except (ContextDeskError, OSError) as exc:
            log.warning("window state not saved: %s", exc)
        self.background.stop()
        super().closeEvent(event)


def error_info(exc: ContextDeskError | OSError, title: str) -> ErrorInfo:
    """What to show for a failure: our errors say it themselves; the OS's get a title."""
    if isinstance(exc, ContextDeskError):
        return exc.info
    return ErrorInfo(title, str(exc))


def _action(
    window: QMainWindow,
    text: str,
    shortcut: QKeySequence.StandardKey | str | None,
    slot: Callable[[], object],
) -> QAction:
    action = QAction(text, window)
    if shortcut is not None:
        action.setShortcut(shortcut)
    action.triggered.connect(slot)
    return action


def _known_models() -> list[object]:
    from desktop_app.api.backend import BUILTIN_MODELS

    return list(BUILTIN_MODELS)
