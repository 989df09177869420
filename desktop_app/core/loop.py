"""The agent loop as a plain generator of events (docs/architecture.md, *One turn*).

    state.messages.append(user_message)
    for event in run_turn(state, ports, cancel):
        ...                       # the worker forwards each event to the GUI

One *turn* answers one user message: request → stream → (tools → request → stream)* until
the stop reason is not `tool_use`, the turn limit is reached, the user cancels, or an error
stops it. `state` records every step's `transition_reason`.

Whatever happens — a cancel at any moment, a failing backend or tool, the consumer closing
the generator — the loop leaves `state.messages` a history the API accepts: the partial
reply is kept (status interrupted or error) and every tool call gets a result.
"""

from __future__ import annotations

import logging
import queue
import time
import traceback
from collections import deque
from collections.abc import Generator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from desktop_app.core.assembly import MessageAssembler
from desktop_app.core.binding import request_prefix
from desktop_app.core.blocks import ToolResultBlock, ToolUseBlock
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import Cancelled, ContextDeskError, ErrorInfo, ErrorKind
from desktop_app.core.events import (
    LoopEvent,
    MessageAdded,
    MessageStarted,
    RequestStarted,
    RetryWaiting,
    StepFinished,
    StreamRetryWait,
    ToolCallFinished,
    ToolCallStarted,
    TransitionReason,
    TurnFinished,
)
from desktop_app.core.history import tool_calls, unanswered_calls, without_trailing_whitespace
from desktop_app.core.messages import Message, MessageStatus, new_id
from desktop_app.core.ports import (
    ApprovalDecision,
    ApprovalPolicy,
    ApprovalRequest,
    Approver,
    ChatBackend,
    RequestPlanner,
    TokenCounter,
    ToolRunner,
)
from desktop_app.core.repair import INTERRUPTED_RESULT
from desktop_app.core.request import check_request
from desktop_app.core.transcript import Snapshots

log = logging.getLogger(__name__)

DEFAULT_MAX_TURNS = 20

_STOPS = {
    "end_turn": TransitionReason.END_TURN,
    "stop_sequence": TransitionReason.STOP_SEQUENCE,
    "max_tokens": TransitionReason.MAX_TOKENS,
    "refusal": TransitionReason.REFUSAL,
    "model_context_window_exceeded": TransitionReason.CONTEXT_WINDOW_EXCEEDED,
    "tool_use": TransitionReason.TOOL_USE,
    "pause_turn": TransitionReason.PAUSE_TURN,
}

NOT_RUN_RESULT = "Not run: the reply stopped ({reason}) before this call could be made."
DENIED_RESULT = "The user denied this call to {name}."
POLICY_DENIED_RESULT = "Calls to {name} are turned off in this chat's settings."


@dataclass(frozen=True, slots=True)
class Transition:
    turn: int
    reason: TransitionReason
    detail: str = ""


@dataclass(slots=True)
class LoopState:
    """The loop's working state: the history it extends, and how each step ended."""

    messages: list[Message]
    turn_count: int = 0
    transitions: list[Transition] = field(default_factory=list)
    always_allowed: set[str] = field(default_factory=set)  # tools allowed "always" in this chat
    # what `messages` was made from, and the transcripts of it each request was planned from
    snapshots: Snapshots = field(init=False)

    def __post_init__(self) -> None:
        self.snapshots = Snapshots(self.messages)
        self.messages = list(self.messages)  # (its own: the loop appends to it)

    @property
    def transition_reason(self) -> TransitionReason | None:
        return self.transitions[-1].reason if self.transitions else None


@dataclass(frozen=True, slots=True)
class LoopConfig:
    max_turns: int = DEFAULT_MAX_TURNS
    context_window: int = 200_000


@dataclass(frozen=True, slots=True)
class LoopPorts:
    backend: ChatBackend
    planner: RequestPlanner
    approver: Approver
    tools: ToolRunner | None = None
    counter: TokenCounter | None = None


