"""One open chat's conversation (`ConversationPane`): its bar, its messages, the questions
it waits on, its banner and its composer — over the chat's `ChatSession`, which it has
for as long as it lives. Made when the chat is first opened and kept while the app runs
(the window shows one at a time), so a draft, a scroll position and a question waiting
stay with their chat.

What an action does to the chat is in the application layer (`desktop_app.chats`,
through the session); the pane wires widgets to it. What is the window's — the menus,
the chat list, the context dock, problems that are no chat's own — is `MainWindow`'s;
the pane tells it by signals.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QPalette, QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QMessageBox, QVBoxLayout, QWidget

from desktop_app import said
from desktop_app.chats import handoff_links
from desktop_app.core.errors import ContextDeskError, ErrorInfo, ErrorKind
from desktop_app.ui import theme
from desktop_app.ui.conversation.approval_card import ApprovalCard, PendingApproval
from desktop_app.ui.conversation.banner import ErrorBanner, centred_row
from desktop_app.ui.conversation.chat_header import ChatHeader
from desktop_app.ui.conversation.composer import Composer
from desktop_app.ui.conversation.find_bar import FindBar
from desktop_app.ui.conversation.handoff_links import HandoffLinks
from desktop_app.ui.conversation.message_view import MessageListView
from desktop_app.ui.conversation.new_chat_page import NewChatPage
from desktop_app.ui.conversation.prompt_commands import PromptCommands

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from pathlib import Path

    from desktop_app.config.settings import Settings
    from desktop_app.core.blocks import Block
    from desktop_app.core.messages import Message
    from desktop_app.core.ports import ModelInfo
    from desktop_app.ui.conversation.session import ChatSession

FIND_LIMIT = 1000  # matches Ctrl+F steps through in one chat
# Errors whose banner has no Retry (which answers the last message again): nothing to
# answer, or the message was never stored — the draft is still in the composer: Send it.
NOT_RETRYABLE = {
    ErrorKind.NOTICE,
    ErrorKind.NOTHING_TO_RETRY,
    ErrorKind.USAGE,
    ErrorKind.IO,
    ErrorKind.DISK_FULL,
    ErrorKind.DATABASE_LOCKED,
    ErrorKind.READ_ONLY,
    ErrorKind.DATABASE_DAMAGED,
    ErrorKind.STORAGE,
    ErrorKind.ALREADY_RUNNING,
}
# ... except these, once the question was stored (the disk filled during the turn):
# Retry answers it when there is space again, or the other program let go.
RETRY_WHEN_STORED = {ErrorKind.DISK_FULL, ErrorKind.DATABASE_LOCKED}


class ConversationPane(QWidget):
    """Signals: status(text, ms): a passing word for the status bar; problem(ErrorInfo):
    an error that is no chat's own; forked(Chat, from chat id): a fork made, to show;
    context_view_toggled(bool): the bar's chips-or-markers switch; actions_changed():
    Stop and Retry may have become possible or not."""

    status = Signal(str, int)
    problem = Signal(object)
    forked = Signal(object, str)
    open_requested = Signal(str)  # another chat to show (a hand-off's link, clicked)
    trace_requested = Signal(object)  # a message: which requests carried it (the ledger)
    context_view_toggled = Signal(bool)
    actions_changed = Signal()

    def __init__(
        self, session: ChatSession, settings: Settings, context_view: bool, parent: QWidget
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.approvals: list[ApprovalCard] = []  # this chat's questions waiting
        self.setObjectName("conversation")
        self.setAutoFillBackground(True)  # one page, the messages' colour
        self.setBackgroundRole(QPalette.ColorRole.Base)
        self.messages = MessageListView()
        self.messages.set_context_view(context_view)
        self.header = ChatHeader()
        self.header.context_view.setChecked(context_view)
        self.links = HandoffLinks()
        self.banner = ErrorBanner()
        self.composer = Composer()
        self.banner.focus_after = self.composer.edit  # (its Retry or ✕ pressed: typing goes on)
        self.composer.set_send_with_enter(settings.send_with_enter)
        self.find_bar = FindBar(self._find_in_chat, self.messages.show_message)
        self.column = QVBoxLayout(self)
        self.column.setContentsMargins(0, 0, 0, 0)
        self.column.setSpacing(4)
        self.column.addWidget(self.header)
        self.column.addWidget(self.links)
        self.column.addWidget(self.find_bar)
        self.column.addWidget(self.messages, 1)
        self.new_chat = NewChatPage()  # in the messages' place while there are none
        self.new_chat.hide()
        self.column.addWidget(self.new_chat, 1)
        # The banner and the composer stand in the reading column, however wide the window.
        # (Stretch around them, not an alignment: an aligned widget keeps its size hint.)
        self._centred_rows: list[QHBoxLayout] = []
        for bar in (self.banner, self.composer):
            centred = centred_row(bar)
            self.column.addLayout(centred)
            self._centred_rows.append(centred)
        self.set_reading_width(settings.reading_width)
        self.style_conversation()
        self._connect()
        # The draft left unsent, the last time (a restart): in the composer again.
        self._draft_kept = self._kept_draft_of(session)
        if self._draft_kept:
            self.composer.edit.setPlainText(self._draft_kept)
        self.messages.delegate.cost_of = session.chat.costs.reply_cost
        self.messages.is_excluded = session.is_excluded
        self.show_error(session.error)
        self.composer.set_busy(session.busy)
        self.show_links()

    def show_links(self) -> None:
        """The chats this one continues and is continued in (a hand-off)."""
        self.links.show_links(*handoff_links(self.session.engine.store, self.session.chat.id))

    def _connect(self) -> None:
        session = self.session
        session.busy_changed.connect(self._on_session_busy_changed)
        session.error_changed.connect(self._on_session_error_changed)
        session.told.connect(self._on_session_told)
        session.retry_waiting.connect(self._on_session_retry_waiting)
        session.approval_requested.connect(self._on_session_approval_requested)
        self.composer.send_requested.connect(self._on_composer_send_requested)
        self.composer.stop_requested.connect(self.stop)
        self.composer.draft_changed.connect(self._on_composer_draft_changed)
        self.composer.problem.connect(self._on_composer_problem)
        self.composer.pdf_chosen.connect(self._on_composer_pdf_chosen)
        self.prompt_commands = PromptCommands(self.composer, session)  # `/name`: MCP prompts
        self.header.model_chosen.connect(self._on_header_model_chosen)
        self.header.settings_chosen.connect(self._on_header_settings_chosen)
        self.header.context_view_toggled.connect(self.context_view_toggled)
        self.banner.retry_requested.connect(self.retry)
        self.banner.dismissed.connect(self._on_banner_dismissed)
        self.links.open_requested.connect(self.open_requested)
        view = self.messages
        view.exclude_toggled.connect(self._on_messages_exclude_toggled)
        view.pin_requested.connect(self._on_messages_pin_requested)
        view.fork_requested.connect(self._on_messages_fork_requested)
        view.edit_requested.connect(self._on_messages_edit_requested)
        view.retry_requested.connect(self.retry)
        view.regenerate_requested.connect(self._on_messages_regenerate_requested)
        view.branch_requested.connect(self._on_messages_branch_requested)
        view.trace_requested.connect(self.trace_requested)
        view.scrollbar_width_changed.connect(self._on_messages_scrollbar_width_changed)
        self.find_bar.closed.connect(self._on_find_bar_closed)
        self.new_chat.starter_chosen.connect(self._on_new_chat_starter_chosen)
        session.planned.connect(self._show_new_chat_page)
        session.cache.changed.connect(self._on_cache_changed)
        for change in (session.model.rowsInserted, session.model.rowsRemoved):
            change.connect(self._show_new_chat_page)
        session.model.modelReset.connect(self._show_new_chat_page)
        self._show_new_chat_page()

    def showEvent(self, event: QShowEvent) -> None:
        """The messages go in when the pane is first shown, at its size: set before, the
        view laid its rows out at each width the pane passed through (4 layouts, not 1)."""
        super().showEvent(event)
        view = self.messages
        if view.model() is None:
            # Laid out with its scrollbar from the start: a long chat needs it, and its
            # appearing would narrow the rows and lay them all out again. (A short chat
            # loses it after, and lays its few rows out again.)
            view.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
            view.setModel(self.session.model)
            view.restore_scroll(self.session.scroll_value)
            view.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)

    def tab_stops(self) -> list[QWidget]:
        """Its widgets as the eye reads them: the bar, the messages, the composer."""
        header, composer = self.header, self.composer
        return [
            header.model,
            header.thinking,
            header.context_view,
            self.messages,
            composer.edit,
            composer.attach_button,
            composer.send_button,
        ]

    # -- what the window asks of the chat shown ------------------------------------------------

    @Slot()
    def stop(self) -> None:
        if self.session.busy:
            self.session.stop()
            self.status.emit("Stopped.", 3000)

    @Slot()
    def retry(self) -> None:
        self._within_budget(lambda anyway: self.session.retry(over_budget=anyway))

    def _within_budget(self, send: Callable[[bool], bool]) -> bool:
        """`send(False)`; when a hard spending cap holds it back, ask — naming the cap, what
        is spent and what the send adds — and `send(True)` if the user says go over once."""
        if send(False):
            return True
        refusal = self.session.budget_refusal
        if refusal is None:
            return False
        box = QMessageBox(QMessageBox.Icon.Warning, refusal.title, refusal.message, parent=self)
        anyway = box.addButton("Send anyway, this once", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return box.clickedButton() is anyway and send(True)

    def open_find(self) -> None:
        self.find_bar.open_bar()

    def can_stop(self) -> bool:
        return self.session.busy

    def can_retry(self) -> bool:
        """Is there a last message to answer again (and no turn running)?"""
        from desktop_app.chats import can_retry  # loaded with the chat already

        return not self.session.busy and can_retry(self.session.messages)

    def show_found(self, message_id: str) -> None:
        """Bring a found message into view, highlighted — on its own branch, when it is in
        a version that is not shown (the branch is read again first)."""
        session = self.session
        try:
            switched = not session.busy and session.chat.branches.show_holding(message_id)
        except ContextDeskError as exc:
            self.banner.show_error(exc.info, can_retry=False)
            return
        if switched:
            session.load()
            session.chat_changed.emit(session.chat.info)
        if session.model.history_complete:
            self.messages.show_message(message_id)
            return

        def read(_plan: object) -> None:  # the branch's history is in: show it there
            session.planned.disconnect(read)
            if self.isVisible():
                self.messages.show_message(message_id)

        session.planned.connect(read)

    def show_chat(self, models: Sequence[ModelInfo], *, demo: bool) -> None:
        """The bar: the chat's title, its model among `models`, its window and thinking."""
        chat = self.session.chat
        self.header.show_chat(
            chat.title, chat.model, models, chat.settings.context_window, demo=demo
        )
        self.header.show_thinking(chat.setup.thinking_options(), chat.settings)
        prices = self.session.engine.prices()
        price = prices.price(chat.model)
        self.header.show_write_prices(
            (
                said.per_million(price.cache_write_5m, prices),
                said.per_million(price.cache_write_1h, prices),
            )
            if price is not None
            else None
        )

    @Slot()
    def _on_cache_changed(self) -> None:
        cache = self.session.cache
        state = cache.outlook.cache.state if cache.outlook else "none"
        self.header.show_cache(cache.short(), cache.line(), state, cache.breakers())
        self.composer.show_price(said.draft_price(cache.outlook) if cache.outlook else "")

    def leave(self) -> None:
        """Another chat is shown: where this one was read is kept for its return."""
        self.session.scroll_value = (
            None if self.messages.sticks_to_bottom else self.messages.verticalScrollBar().value()
        )

    def come_back(self) -> None:
        self.find_bar.reset()
        self.messages.restore_scroll(self.session.scroll_value)

    # -- the window's settings ------------------------------------------------------------------

    def use_settings(self, settings: Settings) -> None:
        self.composer.set_send_with_enter(settings.send_with_enter)
        self.set_reading_width(settings.reading_width)

    def set_counter(self, count: Callable[[str], int | None]) -> None:
        self.composer.set_counter(count)

    def set_context_view(self, on: bool) -> None:
        toggle = self.header.context_view
        toggle.blockSignals(True)
        toggle.setChecked(on)
        toggle.blockSignals(False)
        self.messages.set_context_view(on)

    def set_reading_width(self, px: int) -> None:
        """Settings → Reading width: the messages' column, and the composer under it."""
        self.messages.set_reading_width(px)
        for bar in (self.banner, self.composer):
            bar.setMaximumWidth(px)

    def style_conversation(self) -> None:
        """The conversation's look, on each widget around the messages (theme.CONVERSATION
        says why not on the list)."""
        sheet = theme.conversation_sheet(theme.is_dark())
        for widget in (self.header, self.composer, self.messages.hover_bar, *self.approvals):
            widget.setStyleSheet(sheet)

    def relayout_messages(self) -> None:
        self.messages.scheduleDelayedItemsLayout()  # new colours, new sizes

    # -- the composer, the bar and the banner ---------------------------------------------------

    @Slot(object)
    def _on_composer_send_requested(self, blocks: Sequence[Block]) -> None:
        editing = self.composer.editing
        if self._within_budget(
            lambda anyway: self.session.send(blocks, beside=editing, over_budget=anyway)
        ):
            self.composer.clear()  # stored: only then is the draft cleared
            self.messages.restore_scroll(None)  # sending jumps to the newest message

    @Slot(object)
    def _on_composer_draft_changed(self, blocks: list[Block]) -> None:
        # an edit is planned as the branch Send will make
        self.session.request_plan(blocks, editing=self.composer.editing)
        self.keep_draft()

    @staticmethod
    def _kept_draft_of(session: ChatSession) -> str:
        try:
            return session.chat.draft
        except ContextDeskError as exc:  # (unreadable: the composer starts empty)
            log.warning("draft not read: %s", exc)
            return ""

    def keep_draft(self) -> None:
        """Keep the unsent draft with the chat (after a pause in typing, and when the
        window closes): a restart shows it again. Best kept, never in the way: a write
        that fails is logged, not shown."""
        text = self.composer.draft_text
        if text == self._draft_kept:
            return
        try:
            self.session.chat.keep_draft(text)
        except ContextDeskError as exc:
            log.warning("draft not kept: %s", exc)
            return
        self._draft_kept = text

    @Slot(str)
    def _on_composer_problem(self, text: str) -> None:
        self.banner.show_error(ErrorInfo("Could not attach", text), can_retry=False)

    @Slot(str)
    def _on_header_model_chosen(self, model: str) -> None:
        self.session.switch_model(model)

    @Slot(dict)
    def _on_header_settings_chosen(self, values: dict[str, str]) -> None:
        self.session.change(values)

    @Slot()
    def _on_banner_dismissed(self) -> None:
        self.session.error = None

    # -- the messages ask ------------------------------------------------------------------------

    @Slot(object)
    def _on_messages_exclude_toggled(self, message: Message) -> None:
        session = self.session
        session.set_excluded(message, not session.is_excluded(message))
        self.messages.refresh_actions()

    @Slot(object)
    def _on_messages_pin_requested(self, message: Message) -> None:
        from desktop_app.ui.dialogs.fact_dialog import ask_fact

        text = ask_fact(
            self,
            "Pin a fact",
            "Keep the part that matters; it is sent, verbatim, with every request:",
            message.text,
        )
        if text and self.session.pin_fact(text):
            self.status.emit("Pinned. It is sent with every request from now on.", 4000)

    @Slot(object)
    def _on_messages_fork_requested(self, message: Message) -> None:
        try:
            chat = self.session.engine.fork(self.session.chat, message)
        except ContextDeskError as exc:
            self.problem.emit(exc.info)
            return
        self.forked.emit(chat, self.session.chat.id)

    @Slot(object)
    def _on_composer_pdf_chosen(self, path: Path) -> None:
        """A PDF: as a document (its pages, as Claude sees them) or as its text — asked
        with both costs in view, before anything is sent."""
        from desktop_app.ui.conversation.pdf_choice import ask_pdf_choice

        attachment = ask_pdf_choice(self, self.session, path)
        if attachment is not None:
            self.composer.add_attachment(attachment)

    @Slot(object)
    def _on_messages_edit_requested(self, message: Message) -> None:
        """Rewrite the message in the composer; Send makes its new version, in place."""
        if not self.session.busy:
            self.composer.start_editing(message)

    @Slot(object)
    def _on_messages_regenerate_requested(self, message: Message) -> None:
        if self._within_budget(lambda anyway: self.session.regenerate(message, over_budget=anyway)):
            self.messages.restore_scroll(None)

    @Slot(str)
    def _on_messages_branch_requested(self, message_id: str) -> None:
        self.composer.stop_editing()  # the message being edited may leave the branch
        self.session.show_branch(message_id)

    @Slot(int)
    def _on_messages_scrollbar_width_changed(self, taken: int) -> None:
        """The banner and composer stay under the messages' column, which the scrollbar
        moves left by half its width."""
        for row in self._centred_rows:
            row.setContentsMargins(0, 0, taken, 0)

    @Slot()
    def _show_new_chat_page(self, *_changed: object) -> None:
        """A chat with no messages shows what it starts with, not a blank page."""
        session = self.session
        empty = session.model.rowCount() == 0
        self.new_chat.setVisible(empty)
        self.messages.setVisible(not empty)
        if empty:
            self.new_chat.show_chat(session.chat.model, session.plan, session.state().facts)

    @Slot(str)
    def _on_new_chat_starter_chosen(self, text: str) -> None:
        self.composer.set_draft(text)
        edit = self.composer.edit
        edit.moveCursor(edit.textCursor().MoveOperation.End)  # to go on typing

    def _find_in_chat(self, text: str) -> list[str]:
        """The messages of the chat that hold `text`, in order."""
        try:
            hits = self.session.engine.search(text, chat_id=self.session.chat.id, limit=FIND_LIMIT)
        except ContextDeskError as exc:
            self.problem.emit(exc.info)
            return []
        return [hit.message_id for hit in hits if hit.message_id]

    @Slot()
    def _on_find_bar_closed(self) -> None:
        self.messages.clearSelection()
        self.composer.edit.setFocus()

    # -- the session tells us ---------------------------------------------------------------------

    @Slot(bool)
    def _on_session_busy_changed(self, busy: bool) -> None:
        self.composer.set_busy(busy)
        self.actions_changed.emit()
        error = self.session.error
        if not busy and error is not None and error.kind in RETRY_WHEN_STORED:
            self.banner.retry_button.setVisible(self._can_retry(error))  # the turn has ended

    @Slot()
    def _on_session_error_changed(self) -> None:
        self.show_error(self.session.error)

    @Slot(str)
    def _on_session_told(self, text: str) -> None:
        self.status.emit(text, 8000)

    @Slot(float, str)
    def _on_session_retry_waiting(self, seconds: float, reason: str) -> None:
        self.status.emit(f"{reason}: trying again in {seconds:.0f} s (Esc stops)", 1500)

    @Slot(object)
    def _on_session_approval_requested(self, pending: PendingApproval) -> None:
        """The question sits under the conversation, above the composer; the keys answer
        it (Enter denies). It waits here while another chat is shown."""
        card = ApprovalCard(pending, self.session.chat.id)
        self.session.approval_withdrawn.connect(card.withdraw)
        card.finished.connect(lambda c=card: self._forget_approval(c))
        self.approvals.append(card)
        card.setStyleSheet(theme.conversation_sheet(theme.is_dark()))
        self.column.insertWidget(self.column.indexOf(self._centred_rows[0]), card)
        card.show()  # now, not when the layout gets round to it
        if self.isVisible():
            card.deny.setFocus()

    def _forget_approval(self, card: ApprovalCard) -> None:
        if card in self.approvals:
            self.approvals.remove(card)
        card.hide()
        card.deleteLater()

    def withdraw_approvals(self) -> None:
        for card in list(self.approvals):
            card.withdraw()

    # -- errors -------------------------------------------------------------------------------------

    def show_error(self, error: ErrorInfo | None) -> None:
        self.banner.show_error(error, can_retry=error is not None and self._can_retry(error))

    def _can_retry(self, error: ErrorInfo) -> bool:
        if error.kind in RETRY_WHEN_STORED and not self.session.busy:
            from desktop_app.chats import can_retry  # loaded with the chat already

            return can_retry(self.session.messages)
        return error.kind not in NOT_RETRYABLE


def order_tab_stops(stops: Sequence[QWidget]) -> None:
    for before, after in itertools.pairwise(stops):
        QWidget.setTabOrder(before, after)
