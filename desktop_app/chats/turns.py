"""A chat's turns (`chat.turns`): storing the user's message and making the `Turn` that
answers it — a new message, an edit (a new branch beside the old message), a retry, a
regeneration — and taking back what the turn left when it ends."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from desktop_app.chats.branches import Branches
from desktop_app.chats.changes import NOTHING, Changes, Rows
from desktop_app.chats.chat_core import ChatCore, without_failed_replies
from desktop_app.chats.names import NEW_CHAT_TITLE
from desktop_app.chats.planning import Planning
from desktop_app.chats.turn import Turn, TurnRecorder
from desktop_app.context.state import ContextState
from desktop_app.core.blocks import Block, TextBlock
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import ContextDeskError, ErrorKind
from desktop_app.core.events import LoopEvent, TurnFinished
from desktop_app.core.messages import Message
from desktop_app.core.ports import Approver

if TYPE_CHECKING:
    from desktop_app.context.planner import ContextPlanner
    from desktop_app.storage.ledger import RequestRecorder


class Turns:
    def __init__(self, core: ChatCore, plans: Planning, branches: Branches) -> None:
        self._core = core
        self._plans = plans
        self._branches = branches
        self._turn: Turn | None = None
        self._sent: RequestRecorder | None = None  # the ledger's memory of the last request
        # A regeneration under way: (the question answered again, the branch end shown before)
        self._answering_again: tuple[str, str | None] | None = None

    def start(
        self,
        message: Message | None,
        approver: Approver,
        *,
        beside: str | None = None,
        after: str | None = None,
        over_budget: bool = False,
    ) -> Turn:
        """Store the user's `message` (when this returns it is on disk) and make the turn
        that answers it; `beside` another message, it is that one's alternative (an
        edit: a new branch). With no message, retry: answer the history as it stands,
        leaving a failed or interrupted last reply out of the context (the transcript
        keeps it) — or, `after` a message of the user's, answer it again beside the
        replies it has (regenerate: a new branch). A failed write raises and changes
        nothing; so does a send that would cross a hard spending cap (OVER_BUDGET),
        unless the user chose to go `over_budget` this once."""
        from desktop_app.core.loop import LoopConfig, LoopPorts, LoopState

        if beside is not None and message is None:
            raise ValueError("an alternative to a message needs the message")
        core = self._core
        core.check_not_answering("send")
        store = core.host.store
        core.check_no_turn_elsewhere()
        core.keep_state(store.context_state(core.id))  # as another program may have left it
        if after is not None and after in core.state.excluded_messages:
            raise ContextDeskError(  # (the request would end with Claude's reply before it)
                "Your message is left out",
                "Regenerate answers your message again, but it is excluded from the context: "
                "Claude would have nothing to answer. Include it again (its menu: Include in "
                "context), or send a new message.",
                kind=ErrorKind.USAGE,
            )
        if not over_budget:
            self._refuse_over_budget(message)
        planner = self._plans.planner()
        self._refuse_too_many_pages(message, planner, beside, after)
        store.turn_started(core.id, os.getpid())  # first: if the disk is full, nothing is stored
        try:
            if after is not None:  # until the new answer is stored, the old one stays shown
                self._answering_again = (after, store.chat(core.id).leaf_id)
                self._branches.switch(after, exactly=True)
            if message is not None:
                store.append_message(core.id, message, beside=beside)
                self._name_after(message)
            if beside is not None:  # a new branch: its own summaries only
                core.keep_state(store.context_state(core.id))
            history = core.history() if message is not None else self._prepare_retry()
        except BaseException:
            with contextlib.suppress(ContextDeskError):
                self._show_old_answer_if_none_came()
                store.turn_ended(core.id, os.getpid())
            raise
        ports = LoopPorts(
            backend=core.host.connection.lazy(),
            planner=planner,
            approver=approver,
            tools=self._plans.tools(),
            counter=core.host.counter,
        )
        self._turn = Turn(
            self,
            LoopState(history),
            ports,
            LoopConfig(context_window=core.settings.context_window),
            TurnRecorder(
                store,
                core.id,
                core.host.counter,
                server=core.host.connection.server(),
                requests=self._request_recorder(),
                clock=core.host.clock,
            ),
        )
        core.answering = True
        return self._turn

    def _refuse_too_many_pages(
        self,
        message: Message | None,
        planner: ContextPlanner,
        beside: str | None,
        after: str | None,
    ) -> None:
        """Refuse (FORMAT) a send whose request would carry more PDF pages than the API
        reads, before anything is stored: counted over the branch and `message` (all the
        request can carry), and, only past the limit, over the request this send makes —
        an edit's (the messages before the one edited, then the edit), a regeneration's
        (the branch up to `after`), a retry's, or the next one."""
        from desktop_app.chats.page_limit import check_request_pages

        core, plans = self._core, self._plans
        stored = core.messages()

        def planned() -> Sequence[Message]:
            if after is not None:
                return plans.answering_again(after, stored, planner=planner)().request.messages
            edited = next((m for m in stored if m.id == beside), None) if beside else None
            draft = message.blocks if message is not None else ""
            making = plans.next_planning(draft, stored, beside=edited, planner=planner)
            return making().request.messages

        documents = planner.project.documents if planner.project else ()
        everything = [*stored, message] if message is not None else stored
        check_request_pages(everything, documents, core.settings.context_window, planned)

    def _refuse_over_budget(self, message: Message | None) -> None:
        """Refuse (OVER_BUDGET) this send's input would cross a hard cap (planned only when
        a hard cap is set: most chats have none)."""
        from desktop_app.chats.budgets import any_hard_cap, check_send

        if not any_hard_cap(self._core):
            return
        from desktop_app.chats.costs import cache_outlook

        plan = self._plans.plan(message.text if message is not None else "")
        check_send(self._core, cache_outlook(self._core, plan).now)

    def send(
        self,
        message: str | Sequence[Block],
        approver: Approver,
        cancel: CancelToken | None = None,
        on_event: Callable[[LoopEvent], None] | None = None,
    ) -> TurnFinished:
        """Send a message and answer it on this thread, persisting every event."""
        blocks = (TextBlock(message),) if isinstance(message, str) else tuple(message)
        return self.answer(self.start(Message("user", blocks), approver), cancel, on_event)

    def answer(
        self,
        turn: Turn,
        cancel: CancelToken | None = None,
        on_event: Callable[[LoopEvent], None] | None = None,
    ) -> TurnFinished:
        """Run a started turn (`start`: a message, an edit, a retry, a regeneration) on
        this thread to its end, persisting every event before `on_event` sees it."""
        from desktop_app.chats.slow import run_here

        ended: list[TurnFinished] = []

        def seen(event: LoopEvent) -> None:
            if isinstance(event, TurnFinished):
                ended.append(event)
            if on_event is not None:
                on_event(event)

        run_here(turn, cancel, seen)
        return ended[-1]  # run_turn always ends with TurnFinished

    def _request_recorder(self) -> RequestRecorder:
        if self._sent is None:
            from desktop_app.storage.ledger import RequestRecorder

            self._sent = RequestRecorder()
        return self._sent

    def _prepare_retry(self) -> list[Message]:
        """The history a retry answers: the stored one without its failed or interrupted
        last replies, which leave the context too (read before any repair: a repair
        would merge them into the reply before them)."""
        core = self._core
        messages = core.messages()
        kept = without_failed_replies(messages)
        state = core.state
        for failed in messages[len(kept) :]:
            state = state.exclude_message(failed.id)
        messages = kept
        if not messages or messages[-1].role != "user":
            raise ContextDeskError(
                "Nothing to retry",
                "The last reply finished; send a new message instead.",
                kind=ErrorKind.NOTHING_TO_RETRY,
            )
        core.save_state(state)
        return core.history(messages)

    def _name_after(self, message: Message) -> None:
        """A new chat is named after its first message (rename it any time)."""
        core = self._core
        info = core.refresh_info()
        if info.title != NEW_CHAT_TITLE or info.message_count != 1 or not message.text:
            return
        from desktop_app.core.titles import title_from

        # What was typed goes last (after attachments and paste cards): it names the chat
        typed = next(
            (b.text for b in reversed(message.blocks) if isinstance(b, TextBlock) and b.text),
            "",
        )
        try:
            core.rename(title_from(typed, NEW_CHAT_TITLE))
        except ContextDeskError:
            return  # the name is a nicety; the message is already stored

    # -- what `Turn` tells its owner (chats/turn.TurnOwner) -----------------------------------

    def record_compaction_requests(self) -> None:
        self._plans.record_compaction_requests()

    def turn_state_changed(self, state: ContextState) -> None:
        self._core.host.store.save_context_state(self._core.id, state)
        self._core.keep_state(state)

    def turn_ended(self, turn: Turn) -> Changes:
        core = self._core
        if self._turn is not turn:
            return NOTHING
        self._turn = None
        core.answering = False
        self._plans.record_compaction_requests()  # auto-compaction's, if it ran
        state = core.planner.state if core.planner is not None else core.state
        state = core.take_queued(state)
        stored = core.state  # (as saved: each change during the turn was, as it came)
        core.keep_state(state)  # shown even if saving fails below; the error says so
        try:
            if state != stored:  # (unchanged, a write would only wait for the disk)
                core.save_state(state)
            rows = self._show_old_answer_if_none_came()
            core.refresh_info()
        finally:
            core.host.store.turn_ended(core.id, os.getpid())
        return Changes(info=core.info, state=core.state, replan=True, rows=rows)

    def _show_old_answer_if_none_came(self) -> Rows | None:
        """A regeneration stopped or failed before its first word stored nothing: the
        branch shown ends at the question still, so the answer it had comes back (the
        rows after the question)."""
        if self._answering_again is None:
            return None
        question, was_shown = self._answering_again
        self._answering_again = None
        core = self._core
        if core.host.store.chat(core.id).leaf_id != question:  # (any new message clears it)
            return None
        core.host.store.show_end(core.id, was_shown)
        core.refresh_info()
        core.forget_state()  # its summaries again
        return Rows(question, tuple(self._branches.messages_after(question)))