def run_turn(
    state: LoopState,
    ports: LoopPorts,
    cancel: CancelToken,
    config: LoopConfig = LoopConfig(),
) -> Generator[LoopEvent, None, LoopState]:
    """Answer the last user message in `state`; yield events; return `state`."""
    turn = _Turn(state, ports, cancel, config)
    try:
        yield from turn.run()
    except Cancelled:
        yield from turn.settle(MessageStatus.INTERRUPTED)
        yield turn.stop(TransitionReason.CANCELLED)
    except ContextDeskError as exc:
        yield from turn.settle(MessageStatus.ERROR)
        yield turn.stop(TransitionReason.ERROR, exc.info)
    except Exception as exc:  # a bug in a port must not leave a broken history or a crash
        log.exception("the agent loop failed")
        info = ErrorInfo(
            "Something went wrong",
            f"ContextDesk hit an unexpected error ({type(exc).__name__}: {exc}). "
            "Your messages are kept; Retry to try again.",
            retryable=True,
            details=traceback.format_exc(),
            kind=ErrorKind.BUG,
        )
        yield from turn.settle(MessageStatus.ERROR)
        yield turn.stop(TransitionReason.ERROR, info)
    except GeneratorExit:
        # The consumer stopped listening: no more events, but leave a valid history.
        for _ in turn.settle(MessageStatus.INTERRUPTED):
            pass
        raise
    return state


