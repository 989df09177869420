"""Every open chat's pane (`OpenPanes`): made the first time its chat is shown, kept
while the app runs (a draft, a scroll position, a reply streaming in the background, a
question waiting stay with their chat), closed when the chat goes to the trash.

What any pane says that is the window's business comes out of here as one signal each,
so the window connects once, not once per chat.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from desktop_app.core.errors import ErrorInfo, ErrorKind
from desktop_app.ui.chat_list.model import Activity
from desktop_app.ui.conversation.pane import ConversationPane
from desktop_app.ui.conversation.session import ChatSession

# What the chat list does not mark as a failed chat: nothing in it failed.
NOT_FAILURES = frozenset({ErrorKind.NOTICE, ErrorKind.USAGE, ErrorKind.NOTHING_TO_RETRY})

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStackedWidget

    from desktop_app.chats import Engine
    from desktop_app.config.settings import Settings
    from desktop_app.storage.chat_info import ChatInfo
    from desktop_app.ui.workers import BackgroundWorker


class OpenPanes(QObject):
    """Signals, from any pane or its session: status(text, ms), problem(ErrorInfo),
    forked(Chat, from chat id), open_requested(chat id), trace_requested(Message),
    context_view_toggled(bool), actions_changed(), chat_changed(ChatInfo),
    activity(chat id, Activity or "": answering, failed, or neither)."""

    status = Signal(str, int)
    problem = Signal(object)
    forked = Signal(object, str)
    open_requested = Signal(str)
    trace_requested = Signal(object)
    context_view_toggled = Signal(bool)
    actions_changed = Signal()
    chat_changed = Signal(object)
    activity = Signal(str, str)

    def __init__(
        self,
        engine: Engine,
        stack: QStackedWidget,
        background: BackgroundWorker,
        counting: BackgroundWorker,
    ) -> None:
        super().__init__(stack)
        self.engine = engine
        self.stack = stack  # the window's middle, where each pane is a page
        self.background = background
        self.counting = counting
        self.counter: Callable[[str], int | None] | None = None  # the drafts' estimate
        self._panes: dict[str, ConversationPane] = {}

    def get(self, chat_id: str) -> ConversationPane | None:
        return self._panes.get(chat_id)

    def __iter__(self) -> Iterator[ConversationPane]:
        return iter(list(self._panes.values()))

    def sessions(self) -> dict[str, ChatSession]:
        return {chat_id: pane.session for chat_id, pane in self._panes.items()}

    def open(self, chat_id: str, settings: Settings, context_view: bool) -> ConversationPane:
        """The chat's pane, made now: its session reads the chat and plans it."""
        window = self.stack.window()
        session = ChatSession(
            self.engine, self.engine.chat(chat_id), self.background, window, self.counting
        )
        session.chat_changed.connect(self.chat_changed)
        session.busy_changed.connect(lambda *_: self._mark(session))
        session.error_changed.connect(lambda: self._mark(session))
        session.load()
        notices = self.engine.take_notices()  # said once: what opening it changed
        if notices:
            session.set_error(
                ErrorInfo(
                    "Thinking changed to what the model takes",
                    "\n".join(notices),
                    kind=ErrorKind.NOTICE,
                )
            )
        pane = ConversationPane(session, settings, context_view, window)
        if self.counter is not None:
            pane.set_counter(self.counter)
        pane.status.connect(self.status)
        pane.problem.connect(self.problem)
        pane.forked.connect(self.forked)
        pane.open_requested.connect(self.open_requested)
        pane.trace_requested.connect(self.trace_requested)
        pane.context_view_toggled.connect(self.context_view_toggled)
        pane.actions_changed.connect(self.actions_changed)
        self.stack.addWidget(pane)
        self._panes[chat_id] = pane
        return pane

    def close(self, chat_id: str) -> ConversationPane | None:
        """The chat went to the trash: its turn stops, its questions are withdrawn, its
        pane goes (returned, for the window to stop showing it)."""
        pane = self._panes.pop(chat_id, None)
        if pane is not None:
            self._close(pane)
            self.stack.removeWidget(pane)
            pane.deleteLater()
            pane.session.deleteLater()  # (its history with it: the window is its parent)
        return pane

    def close_all(self) -> None:
        """The window closes: every turn stops (its partial reply stored)."""
        for pane in self._panes.values():
            pane.keep_draft()  # (typed just before: the pause that keeps it has not come)
            self._close(pane)

    @staticmethod
    def _close(pane: ConversationPane) -> None:
        pane.session.close()
        pane.withdraw_approvals()

    def _mark(self, session: ChatSession) -> None:
        """The chat list marks a chat answering or failed (one shown or not). A notice, or
        an action refused before anything was sent, is said in the chat, not marked."""
        error = session.error
        failed = error is not None and error.kind not in NOT_FAILURES
        mark = Activity.ANSWERING if session.busy else Activity.FAILED if failed else ""
        self.activity.emit(session.chat.id, mark)

    # -- for every open chat --------------------------------------------------------------------

    def gone_or_reloaded(self, chats: dict[str, ChatInfo]) -> list[str]:
        """Another program changed the chats (listed now as `chats`): each open chat that
        changed reloads; those no longer listed (moved to the trash) are returned."""
        gone = []
        for pane in self:
            info = chats.get(pane.session.chat.id)
            if info is None:
                gone.append(pane.session.chat.id)
            elif info != pane.session.chat.info:
                pane.session.reload()
        return gone

    def set_counter(self, count: Callable[[str], int | None]) -> None:
        self.counter = count
        for pane in self:
            pane.set_counter(count)

    def replan(self) -> None:
        """Tools, a project or Settings changed: every open chat plans again."""
        for pane in self:
            pane.session.settings_changed()
            pane.prompt_commands.servers_changed()  # (their prompts may have changed too)

    def use_settings(self, settings: Settings) -> None:
        for pane in self:
            pane.use_settings(settings)

    def restyle(self) -> None:
        """New colours or a new text size."""
        for pane in self:
            pane.style_conversation()
            pane.relayout_messages()

    def set_context_view(self, on: bool) -> None:
        for pane in self:
            pane.set_context_view(on)
