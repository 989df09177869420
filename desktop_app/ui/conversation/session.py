"""One open chat in the window: a Qt adapter over the application layer's `Chat`.

The `Chat` has every action (pin, exclude, compact, send…); this adds what only a window
needs: threads, timers, signals, the message model and the latest plan. A session
outlives switching to another chat, so a reply keeps streaming into its model while the
user reads something else, and coming back finds the scroll position, the error banner
and the "always allow" answers as they were.

Threads: the turn runs on an `ActionWorker`; planning runs on the shared
`BackgroundWorker`. Everything here runs on the GUI thread, which owns the database
connection, so every event is persisted here, in order, before the model shows it.
"""

from __future__ import annotations

import functools
import gc
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal, Slot

from desktop_app import said
from desktop_app.chats import Changes, Chat, Engine, Turn, give_back_freed_memory, retry_point
from desktop_app.context.chat_settings import ContextSettings
from desktop_app.context.facts import Fact
from desktop_app.context.state import ContextState
from desktop_app.core.blocks import Block, block_type
from desktop_app.core.errors import ContextDeskError, ErrorInfo, ErrorKind
from desktop_app.core.events import (
    LoopEvent,
    MessageAdded,
    MessageStarted,
    RequestStarted,
    RetryWaiting,
    TextDelta,
    TransitionReason,
    TurnFinished,
)
from desktop_app.core.messages import Message, MessageStatus, Usage
from desktop_app.core.request import ChatRequest
from desktop_app.ui.conversation.approval_card import PendingApproval, WindowApprover
from desktop_app.ui.conversation.cache_clock import CacheClock
from desktop_app.ui.conversation.message_model import BlockChip, ChipSource, MessageListModel
from desktop_app.ui.workers import ActionWorker, BackgroundWorker

if TYPE_CHECKING:  # loaded with the first chat, after the first paint
    from desktop_app.context.compaction import CompactionPreview
    from desktop_app.context.plan import Plan

log = logging.getLogger(__name__)