class _Turn:
    def __init__(
        self, state: LoopState, ports: LoopPorts, cancel: CancelToken, config: LoopConfig
    ) -> None:
        self.state = state
        self.ports = ports
        self.cancel = cancel
        self.config = config
        self.assembler: MessageAssembler | None = None  # the reply being streamed, if any
        self.running: tuple[list[ToolUseBlock], list[ToolResultBlock]] | None = None  # tools

    def run(self) -> Generator[LoopEvent, None, None]:
        state = self.state
        while True:
            if state.turn_count >= self.config.max_turns:
                detail = f"stopped after {state.turn_count} model calls; send a message to continue"
                yield self.stop(TransitionReason.TURN_LIMIT, detail=detail)
                return
            self.cancel.raise_if_cancelled()
            message = yield from self.request_reply()
            reason, detail = _transition(message)
            calls = tool_calls(message)
            if calls and reason is TransitionReason.TOOL_USE:
                yield from self.run_tools(calls)
            elif calls:  # a reply that ended otherwise (max_tokens…) may leave calls half-made
                yield from self.add_results([_not_run(c, reason.value) for c in calls])
            state.transitions.append(Transition(state.turn_count, reason, detail))
            yield StepFinished(state.turn_count, reason, detail)
            if not reason.continues:
                yield TurnFinished(reason, state.turn_count, None, detail)
                return

    def request_reply(self) -> Generator[LoopEvent, None, Message]:
        history = self.state.snapshots.of(self.state.messages)
        request = yield from self.ports.planner.prepare(history, self.cancel)
        estimate = self.ports.counter.count_request(request) if self.ports.counter else None
        check_request(request, context_window=self.config.context_window, estimated_input=estimate)
        self.state.turn_count += 1
        yield RequestStarted(self.state.turn_count, request, estimate)

        prefix = request_prefix(
            (p.text for p in request.system), (t.to_api() for t in request.tools), request.messages
        )
        self.assembler = assembler = MessageAssembler(
            new_id(), model=request.model, bound_to=prefix
        )
        yield MessageStarted(assembler.message_id)
        stream = self.ports.backend.stream(request, self.cancel)
        try:
            for event in stream:
                if isinstance(event, StreamRetryWait):
                    yield RetryWaiting(event.seconds, event.reason)
                    continue
                yield from assembler.feed(event)
                self.cancel.raise_if_cancelled()
        finally:
            if isinstance(stream, Generator):
                stream.close()  # releases the connection now, not when garbage is collected
        message = assembler.finish()
        self.assembler = None
        if message.stop_reason == "pause_turn":
            message = without_trailing_whitespace(message)  # it is sent back as the final message
        if message.blocks:
            self.state.messages.append(message)
            yield MessageAdded(message)
        return message

    def run_tools(self, calls: list[ToolUseBlock]) -> Generator[LoopEvent, None, None]:
        """Ask about every call first, one by one in order; then run the approved ones:
        calls in different lanes (MCP servers) at the same time, a lane's calls in order.
        All results go into ONE user message, in the calls' order — on cancel too: a call
        cut short is answered as interrupted (`settle` sends the message)."""
        results: list[ToolResultBlock] = []
        self.running = (calls, results)
        try:
            lanes = yield from self.ask_all(calls, results)
            yield from self.run_lanes(lanes, results)
        except BaseException:
            results[:] = _in_order(calls, results)  # (settle then adds them as they are)
            raise
        self.running = None
        yield from self.add_results(_in_order(calls, results))

    def ask_all(
        self, calls: list[ToolUseBlock], results: list[ToolResultBlock]
    ) -> Generator[LoopEvent, None, dict[str, list[ToolUseBlock]]]:
        """Check each call and ask about it, in order; a refused call gets its result now.
        Returns the approved calls by lane."""
        lanes: dict[str, list[ToolUseBlock]] = {}
        for call in calls:
            self.cancel.raise_if_cancelled()
            yield ToolCallStarted(call)
            started = time.monotonic()
            refused, lane = self.ask(call)
            if refused is None:
                lanes.setdefault(lane, []).append(call)
            else:
                results.append(refused)
                yield ToolCallFinished(call, refused, time.monotonic() - started)
        return lanes

    def ask(self, call: ToolUseBlock) -> tuple[ToolResultBlock | None, str]:
        """(None, its lane) when the call may run; (its result, "") when it may not."""
        runner = self.ports.tools
        if runner is None:
            return ToolResultBlock(
                call.id,
                f"No tools are available in this chat; {call.name} was not run.",
                is_error=True,
            ), ""
        check = runner.check(call)
        if check.error:
            return ToolResultBlock(call.id, check.error, is_error=True), ""
        if check.policy is ApprovalPolicy.DENY:
            denied = POLICY_DENIED_RESULT.format(name=call.name)
            return ToolResultBlock(call.id, denied, is_error=True), ""
        if check.policy is ApprovalPolicy.ASK and call.name not in self.state.always_allowed:
            decision = self.ports.approver.approve(
                ApprovalRequest(call, check.summary), self.cancel
            )
            if decision is ApprovalDecision.DENY:
                denied = DENIED_RESULT.format(name=call.name)
                return ToolResultBlock(call.id, denied, is_error=True), ""
            if decision is ApprovalDecision.ALLOW_ALWAYS:
                self.state.always_allowed.add(call.name)
        return None, check.lane

    def run_lanes(
        self, lanes: dict[str, list[ToolUseBlock]], results: list[ToolResultBlock]
    ) -> Generator[LoopEvent, None, None]:
        """Run the lanes at the same time, one thread each, a lane's next call started
        only once its previous result was handed on (so closing this generator starts no
        more). Stop cancels every running call; so does closing this generator."""
        waiting = {lane: deque(calls) for lane, calls in lanes.items()}
        lane_of = {call.id: lane for lane, calls in lanes.items() for call in calls}
        done: queue.SimpleQueue[_Ran | None] = queue.SimpleQueue()
        calls_cancel = CancelToken()  # what the calls obey: Stop, or this generator's end
        pool = ThreadPoolExecutor(max_workers=max(len(lanes), 1), thread_name_prefix="tool")

        def start(lane: str) -> None:
            pool.submit(self.run_timed, waiting[lane].popleft(), calls_cancel, done)

        def wake() -> None:  # a Stop wakes the wait for results
            done.put(None)

        unlinks = [self.cancel.on_cancel(calls_cancel.cancel), self.cancel.on_cancel(wake)]

        try:
            for lane in waiting:
                start(lane)
            for _ in range(len(lane_of)):
                ran = done.get()
                self.cancel.raise_if_cancelled()
                assert ran is not None  # (None only wakes us for a Stop)
                if not isinstance(ran.result, ToolResultBlock):
                    raise ran.result  # Cancelled from the runner
                results.append(ran.result)
                yield ToolCallFinished(ran.call, ran.result, ran.seconds)
                if waiting[lane_of[ran.call.id]]:
                    start(lane_of[ran.call.id])
        finally:
            for unlink in unlinks:
                unlink()
            calls_cancel.cancel()
            pool.shutdown(wait=False, cancel_futures=True)

    def run_timed(
        self, call: ToolUseBlock, cancel: CancelToken, done: queue.SimpleQueue[_Ran | None]
    ) -> None:
        """Run one call on a lane's thread and hand its result (or Cancelled) back."""
        started = time.monotonic()
        try:
            result: ToolResultBlock | BaseException = self.run_tool(call, cancel)
        except BaseException as exc:  # handed to the loop's thread, which raises it
            result = exc
        done.put(_Ran(call, result, time.monotonic() - started))

    def run_tool(self, call: ToolUseBlock, cancel: CancelToken) -> ToolResultBlock:
        """Run an approved call; a failing tool is an error result."""
        runner = self.ports.tools
        assert runner is not None  # (`ask` refused every call without one)
        try:
            outcome = runner.run(call, cancel)
        except (Cancelled, GeneratorExit):
            raise
        except Exception as exc:  # a failing tool is the model's problem to handle, not a crash
            log.info("tool %s failed", call.name, exc_info=True)
            message = (
                exc.message if isinstance(exc, ContextDeskError) else f"{type(exc).__name__}: {exc}"
            )
            return ToolResultBlock(call.id, f"{call.name} failed: {message}", is_error=True)
        return ToolResultBlock(call.id, outcome.content, outcome.is_error)

    def add_results(self, results: list[ToolResultBlock]) -> Generator[LoopEvent, None, None]:
        message = Message(role="user", blocks=tuple(results))
        self.state.messages.append(message)
        yield MessageAdded(message)

    def settle(self, status: MessageStatus) -> Generator[LoopEvent, None, None]:
        """Keep the partial reply, answer every open call: the history stays sendable."""
        if self.assembler is not None:
            partial = self.assembler.salvage(status)
            self.assembler = None
            if partial is not None:
                self.state.messages.append(partial)
                yield MessageAdded(partial)
        if self.running is not None:
            calls, results = self.running
            self.running = None
            done = {r.tool_use_id for r in results}
            yield from self.add_results(
                results + [_interrupted(c) for c in calls if c.id not in done]
            )
        pending = unanswered_calls(self.state.messages)
        if pending:
            yield from self.add_results([_interrupted(c) for c in pending])

    def stop(
        self, reason: TransitionReason, error: ErrorInfo | None = None, detail: str = ""
    ) -> TurnFinished:
        """Record an early stop (turn limit, cancel, error) and the event that reports it."""
        detail = detail or (error.title if error else "stopped by the user")
        self.state.transitions.append(Transition(self.state.turn_count, reason, detail))
        return TurnFinished(reason, self.state.turn_count, error, detail)


def _transition(message: Message) -> tuple[TransitionReason, str]:
    stop = message.stop_reason or ""
    reason = _STOPS.get(stop)
    if reason is not None:
        return reason, ""
    return TransitionReason.UNKNOWN_STOP_REASON, f"the API ended the reply with {stop!r}"


@dataclass(frozen=True, slots=True)
class _Ran:
    """A call that ran on a lane's thread, and its result (or the Cancelled it raised)."""

    call: ToolUseBlock
    result: ToolResultBlock | BaseException
    seconds: float


def _in_order(calls: list[ToolUseBlock], results: list[ToolResultBlock]) -> list[ToolResultBlock]:
    """Every call's result in the calls' order; a call without one was interrupted."""
    by_call = {r.tool_use_id: r for r in results}
    return [by_call.get(call.id) or _interrupted(call) for call in calls]


def _interrupted(call: ToolUseBlock) -> ToolResultBlock:
    return ToolResultBlock(call.id, INTERRUPTED_RESULT.format(name=call.name), is_error=True)


def _not_run(call: ToolUseBlock, reason: str) -> ToolResultBlock:
    return ToolResultBlock(call.id, NOT_RUN_RESULT.format(reason=reason), is_error=True)
