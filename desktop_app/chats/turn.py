"""One user message being answered, split so that two threads can share the work.

`events` runs the loop (a worker thread may iterate it); `record` and `finish` persist
what it says, on the thread that owns the database connection. Persistence rules
(docs/architecture.md, "One turn, as data"): the user's message is on disk before
anything is sent; a streaming reply is checkpointed at most about once a second, never per
token; every finished message is stored when the loop announces it; a context-state
change (a compaction, the breaker, a suggested fact) is saved in one transaction.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from desktop_app.context.state import ContextState
from desktop_app.core.blocks import TextBlock
from desktop_app.core.cancel import CancelToken
from desktop_app.core.events import (
    CompactionApplied,
    CompactionFailed,
    ContextStateChanged,
    LoopEvent,
    MessageAdded,
    MessageStarted,
    RequestStarted,
    TextDelta,
    TurnFinished,
)
from desktop_app.core.messages import Message, MessageStatus
from desktop_app.core.request import ChatRequest
from desktop_app.storage import ledger
from desktop_app.storage.store import ChatStore
from desktop_app.tokens.counter import TokenCounter

if TYPE_CHECKING:
    from desktop_app.chats.changes import Changes
    from desktop_app.core.loop import LoopConfig, LoopPorts, LoopState

CHECKPOINT_EVERY_S = 1.0


class TurnOwner(Protocol):
    """What a turn tells the chat it answers in (`chats/turns.Turns`)."""

    def record_compaction_requests(self) -> None: ...

    def turn_state_changed(self, state: ContextState) -> None: ...

    def turn_ended(self, turn: Turn) -> Changes: ...


@dataclass
class Turn:
    owner: TurnOwner
    state: LoopState
    ports: LoopPorts
    config: LoopConfig
    recorder: TurnRecorder

    def events(self, cancel: CancelToken) -> Iterator[LoopEvent]:
        from desktop_app.core.loop import run_turn

        events = run_turn(self.state, self.ports, cancel, self.config)
        try:
            for event in events:
                if isinstance(event, RequestStarted):
                    # The ledger's heavy half (serialising, hashing) here, on the loop's thread.
                    self.recorder.requests.prepare(event.request)
                yield event
        finally:
            events.close()  # the loop's own clean-up (the stream's connection) runs now

    def release_thread(self) -> None:
        """Call on the thread that iterated `events`, when it is done with them."""
        self.ports.backend.release_thread()

    def record(self, event: LoopEvent) -> None:
        """Persist one event (on the database thread, in order, before it is shown)."""
        self.recorder.record(event)
        if isinstance(event, (CompactionApplied, CompactionFailed)):
            self.owner.record_compaction_requests()  # in order, before the turn's request
        if isinstance(event, ContextStateChanged) and isinstance(event.state, ContextState):
            self.owner.turn_state_changed(event.state)

    def finish(self) -> Changes:
        """The loop has ended: keep what the planner learned (suggested facts, the
        breaker) and apply the user's context edits made meanwhile. What the turn's end
        changed besides its messages (a regeneration that brought nothing shows the
        answer it had again) is in the `Changes`."""
        return self.owner.turn_ended(self)


@dataclass
class TurnRecorder:
    """Persists the loop's events: streaming checkpoints and finished messages."""

    store: ChatStore
    chat_id: str
    counter: TokenCounter
    streaming_id: str | None = None
    text: list[str] = field(default_factory=list)
    last_checkpoint: float = 0.0
    last_request: ChatRequest | None = None
    server: str = ""  # where requests go, for the ledger
    requests: ledger.RequestRecorder = field(default_factory=lambda: ledger.RequestRecorder())
    sent: tuple[int, float] | None = None  # the ledger row of the request awaiting its reply
    clock: Callable[[], float] = time.time  # when a request is sent, as the ledger has it

    def record(self, event: LoopEvent) -> None:
        if isinstance(event, RequestStarted):
            self.last_request = event.request
            row = self.requests.record(
                self.store.db, self.chat_id, event.request, server=self.server, sent_at=self.clock()
            )
            self.sent = (row, time.monotonic())
        elif isinstance(event, MessageStarted):
            self.streaming_id, self.text = event.message_id, []
            self.last_checkpoint = 0.0  # the first words are saved at once, then ~1/s
        elif isinstance(event, TextDelta) and event.message_id == self.streaming_id:
            self.text.append(event.text)
            self.checkpoint()
        elif isinstance(event, MessageAdded):
            message = event.message
            if message.id == self.streaming_id:
                self.streaming_id = None
                self.store.checkpoint(self.chat_id, message)  # replaces the partial row
                self.learn(message)
                self.reply_ended(message)
            else:
                self.store.append_message(self.chat_id, message)
        elif isinstance(event, TurnFinished) and self.sent is not None:
            self.reply_failed(event)

    def reply_ended(self, message: Message) -> None:
        """The ledger learns how the request's reply ended: its usage, time and status."""
        if self.sent is None:
            return
        row, started = self.sent
        self.sent = None
        seconds = time.monotonic() - started
        ledger.finish(
            self.store.db,
            row,
            seconds=seconds,
            usage=message.usage,
            status=message.status.value,
            reply_id=message.id,
        )

    def reply_failed(self, event: TurnFinished) -> None:
        """The turn ended with a request and no reply to it (refused, dropped, stopped
        before a word came): the ledger says so instead of leaving it "sent"."""
        assert self.sent is not None
        row, started = self.sent
        self.sent = None
        status = "error" if event.error is not None else event.reason.value
        ledger.finish(
            self.store.db, row, seconds=time.monotonic() - started, usage=None, status=status
        )

    def checkpoint(self) -> None:
        now = time.monotonic()
        if self.streaming_id is None or now - self.last_checkpoint < CHECKPOINT_EVERY_S:
            return
        text = "".join(self.text)
        if not text.strip():
            return  # nothing said yet: an empty row would only need cleaning up
        self.last_checkpoint = now
        partial = Message(
            "assistant", (TextBlock(text),), id=self.streaming_id, status=MessageStatus.STREAMING
        )
        self.store.checkpoint(self.chat_id, partial, partial=True)

    def learn(self, message: Message) -> None:
        """The API's count of the prompt just sent calibrates the local estimate."""
        usage = message.usage
        if usage and (usage.web_search_requests or usage.web_fetch_requests):
            return  # the prompt grew inside the turn by what the web brought: not this request's
        if self.last_request is not None and message.usage and message.usage.prompt_tokens:
            self.counter.learn_from_usage_later(self.last_request, message.usage.prompt_tokens)