FLUSH_MS = 33  # streamed text reaches the view at most ~30 times a second
COUNT_AFTER_MS = 1500  # the server counts the next request once the draft rests this long
FREEZE_AT = 20_000  # messages: a history this long is set aside from the collector
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
    retry_waiting(float, str): the server refused for now; trying again in N s (reason).
    """

    busy_changed = Signal(bool)
    planned = Signal(object)
    error_changed = Signal()
    approval_requested = Signal(object)
    approval_withdrawn = Signal()
    chat_changed = Signal(object)
    text_streamed = Signal(int)
    retry_waiting = Signal(float, str)
    told = Signal(str)  # a passing word for the status bar (what a change costs)

    def __init__(
        self,
        engine: Engine,
        chat: Chat,
        background: BackgroundWorker,
        parent: QObject | None = None,
        counting: BackgroundWorker | None = None,
    ) -> None:
        super().__init__(parent)
        self.engine = engine
        self.chat = chat
        self.background = background
        # The server's count of the next request (count_tokens), asked once the plan has
        # stood still a moment, on a thread of its own: a network call never holds a plan.
        self.counting = counting
        self._count_soon = QTimer(self)
        self._count_soon.setSingleShot(True)
        self._count_soon.setInterval(COUNT_AFTER_MS)
        self._count_soon.timeout.connect(self._on_count_soon_timeout)
        self.model = MessageListModel(self)
        self.plan: Plan | None = None
        self.error: ErrorInfo | None = None
        self.always_allowed: set[str] = set()  # "Always for this chat" answers
        self.scroll_value: int | None = None  # where the view was when the user left
        self.last_sent: SentRequest | None = None  # the request of the last reply, as sent
        self._turn: Turn | None = None
        self._worker: ActionWorker | None = None
        self._retiring: set[ActionWorker] = set()  # finished turns still closing connections
        self._pending_approval: PendingApproval | None = None
        self._stream_buffer: dict[str, list[str]] = {}
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(FLUSH_MS)
        self._flush_timer.timeout.connect(self._on_flush_timer_timeout)
        self._approver = WindowApprover(self)
        self._approver.approval_requested.connect(self._on_approver_approval_requested)
        self._draft: Sequence[Block] = ()  # the composer's next message, as it would be sent
        self._editing: Message | None = None  # the message the draft is a new version of
        self._reads = 0  # each read of the whole history, numbered: a late one is dropped
        self._read_long_history = False  # (until its first plan: `give_back_freed_memory`)
        self._planning_ready = False
        self.cache = CacheClock(engine.clock, self)  # the prompt cache, counting down
        self.budget_refusal: ErrorInfo | None = None  # why the last send was held back

    # -- opening and planning -------------------------------------------------------------

    def load(self) -> None:
        """Show the chat's newest messages at once; read the whole history on the
        background thread (its own read-only connection), then plan it."""
        recent = self.chat.recent_messages(FIRST_PAGE)
        info = self.chat.refresh_info()  # (the count as stored now: another program writes too)
        # (the count holds every branch's messages; a short read is the whole branch)
        complete = len(recent) < FIRST_PAGE or len(recent) >= info.message_count
        self.model.set_messages(recent, complete=complete)
        self._show_branch_points()
        self._prepare_planning()
        if complete:
            self.request_plan()
            return
        self._reads += 1
        read = self.engine.reader(self.chat.id)
        self.background.submit(
            f"history:{self.chat.id}",
            read,
            functools.partial(self._on_history_read, self._reads),
            self.set_error,
        )

    def reload(self) -> None:
        """The chat changed in another program (the command line): show it as stored.
        The messages are read again only if the transcript changed (a pin elsewhere
        must not throw away the reader's place); the context state always is."""
        if self.busy:
            return
        try:
            self.chat.reload()
            newest = self.chat.recent_messages(1)
        except ContextDeskError as exc:  # trashed or unreadable: say so, keep what is shown
            self.set_error(exc.info)
            return
        shown = self.model.all_messages()
        info = self.chat.info  # (a branched chat's count holds every branch's messages)
        same = (info.branched or len(shown) == info.message_count) and (
            [m.id for m in newest] == [m.id for m in shown[-1:]]
        )
        self._planning_ready = False
        if same:
            self._prepare_planning()
            self.request_plan()
        else:
            self.load()
        self.chat_changed.emit(self.chat.info)

    def _prepare_planning(self) -> None:
        try:
            self.chat.plans.planner()  # loads the context engine and the chat's state
        except ContextDeskError as exc:
            self.set_error(exc.info)
            return
        self._planning_ready = True

    def settings_changed(self) -> None:
        """Tools, thinking or the model changed: plan afresh (the context state is on
        disk, so nothing the user pinned or excluded is lost)."""
        if not self.busy:
            self.chat.plans.settings_changed()
            self._prepare_planning()
            self.request_plan()

    def _on_history_read(self, number: int, history: list[Message]) -> None:
        if number != self._reads:  # read before the branch shown changed: not this one
            return
        self.model.attach_history(history)
        if len(history) >= FREEZE_AT:
            # A long history is objects the garbage collector would walk at each full
            # collection (≈80 ms at 100,000 messages, the window stopped, whenever
            # enough new objects outlive a collection): set aside, as `gc.freeze` is
            # meant for. Messages hold no cycles: still freed when the chat lets go.
            gc.freeze()
            self._read_long_history = True  # its temporaries go back after the plan
        self.request_plan()

    @property
    def busy(self) -> bool:
        return self._worker is not None

    @property
    def messages(self) -> Sequence[Message]:
        return self.model.all_messages()

    def state(self) -> ContextState:
        return self.chat.state

    def request_plan(
        self, draft: Sequence[Block] | None = None, *, editing: Message | bool | None = False
    ) -> None:
        """Plan the next request off the GUI thread (with the composer's draft and its
        attachments, if any: the meter counts them live — and, while a message of the
        user's is being edited, as its new version: the branch Send will make);
        skipped while a turn runs: the turn plans for itself and a plan follows it."""
        if draft is not None:
            self._draft = draft
        if editing is not False:  # (False: as before)
            self._editing = editing if isinstance(editing, Message) else None
        if self.busy or not self._planning_ready or not self.model.history_complete:
            return  # planned when the turn ends, or when the history has been read
        history = self.model.transcript()  # (it says how far it goes on from the last)
        make_plan = self.chat.plans.next_planning(self._draft, history, beside=self._editing)
        size = self.chat.plans.transcript_tokens

        def plan() -> tuple[Plan, int, Sequence[Message]]:
            return make_plan(), size(history), history

        self.background.submit(f"plan:{self.chat.id}", plan, self._on_planned, self._on_plan_failed)

    def _on_planned(self, result: tuple[Plan, int, Sequence[Message]]) -> None:
        plan, total, history = result
        self.plan = plan
        keep = functools.partial(self.engine.keep_counts, history)  # for the next start
        self.background.submit("keep-counts", keep, lambda _kept: None)
        if self._read_long_history:
            self._read_long_history = False
            self.background.submit("heap", give_back_freed_memory, lambda _given: None)
        self.model.set_chip_source(_chips_from(plan))
        self.planned.emit(plan)
        self._show_cache(plan)
        if self.counting is not None:
            self._count_soon.start()
        try:
            if self.chat.plans.remember_size(total):
                self.chat_changed.emit(self.chat.info)
        except ContextDeskError:
            log.warning("the chat's size was not saved", exc_info=True)  # shown anyway

    def _show_cache(self, plan: Plan) -> None:
        """The prompt cache before `plan`'s request, and what it would cost."""
        try:
            self.cache.show(self.chat.costs.cache_outlook(plan))
        except ContextDeskError:
            log.warning("the prompt cache's state was not read", exc_info=True)

    def _on_plan_failed(self, error: ErrorInfo) -> None:
        self.set_error(error)

    @Slot()
    def _on_count_soon_timeout(self) -> None:
        plan = self.plan
        if plan is None or self.counting is None or self.busy or plan.exact_input is not None:
            return
        counting = self.chat.plans.counting(plan)
        if counting is None:
            return

        def counted(_changes: Changes) -> None:
            exact = counting.counted
            if exact is None or self.plan is not plan:  # no endpoint, or planned again since
                return
            self.plan = exact
            self.planned.emit(exact)
            self._show_cache(exact)

        def not_counted(error: ErrorInfo) -> None:  # the estimate stands; nothing to say
            log.info("no exact count for the next request: %s", error.title)

        self.counting.submit_action(f"count:{self.chat.id}", counting, counted, not_counted)

    # -- sending, retrying, stopping --------------------------------------------------------

    def send(
        self, blocks: Sequence[Block], *, beside: Message | None = None, over_budget: bool = False
    ) -> bool:
        """Store the user's message and start answering it — `beside` a message of the
        user's, as its new version (a new branch). False if it was not stored (a turn is
        running, or the disk said no: the banner says why; or a hard spending cap said
        no: `budget_refusal` says why, for the window to ask about)."""
        if self.busy or not blocks:
            return False
        if beside is None:
            return self._start(Message("user", tuple(blocks)), over_budget=over_budget)
        try:
            edited = self.chat.branches.edited(beside, blocks)
        except ContextDeskError as exc:
            self.set_error(exc.info)
            return False
        return self._start(edited, beside=beside.id, over_budget=over_budget)

    def retry(self, *, over_budget: bool = False) -> bool:
        """Answer the last user message again (after an error or a stop): beside a
        failed or interrupted reply, as its new version."""
        if self.busy:
            return False
        return self._start(None, after=retry_point(self.messages), over_budget=over_budget)

    def regenerate(self, reply: Message, *, over_budget: bool = False) -> bool:
        """Answer the message a reply answers again, beside it (a new branch)."""
        if self.busy:
            return False
        try:
            prompt = self.chat.branches.prompt_of(reply, self.messages)
        except ContextDeskError as exc:
            self.set_error(exc.info)
            return False
        return self._start(None, after=prompt.id, over_budget=over_budget)

    def show_branch(self, message_id: str) -> None:
        """Show another version of a message, and the branch that goes on from it: the
        rows from there are replaced, the context and the next request follow."""
        if not self.busy and self._versions_of(message_id):
            self._act(lambda: self.chat.branches.show(message_id))

    def _versions_of(self, message_id: str) -> tuple[str, ...]:
        for siblings in self.model.branch_points().values():
            if message_id in siblings.ids:
                return siblings.ids
        return ()

    def _show_branch_points(self) -> None:
        try:
            self.model.set_branch_points(self.chat.branches.points())
        except ContextDeskError:
            log.warning("the chat's branches could not be read", exc_info=True)

    def stop(self) -> None:
        """Stop the running turn; the loop ends within 200 ms and keeps what was said."""
        if self._worker is not None:
            self._worker.cancel.cancel()
        if self._pending_approval is not None:
            self._pending_approval = None
            self.approval_withdrawn.emit()

    def _start(
        self,
        message: Message | None,
        *,
        beside: str | None = None,
        after: str | None = None,
        over_budget: bool = False,
    ) -> bool:
        self.set_error(None)
        self.budget_refusal = None
        ids = [m.id for m in self.messages]
        try:
            turn = self.chat.turns.start(
                message, self._approver, beside=beside, after=after, over_budget=over_budget
            )
        except ContextDeskError as exc:
            if exc.info.kind is ErrorKind.OVER_BUDGET:
                self.budget_refusal = exc.info  # a question for the user, not an error
            else:
                self.set_error(exc.info)
            return False
        turn.state.always_allowed = self.always_allowed  # the same set: answers persist
        branching = beside is not None or after is not None
        if branching and (not self.model.history_complete or (beside or after) not in ids):
            self.load()  # the rows shown are not all the branch's: read it as it is now
        elif branching:  # the branch goes on from before the edited message, or the question
            at = ids.index(beside) - 1 if beside is not None else ids.index(str(after))
            self.model.cut_after(ids[at] if at >= 0 else None)
            self._show_branch_points()
        if message is not None:  # (already there if the branch was read again)
            self.model.append(message)
            self.chat_changed.emit(self.chat.info)  # named after its first message
        self._turn = turn
        self._worker = ActionWorker(turn, "turn")
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
        elif isinstance(event, RetryWaiting):
            self.retry_waiting.emit(event.seconds, event.reason)
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
        changes = Changes()
        if turn is not None:
            try:  # keeps suggested facts and applies edits made meanwhile
                changes = turn.finish()
            except ContextDeskError as exc:
                self.set_error(exc.info)
            self._show_branch_points()  # a regenerated reply is a version now
        self.busy_changed.emit(False)
        # (a regeneration that brought nothing shows the answer it had: `changes.rows`)
        self.apply(replace(changes, info=self.chat.info, replan=True))

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

    def apply(self, changes: Changes) -> None:
        """Show what an action changed, as it says — the one place the window does
        (`Changes`): the chat's row, the rows of a branch, the plan, a note to say."""
        if changes.info is not None:
            self.chat_changed.emit(changes.info)
        if changes.rows is not None:
            if self.model.history_complete:
                self.model.cut_after(changes.rows.after)
                for message in changes.rows.messages:
                    self.model.append(message)
                self._show_branch_points()
            else:  # (a read under way is of the old branch)
                self.load()
                return
        if changes.notes:  # what had to change to fit (a model's output limit, its thinking)
            self.told.emit(" ".join(changes.notes))
        if changes.cost is not None:  # what the change does to the next turn's cost
            self.told.emit(said.input_cost(changes.cost))
        if changes.replan:
            self._prepare_planning()  # (the planner, made again if the settings changed)
            self.request_plan()

    def _act(self, action: Callable[[], Changes]) -> bool:
        """Run one of the chat's actions and show what it changed; a failure (a full
        disk…) becomes the banner and changes nothing."""
        try:
            changes = action()
        except ContextDeskError as exc:
            self.set_error(exc.info)
            return False
        self.apply(changes)
        return True

    def _shown(self) -> Sequence[Message] | None:
        """The history an action's cost is worked out on: none while a turn runs (the
        edit waits for it, and planning now would hold up the window)."""
        return None if self.busy else self.model.transcript()

    def is_excluded(self, message: Message) -> bool:
        return self.chat.memory.is_excluded(message)

    def set_excluded(self, message: Message, excluded: bool) -> None:
        history = self._shown()
        self._act(lambda: self.chat.memory.set_excluded(message, excluded, history=history))

    def pin_fact(self, text: str) -> bool:
        return self._act(lambda: self.chat.memory.pin(text))

    def edit_fact(self, fact: Fact, text: str) -> None:
        self._act(lambda: self.chat.memory.edit_fact(fact, text))

    def delete_fact(self, fact: Fact) -> None:
        self._act(lambda: self.chat.memory.unpin(fact))

    def restore_fact(self, fact: Fact, index: int) -> None:
        self._act(lambda: self.chat.memory.restore_fact(fact, index))

    def move_fact(self, fact: Fact, index: int) -> None:
        self._act(lambda: self.chat.memory.move_fact(fact, index))

    def fact_to_project(self, fact: Fact) -> None:
        """Pin (or accept) the fact for every chat of this chat's project instead."""

        def to_project() -> Changes:
            self.engine.projects.accept_to_project(self.chat, fact.id)
            return Changes(state=self.chat.state, replan=True)

        self._act(to_project)

    def accept_fact(self, fact: Fact, text: str | None = None) -> None:
        self._act(lambda: self.chat.memory.accept_fact(fact, text))

    def apply_compaction(self, preview: CompactionPreview, text: str) -> bool:
        return self._act(lambda: self.chat.memory.apply_compaction(preview, text))

    def undo_compaction(self) -> None:
        history = self._shown()
        self._act(lambda: self.chat.memory.undo_compaction(history=history))

    def resume_auto_compaction(self) -> None:
        self._act(self.chat.memory.resume_auto_compaction)

    def clear_tool_results(self, tool_use_ids: set[str]) -> None:
        self._act(lambda: self.chat.memory.clear_tool_results(tool_use_ids))

    def set_context_settings(self, settings: ContextSettings) -> None:
        self._act(lambda: self.chat.setup.set_settings(settings))

    def switch_model(self, model: str) -> None:
        self._act(lambda: self.chat.setup.switch_model(model))

    def change(self, assignments: dict[str, str]) -> None:
        """Chat settings as `chat set` takes them (the chat bar's thinking menu)."""
        self._act(lambda: self.chat.setup.change(assignments))

    def set_system_prompt(self, text: str) -> None:
        self._act(lambda: self.chat.setup.set_system_prompt(text))

    def rename(self, title: str) -> None:
        self._act(lambda: self.chat.rename(title))

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


def _chips_from(plan: Plan) -> ChipSource:
    """Each block's chip, read from the plan when the view asks for it (only rows on
    screen are asked, so a 10,000-message chat costs what its visible rows cost)."""

    def chip(message: Message, index: int) -> BlockChip:
        if message.status is MessageStatus.STREAMING:
            return BlockChip(block_type(message.blocks[index]), 0, False, None, streaming=True)
        try:
            status = plan.block_status(message, index)
        except (IndexError, KeyError):
            return BlockChip(block_type(message.blocks[index]), 0, False, None)
        kind = block_type(message.blocks[index])
        return BlockChip(kind, status.tokens, False, status.state, status.sent_tokens, status.label)

    return chip
