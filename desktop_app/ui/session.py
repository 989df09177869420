"""One open chat: its message model, its planner and latest plan, its running turn.

A session outlives switching to another chat, so a reply keeps streaming into its
model while the user reads something else, and coming back finds the scroll position,
the error banner and the "always allow" answers as they were.

Threads: the turn runs on a `TurnWorker`; planning runs on the shared
`BackgroundWorker`. Everything here runs on the GUI thread, which owns the database
connection, so every event is persisted here, in order, before the model shows it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal, Slot

from desktop_app.context.facts import Fact
from desktop_app.context.state import ContextSettings, ContextState
from desktop_app.core.blocks import Block, TextBlock, block_type
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import ContextDeskError, ErrorInfo
from desktop_app.core.events import (
    LoopEvent,
    MessageAdded,
    MessageStarted,
    RequestStarted,
    TextDelta,
    TransitionReason,
    TurnFinished,
)
from desktop_app.core.messages import Message, MessageStatus, Usage
from desktop_app.core.repair import repair
from desktop_app.core.request import ChatRequest
from desktop_app.services import Services, Turn
from desktop_app.storage.store import ChatInfo, ChatStore
from desktop_app.ui.message_model import BlockChip, ChipSource, MessageListModel
from desktop_app.ui.workers import BackgroundWorker, DialogApprover, PendingApproval, TurnWorker

if TYPE_CHECKING:  # loaded with the first chat, after the first paint
    from desktop_app.context.compaction import CompactionPreview
    from desktop_app.context.planner import ContextPlanner
    from desktop_app.context.projection import Plan

log = logging.getLogger(__name__)

FLUSH_MS = 33  # streamed text reaches the view at most ~30 times a second
NEW_CHAT_TITLE = "New chat"
FIRST_PAGE = 60  # messages read and laid out before a chat's first paint


@dataclass(frozen=True)
class SentRequest:
    """A request exactly as it went out, and what the API reported for its reply."""

    request: ChatRequest
    usage: Usage | None = None


class ChatSession(QObject):
    """Signals:
    busy_changed(bool): a turn started or ended.
    planned(object): a new `Plan` for the next request (chips, meter).
    error_changed(): `error` changed (an `ErrorInfo` to show as a banner, or None).
    approval_requested(object): a `PendingApproval` the window must ask about.
    approval_withdrawn(): the turn was stopped while a question was open.
    chat_changed(object): the `ChatInfo` changed (title, message count, size).
    text_streamed(int): this many characters of a reply were just shown.
    """

    busy_changed = Signal(bool)
    planned = Signal(object)
    error_changed = Signal()
    approval_requested = Signal(object)
    approval_withdrawn = Signal()
    chat_changed = Signal(object)
    text_streamed = Signal(int)

    def __init__(
        self,
        services: Services,
        background: BackgroundWorker,
        chat: ChatInfo,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.services = services
        self.background = background
        self.chat = chat
        self.model = MessageListModel(self)
        self.planner: ContextPlanner | None = None
        self.plan: Plan | None = None
        self.error: ErrorInfo | None = None
        self.always_allowed: set[str] = set()  # "Always for this chat" answers
        self.scroll_value: int | None = None  # where the view was when the user left
        self._turn: Turn | None = None
        self._worker: TurnWorker | None = None
        self._retiring: set[TurnWorker] = set()  # finished turns still closing connections
        self._pending_approval: PendingApproval | None = None
        self._stream_buffer: dict[str, list[str]] = {}
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(FLUSH_MS)
        self._flush_timer.timeout.connect(self._on_flush_timer_timeout)
        self._approver = DialogApprover(self)
        self._approver.approval_requested.connect(self._on_approver_approval_requested)
        self._draft = ""
        self._pending_changes: list[Callable[[ContextState], ContextState]] = []
        self.last_sent: SentRequest | None = None  # the request of the last reply, as sent

    # -- opening and planning -------------------------------------------------------------

    def load(self) -> None:
        """Show the chat's newest messages at once; read the whole history on the
        background thread (its own read-only connection), then plan it."""
        store = self.services.store
        recent = store.recent_messages(self.chat.id, FIRST_PAGE)
        complete = len(recent) >= self.chat.message_count
        self.model.set_messages(recent, complete=complete)
        self.planner, _ = self.services.planner(self.chat)
        if complete:
            self.request_plan()
            return
        path, chat_id = self.services.paths.database, self.chat.id

        def read_history() -> list[Message]:
            reader = ChatStore.open(path)  # WAL: reads alongside the GUI's connection
            try:
                return reader.messages(chat_id)
            finally:
                reader.close()

        self.background.submit(
            f"history:{chat_id}", read_history, self._on_history_read, self.set_error
        )

    def settings_changed(self) -> None:
        """Tools, thinking or the model changed: plan with a planner made from them (the
        context state is on disk, so nothing the user pinned or excluded is lost)."""
        if not self.busy:
            self.planner, _ = self.services.planner(self.chat)
            self.request_plan()

    def _on_history_read(self, history: list[Message]) -> None:
        self.model.attach_history(history)
        self.request_plan()

    @property
    def busy(self) -> bool:
        return self._worker is not None

    @property
    def messages(self) -> Sequence[Message]:
        return self.model.all_messages()

    def request_plan(self, draft: str | None = None) -> None:
        """Plan the next request off the GUI thread (with the composer's draft, if any);
        skipped while a turn runs: the turn plans for itself and a plan follows it."""
        if draft is not None:
            self._draft = draft
        if self.busy or self.planner is None or not self.model.history_complete:
            return  # planned when the turn ends, or when the history has been read
        planner, history, draft_text = self.planner, list(self.messages), self._draft

        def plan() -> tuple[Plan, int]:
            valid = list(repair(history).messages)
            draft_message = (
                [Message("user", (TextBlock(draft_text),))] if draft_text.strip() else []
            )
            result = planner.plan([*valid, *draft_message])
            total = result.counter.calibrated(
                sum(result.counter.message(m) for m in history), planner.model
            )
            return result, total

        self.background.submit(f"plan:{self.chat.id}", plan, self._on_planned, self._on_plan_failed)

    def _on_planned(self, result: tuple[Plan, int]) -> None:
        plan, total = result
        self.plan = plan
        self.model.set_chip_source(_chips_from(plan))
        self.planned.emit(plan)
        if total != self.chat.token_total:
            self.services.store.set_token_total(self.chat.id, total)
            self._refresh_chat()

    def _on_plan_failed(self, error: ErrorInfo) -> None:
        self.set_error(error)

    # -- sending, retrying, stopping --------------------------------------------------------

    def send(self, blocks: Sequence[Block]) -> bool:
        """Store the user's message and start answering it. False if a turn is running."""
        if self.busy or not blocks:
            return False
        message = Message("user", tuple(blocks))
        return self._start(message)

    def retry(self) -> bool:
        """Answer the last user message again (after an error or a stop)."""
        if self.busy:
            return False
        return self._start(None)

    def stop(self) -> None:
        """Stop the running turn; the loop ends within 200 ms and keeps what was said."""
        if self._worker is not None:
            self._worker.cancel.cancel()
        if self._pending_approval is not None:
            self._pending_approval = None
            self.approval_withdrawn.emit()

    def _start(self, message: Message | None) -> bool:
        self.set_error(None)
        try:
            turn = self.services.start_turn(self.chat.id, message, self._approver)
        except ContextDeskError as exc:
            self.set_error(exc.info)
            return False
        turn.state.always_allowed = self.always_allowed  # the same set: answers persist
        if message is not None:
            self.model.append(message)
            self._title_from(message)
        else:  # a retry leaves the failed reply out of the context: show that at once
            self.planner = turn.planner
        self._turn = turn
        self._worker = TurnWorker(turn.events, CancelToken(), turn.release_thread)
        self._worker.event_ready.connect(self._on_worker_event_ready)
        self._worker.crashed.connect(self._on_worker_crashed)
        self._worker.done.connect(self._on_worker_done)
        self._worker.start()
        self.busy_changed.emit(True)
        return True

    @Slot(object)
    def _on_worker_event_ready(self, event: LoopEvent) -> None:
        turn = self._turn
        if turn is None:
            return
        try:
            turn.record(event)  # on disk before it is on screen
        except ContextDeskError as exc:  # a full disk: say so, stop, keep what is shown
            self.set_error(exc.info)
            self.stop()
        if isinstance(event, TextDelta):
            self._stream_buffer.setdefault(event.message_id, []).append(event.text)
            if not self._flush_timer.isActive():
                self._flush_timer.start()
        elif isinstance(event, MessageStarted):
            self.model.append(
                Message("assistant", (), id=event.message_id, status=MessageStatus.STREAMING)
            )
        elif isinstance(event, RequestStarted):
            self.last_sent = SentRequest(event.request)
        elif isinstance(event, MessageAdded):
            self._flush()
            self.model.replace_message(event.message)
            if event.message.usage is not None and self.last_sent is not None:
                self.last_sent = replace(self.last_sent, usage=event.message.usage)
        elif isinstance(event, TurnFinished):
            self._flush()
            self._settle_placeholders()
            if event.error is not None and event.reason is not TransitionReason.CANCELLED:
                self.set_error(event.error)

    @Slot(object)
    def _on_worker_crashed(self, error: ErrorInfo) -> None:
        self._flush()
        self._settle_placeholders()
        self.set_error(error)

    def _settle_placeholders(self) -> None:
        """Rows shown as "streaming" that the loop never finished: an empty one goes
        (the reply failed before its first word); one with words stays, interrupted —
        as the store has it."""
        for message in list(self.model.all_messages()[-8:]):
            if message.role != "assistant" or message.status is not MessageStatus.STREAMING:
                continue
            if message.blocks:
                self.model.replace_message(replace(message, status=MessageStatus.INTERRUPTED))
            else:
                self.model.remove_message(message.id)

    @Slot()
    def _on_worker_done(self) -> None:
        turn, worker = self._turn, self._worker
        self._turn = self._worker = None
        self._pending_approval = None
        if worker is not None:  # it still closes its connections: keep it until it ends
            self._retiring.add(worker)
            worker.thread_finished.connect(self._on_worker_thread_finished)
        if turn is not None:
            try:
                turn.finish()
            except ContextDeskError as exc:
                self.set_error(exc.info)
            if self.planner is not None:
                self.planner.state = turn.planner.state  # suggested facts, compaction, breaker
        self._refresh_chat()
        self.busy_changed.emit(False)
        changes, self._pending_changes = self._pending_changes, []
        for change in changes:
            self._change_state(change)
        self.request_plan()

    @Slot()
    def _on_worker_thread_finished(self) -> None:
        for worker in [w for w in self._retiring if w.wait(0)]:
            self._retiring.discard(worker)
            worker.deleteLater()

    @Slot()
    def _on_flush_timer_timeout(self) -> None:
        self._flush()

    def _flush(self) -> None:
        buffered, self._stream_buffer = self._stream_buffer, {}
        for message_id, parts in buffered.items():
            text = "".join(parts)
            self.model.append_text(message_id, text)
            self.text_streamed.emit(len(text))

    @Slot(object)
    def _on_approver_approval_requested(self, pending: PendingApproval) -> None:
        self._pending_approval = pending
        self.approval_requested.emit(pending)

    # -- the user's edits to memory and to the chat -------------------------------------------

    def set_error(self, error: ErrorInfo | None) -> None:
        self.error = error
        self.error_changed.emit()

    def is_excluded(self, message: Message) -> bool:
        return self.planner is not None and message.id in self.planner.state.excluded_messages

    def set_excluded(self, message: Message, excluded: bool) -> None:
        self._change_state(lambda s: s.exclude_message(message.id, excluded))

    def pin_fact(self, text: str) -> None:
        text = text.strip()
        if text:
            self._change_state(lambda s: s.pin(Fact(text)))

    def _change_state(self, change: Callable[[ContextState], ContextState]) -> None:
        """Apply a user's change to the context now, or — while a turn runs and its
        planner owns the state — as soon as the turn ends, so neither change is lost."""
        if self.busy:
            self._pending_changes.append(change)
            return
        if self.planner is None:
            return
        self.planner.state = change(self.planner.state)
        try:
            self.services.store.save_context_state(self.chat.id, self.planner.state)
        except ContextDeskError as exc:
            self.set_error(exc.info)
        self.request_plan()

    # Pinned facts: each change is one new state, saved at once (or after a running turn).

    def add_fact(self, text: str) -> None:
        self.pin_fact(text)

    def edit_fact(self, fact: Fact, text: str) -> None:
        if text.strip() and text.strip() != fact.text:
            self._change_state(lambda s: s.update_fact(fact.edited(text.strip())))

    def delete_fact(self, fact: Fact) -> None:
        self._change_state(lambda s: s.unpin(fact.id))

    def restore_fact(self, fact: Fact, index: int) -> None:
        """Undo a deletion: the fact comes back where it was."""
        self._change_state(lambda s: s.pin(fact).move_fact(fact.id, index))

    def move_fact(self, fact: Fact, index: int) -> None:
        self._change_state(lambda s: s.move_fact(fact.id, index))

    def accept_fact(self, fact: Fact, text: str | None = None) -> None:
        """A fact the model suggested is pinned (as the user edited it, if they did)."""
        accepted = replace(fact.edited(text.strip()) if text else fact, pending=False)
        self._change_state(lambda s: s.update_fact(accepted))

    # Summaries, settings and the system prompt.

    def apply_compaction(self, preview: CompactionPreview, text: str) -> None:
        from desktop_app.context.compaction import apply_preview

        self._change_state(lambda s: apply_preview(s, preview, text))

    def undo_compaction(self) -> None:
        self._change_state(lambda s: s.undo_summary())

    def resume_auto_compaction(self) -> None:
        self._change_state(lambda s: s.resume_auto_compaction())

    def clear_tool_results(self, tool_use_ids: set[str]) -> None:
        self._change_state(lambda s: s.clear_results(tool_use_ids))

    def set_context_settings(self, settings: ContextSettings) -> None:
        self._update_chat(settings=settings)

    def set_system_prompt(self, text: str) -> None:
        self._update_chat(system_prompt=text)

    def _update_chat(self, **changes: object) -> None:
        try:
            self.chat = self.services.store.update_chat(self.chat.id, **changes)  # type: ignore[arg-type]
        except ContextDeskError as exc:
            self.set_error(exc.info)
            return
        self.chat_changed.emit(self.chat)
        self.settings_changed()

    def state(self) -> ContextState:
        return self.planner.state if self.planner is not None else ContextState()

    def fork(self, through: Message) -> ChatInfo:
        """A new chat with the messages up to and including `through`."""
        title = f"{self.chat.title} (fork)"
        return self.services.store.fork(self.chat.id, through.id, title)

    def fork_before(self, message: Message) -> ChatInfo:
        """A new chat with everything before `message` (edit-and-resend starts there)."""
        messages = self.services.store.messages(self.chat.id)  # all of it, even mid-load
        position = next(i for i, m in enumerate(messages) if m.id == message.id)
        title = f"{self.chat.title} (edited)"
        if position == 0:
            store = self.services.store
            return store.create_chat(
                title, self.chat.model, self.chat.system_prompt, self.chat.settings
            )
        return self.services.store.fork(self.chat.id, messages[position - 1].id, title)

    def close(self) -> None:
        """The window is closing: stop the turn, let it store what it has, and wait for
        every worker thread to close its connections."""
        worker = self._worker
        if worker is not None:
            self.stop()
            worker.wait(3000)
            QCoreApplication.sendPostedEvents()  # deliver its last events: they get stored
        for retiring in list(self._retiring):
            retiring.wait(3000)

    def _title_from(self, message: Message) -> None:
        """A new chat is named after its first message (rename it any time)."""
        if self.chat.title != NEW_CHAT_TITLE or len(self.messages) != 1 or not message.text:
            return
        words = " ".join(message.text.split())
        title = words if len(words) <= 48 else words[:47].rsplit(" ", 1)[0] + "…"
        try:
            self.chat = self.services.store.update_chat(self.chat.id, title=title)
        except ContextDeskError:
            return  # the name is a nicety; the message is already stored
        self.chat_changed.emit(self.chat)

    def _refresh_chat(self) -> None:
        try:
            self.chat = self.services.store.chat(self.chat.id)
        except ContextDeskError:
            return  # deleted meanwhile
        self.chat_changed.emit(self.chat)


def _chips_from(plan: Plan) -> ChipSource:
    """Each block's chip, read from the plan when the view asks for it (only rows on
    screen are asked, so a 10,000-message chat costs what its visible rows cost)."""

    def chip(message: Message, index: int) -> BlockChip:
        if message.status is MessageStatus.STREAMING:
            return BlockChip(block_type(message.blocks[index]), 0, False, "streaming")
        try:
            status = plan.block_status(message, index)
        except (IndexError, KeyError):
            return BlockChip(block_type(message.blocks[index]), 0, False, "")
        kind = block_type(message.blocks[index])
        return BlockChip(kind, status.tokens, False, status.label, status.sent_tokens)

    return chip
