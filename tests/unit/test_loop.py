"""The agent loop over a scripted backend: every stop reason, tools, approvals, cancel."""

from __future__ import annotations

import threading

import pytest

from desktop_app.core.blocks import TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import ContextDeskError, ErrorInfo, ErrorKind
from desktop_app.core.events import (
    LoopEvent,
    MessageAdded,
    RequestStarted,
    StepFinished,
    StreamTextDelta,
    TextDelta,
    ToolCallFinished,
    TransitionReason,
    TurnFinished,
)
from desktop_app.core.history import merge_same_role
from desktop_app.core.loop import LoopConfig, LoopPorts, run_turn
from desktop_app.core.messages import Message, MessageStatus, user_text
from desktop_app.core.ports import ApprovalDecision, ApprovalPolicy
from desktop_app.core.protocol import validate
from desktop_app.core.request import ChatRequest
from tests.fakes.backend import Hang, ReplyBuilder, ScriptedBackend, Step, text_reply
from tests.fakes.harness import ask, make_ports, run
from tests.fakes.tools import FakeTools, ScriptedApprover, boom, echo, hang
from tests.unit.builders import results_of


def sendable(state_messages: list[Message]) -> list[Message]:
    """What the next request would carry: the history plus a new user message, merged."""
    return list(merge_same_role([*state_messages, user_text("next")]))


def last(events: list[LoopEvent]) -> TurnFinished:
    assert isinstance(events[-1], TurnFinished)
    return events[-1]


def error_of(events: list[LoopEvent]) -> ErrorInfo:
    error = last(events).error
    assert error is not None, "the turn should have ended with an error"
    return error


def test_a_plain_reply() -> None:
    backend = ScriptedBackend().queue(text_reply("Hello there"))
    state = ask("hi")
    events = run(state, make_ports(backend))
    assert last(events).reason is TransitionReason.END_TURN
    assert state.turn_count == 1
    assert state.transition_reason is TransitionReason.END_TURN
    reply = state.messages[-1]
    assert reply.role == "assistant"
    assert reply.blocks == (TextBlock("Hello there"),)
    assert reply.status is MessageStatus.COMPLETE
    assert reply.usage is not None
    assert reply.usage.input_tokens == 10
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello there"
    added = [e.message for e in events if isinstance(e, MessageAdded)]
    assert added == [reply]


def test_the_request_carries_system_tools_and_cache_breakpoints() -> None:
    backend = ScriptedBackend().queue(text_reply("ok"))
    tools = FakeTools().add("echo", echo)
    run(ask("hi"), make_ports(backend, tools))
    body = backend.requests[0].body()
    assert body["system"] == [
        {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
        }
    ]
    assert [t["name"] for t in body["tools"]] == ["echo"]


def test_parallel_tool_calls_get_one_results_message_in_call_order() -> None:
    reply = (
        ReplyBuilder()
        .text("Let me check.")
        .tool("toolu_1", "echo", {"n": 1})
        .tool("toolu_2", "echo", {"n": 2})
        .tool("toolu_3", "echo", {"n": 3})
        .end()
    )
    backend = ScriptedBackend().queue(reply, text_reply("All three done."))
    tools = FakeTools().add("echo", echo)
    state = ask("do three things")
    events = run(state, make_ports(backend, tools))
    assert [m.role for m in state.messages] == ["user", "assistant", "user", "assistant"]
    results = results_of(state.messages[2])
    assert [b.tool_use_id for b in results] == ["toolu_1", "toolu_2", "toolu_3"]
    assert results[0] == ToolResultBlock("toolu_1", "echo {'n': 1}")
    assert [t.reason for t in state.transitions] == [
        TransitionReason.TOOL_USE,
        TransitionReason.END_TURN,
    ]
    assert state.turn_count == 2
    assert len([e for e in events if isinstance(e, ToolCallFinished)]) == 3
    for request in backend.requests:
        assert validate(request.messages) == []


def test_unknown_and_failing_tools_become_error_results() -> None:
    reply = ReplyBuilder().tool("toolu_1", "nope", {}).tool("toolu_2", "boom", {}).end()
    backend = ScriptedBackend().queue(reply, text_reply("Sorry."))
    tools = FakeTools().add("boom", boom)
    state = ask("try")
    run(state, make_ports(backend, tools))
    unknown, failed = state.messages[2].blocks
    assert unknown == ToolResultBlock("toolu_1", "Unknown tool 'nope'.", is_error=True)
    assert failed == ToolResultBlock(
        "toolu_2", "boom failed: RuntimeError: disk on fire", is_error=True
    )
    assert state.transition_reason is TransitionReason.END_TURN


def test_no_tool_runner_means_error_results_not_a_crash() -> None:
    backend = ScriptedBackend().queue(
        ReplyBuilder().tool("toolu_1", "x", {}).end(), text_reply("ok")
    )
    state = ask("go")
    run(state, make_ports(backend))
    assert results_of(state.messages[2])[0].is_error


def test_approval_deny_allow_once_and_always() -> None:
    calls = (
        ReplyBuilder()
        .tool("toolu_1", "write", {"p": 1})
        .tool("toolu_2", "write", {"p": 2})
        .tool("toolu_3", "write", {"p": 3})
        .end()
    )
    backend = ScriptedBackend().queue(calls, text_reply("done"))
    tools = FakeTools().add("write", echo, ApprovalPolicy.ASK)
    approver = ScriptedApprover([ApprovalDecision.DENY, ApprovalDecision.ALLOW_ALWAYS])
    state = ask("write files")
    run(state, make_ports(backend, tools, approver))
    denied, second, third = results_of(state.messages[2])
    assert denied == ToolResultBlock(
        "toolu_1", "The user denied this call to write.", is_error=True
    )
    assert not second.is_error
    assert not third.is_error
    assert len(approver.asked) == 2  # "always" covered the third call
    assert approver.asked[0].summary == "write {'p': 1}"
    assert state.always_allowed == {"write"}


def test_policy_deny_never_asks() -> None:
    backend = ScriptedBackend().queue(
        ReplyBuilder().tool("toolu_1", "rm", {}).end(), text_reply("ok")
    )
    tools = FakeTools().add("rm", echo, ApprovalPolicy.DENY)
    state = ask("go")
    run(state, make_ports(backend, tools, ScriptedApprover()))
    assert state.messages[2].blocks[0] == ToolResultBlock(
        "toolu_1", "Calls to rm are turned off in this chat's settings.", is_error=True
    )


@pytest.mark.parametrize(
    ("stop", "reason"),
    [
        ("end_turn", TransitionReason.END_TURN),
        ("stop_sequence", TransitionReason.STOP_SEQUENCE),
        ("max_tokens", TransitionReason.MAX_TOKENS),
        ("refusal", TransitionReason.REFUSAL),
        ("model_context_window_exceeded", TransitionReason.CONTEXT_WINDOW_EXCEEDED),
        ("something_new", TransitionReason.UNKNOWN_STOP_REASON),
    ],
)
def test_stop_reasons_that_end_the_turn(stop: str, reason: TransitionReason) -> None:
    backend = ScriptedBackend().queue(text_reply("words", stop))
    state = ask("hi")
    events = run(state, make_ports(backend))
    assert last(events).reason is reason
    assert state.messages[-1].stop_reason == stop
    assert len(backend.requests) == 1
    if reason is TransitionReason.UNKNOWN_STOP_REASON:
        assert "something_new" in last(events).detail


def test_a_call_cut_by_max_tokens_is_answered_not_run() -> None:
    backend = ScriptedBackend().queue(
        ReplyBuilder().text("I'll write").tool("toolu_1", "echo", {"a": 1}).end("max_tokens")
    )
    tools = FakeTools().add("echo", echo)
    state = ask("go")
    events = run(state, make_ports(backend, tools))
    assert last(events).reason is TransitionReason.MAX_TOKENS
    assert tools.calls == []
    [res] = state.messages[-1].blocks
    assert isinstance(res, ToolResultBlock)
    assert res.is_error
    assert "max_tokens" in res.text
    assert validate(sendable(state.messages)) == []


def test_pause_turn_continues_with_the_assistant_message_last() -> None:
    backend = ScriptedBackend().queue(
        text_reply("Searching… ", "pause_turn"), text_reply("Found it.")
    )
    state = ask("search")
    events = run(state, make_ports(backend))
    assert last(events).reason is TransitionReason.END_TURN
    second = backend.requests[1]
    assert second.messages[-1].role == "assistant"
    assert second.messages[-1].blocks == (TextBlock("Searching…"),)  # trailing space would be a 400
    assert [t.reason for t in state.transitions] == [
        TransitionReason.PAUSE_TURN,
        TransitionReason.END_TURN,
    ]


def test_turn_limit_stops_a_runaway_tool_loop() -> None:
    def forever(n: int) -> list[Step]:
        return ReplyBuilder().tool(f"toolu_{n}", "echo", {}).end()

    backend = ScriptedBackend().queue(*[forever(n) for n in range(5)])
    state = ask("loop")
    events = run(
        state, make_ports(backend, FakeTools().add("echo", echo)), config=LoopConfig(max_turns=3)
    )
    assert last(events).reason is TransitionReason.TURN_LIMIT
    assert state.turn_count == 3
    assert len(backend.requests) == 3
    assert validate(sendable(state.messages)) == []


def test_thinking_blocks_are_kept_byte_exact_across_turns() -> None:
    signature = "EqQBCkYIARgCIkB+/0=="
    reply = ReplyBuilder().thinking("Let me think…\n", signature).tool("toolu_1", "echo", {}).end()
    backend = ScriptedBackend().queue(
        reply, ReplyBuilder().redacted("EmwKAhgB").text("Done.").end()
    )
    state = ask("think")
    run(state, make_ports(backend, FakeTools().add("echo", echo)))
    sent = backend.requests[1].body()["messages"][1]["content"][0]
    assert sent == {"type": "thinking", "thinking": "Let me think…\n", "signature": signature}
    assert isinstance(state.messages[1].blocks[0], ThinkingBlock)


def test_a_backend_error_is_reported_and_the_partial_reply_kept() -> None:
    failure = ContextDeskError(
        "Claude is overloaded", "Try again in a minute.", retryable=True, kind=ErrorKind.OVERLOADED
    )
    backend = ScriptedBackend().queue(
        ReplyBuilder().text("Half a sent").then(StreamTextDelta(0, "ence")).then(failure).cut()
    )
    state = ask("hi")
    events = run(state, make_ports(backend))
    finished = last(events)
    assert finished.reason is TransitionReason.ERROR
    assert finished.error is not None
    assert finished.error.title == "Claude is overloaded"
    assert finished.error.retryable
    # The text block had stopped before the error; the later delta went to an open block.
    assert state.messages[-1].status is MessageStatus.ERROR
    assert "Half a sent" in state.messages[-1].text
    assert validate(sendable(state.messages)) == []


def test_a_stream_cut_before_message_stop_is_a_retryable_error() -> None:
    backend = ScriptedBackend().queue(ReplyBuilder().text("So far so").cut())
    state = ask("hi")
    events = run(state, make_ports(backend))
    assert error_of(events).kind == "stream_cut"
    assert state.messages[-1].text == "So far so"
    assert state.messages[-1].status is MessageStatus.ERROR


def test_malformed_tool_json_is_an_error_and_nothing_runs() -> None:
    backend = ScriptedBackend().queue(ReplyBuilder().tool("toolu_1", "echo", '{"path": "a').end())
    tools = FakeTools().add("echo", echo)
    state = ask("go")
    events = run(state, make_ports(backend, tools))
    assert error_of(events).kind == "malformed_tool_input"
    assert tools.calls == []
    assert "did not arrive complete" in state.messages[-1].text
    assert validate(sendable(state.messages)) == []


def test_an_unexpected_exception_in_a_port_is_an_error_event_not_a_crash() -> None:
    backend = ScriptedBackend().queue([ZeroDivisionError("oops")])
    state = ask("hi")
    events = run(state, make_ports(backend))
    assert last(events).reason is TransitionReason.ERROR
    assert "ZeroDivisionError" in error_of(events).message


def test_a_request_the_api_would_reject_is_never_sent() -> None:
    backend = ScriptedBackend().queue(text_reply("never"))
    state = ask("hi")
    state.messages.insert(0, user_text("").with_blocks((TextBlock(""),)))
    events = run(state, make_ports(backend))
    assert error_of(events).kind == "protocol"
    assert "text content blocks must be non-empty" in error_of(events).message
    assert backend.requests == []


def test_a_request_that_cannot_fit_the_window_is_refused() -> None:
    class Big:
        def count_request(self, request: ChatRequest) -> int:
            return 199_000

    backend = ScriptedBackend().queue(text_reply("never"))
    ports = make_ports(backend)
    ports = LoopPorts(ports.backend, ports.planner, ports.approver, ports.tools, counter=Big())
    events = run(ask("hi"), ports, config=LoopConfig(context_window=200_000))
    assert error_of(events).kind == "context_overflow"
    assert "199,000" in error_of(events).message
    assert backend.requests == []


def test_request_started_reports_the_estimate() -> None:
    class Count:
        def count_request(self, request: ChatRequest) -> int:
            return 42

    backend = ScriptedBackend().queue(text_reply("ok"))
    ports = make_ports(backend)
    ports = LoopPorts(ports.backend, ports.planner, ports.approver, counter=Count())
    events = run(ask("hi"), ports)
    [started] = [e for e in events if isinstance(e, RequestStarted)]
    assert started.estimated_input_tokens == 42
    assert started.turn == 1


# -- cancellation, in every phase ---------------------------------------------------------


def test_cancel_while_the_server_is_silent() -> None:
    backend = ScriptedBackend().queue(ReplyBuilder().text("partial answer").then(Hang()).cut())
    cancel = CancelToken()
    state = ask("hi")
    timer = threading.Timer(0.05, cancel.cancel)
    timer.start()
    events = run(state, make_ports(backend), cancel)
    assert last(events).reason is TransitionReason.CANCELLED
    assert state.messages[-1].status is MessageStatus.INTERRUPTED
    assert state.messages[-1].text == "partial answer"
    assert state.transition_reason is TransitionReason.CANCELLED
    assert validate(sendable(state.messages)) == []


def test_cancel_after_tool_calls_streamed_but_before_they_ran() -> None:
    reply = (
        ReplyBuilder().tool("toolu_1", "echo", {}).tool("toolu_2", "echo", {}).then(Hang()).cut()
    )
    backend = ScriptedBackend().queue(reply)
    cancel = CancelToken()
    threading.Timer(0.05, cancel.cancel).start()
    state = ask("go")
    tools = FakeTools().add("echo", echo)
    run(state, make_ports(backend, tools), cancel)
    assert tools.calls == []
    assert [type(b) for b in state.messages[1].blocks] == [ToolUseBlock, ToolUseBlock]
    assert all(isinstance(b, ToolResultBlock) and b.is_error for b in state.messages[2].blocks)
    assert validate(sendable(state.messages)) == []


def test_cancel_during_a_tool_keeps_finished_results() -> None:
    reply = (
        ReplyBuilder()
        .tool("toolu_1", "echo", {})
        .tool("toolu_2", "hang", {})
        .tool("toolu_3", "echo", {})
        .end()
    )
    backend = ScriptedBackend().queue(reply)
    cancel = CancelToken()
    threading.Timer(0.05, cancel.cancel).start()
    state = ask("go")
    events = run(
        state, make_ports(backend, FakeTools().add("echo", echo).add("hang", hang)), cancel
    )
    assert last(events).reason is TransitionReason.CANCELLED
    first, second, third = results_of(state.messages[2])
    assert not first.is_error
    assert second.is_error
    assert "Interrupted: hang" in second.text
    assert third.is_error
    assert [e.message for e in events if isinstance(e, MessageAdded)][-1] is state.messages[-1]
    assert validate(sendable(state.messages)) == []


def test_cancel_while_waiting_for_approval() -> None:
    backend = ScriptedBackend().queue(ReplyBuilder().tool("toolu_1", "write", {}).end())
    cancel = CancelToken()
    threading.Timer(0.05, cancel.cancel).start()
    state = ask("go")
    tools = FakeTools().add("write", echo, ApprovalPolicy.ASK)
    run(state, make_ports(backend, tools, ScriptedApprover(hang=True)), cancel)
    assert tools.calls == []
    assert validate(sendable(state.messages)) == []


def test_cancel_before_the_first_request() -> None:
    backend = ScriptedBackend().queue(text_reply("never"))
    cancel = CancelToken()
    cancel.cancel()
    state = ask("hi")
    events = run(state, make_ports(backend), cancel)
    assert last(events).reason is TransitionReason.CANCELLED
    assert backend.requests == []
    assert len(state.messages) == 1


def test_closing_the_generator_mid_tool_still_leaves_a_valid_history() -> None:
    reply = ReplyBuilder().tool("toolu_1", "echo", {}).tool("toolu_2", "echo", {}).end()
    backend = ScriptedBackend().queue(reply)
    state = ask("go")
    gen = run_turn(state, make_ports(backend, FakeTools().add("echo", echo)), CancelToken())
    for event in gen:
        if isinstance(event, ToolCallFinished):
            break
    gen.close()
    assert [b.is_error for b in results_of(state.messages[-1])] == [False, True]
    assert validate(sendable(state.messages)) == []


def test_closing_the_generator_mid_stream_keeps_the_partial_text() -> None:
    backend = ScriptedBackend().queue(ReplyBuilder().text("abcdef", chunks=3).end())
    state = ask("go")
    gen = run_turn(state, make_ports(backend), CancelToken())
    for event in gen:
        if isinstance(event, TextDelta):
            break
    gen.close()
    assert state.messages[-1].text == "ab"
    assert state.messages[-1].status is MessageStatus.INTERRUPTED


def test_step_events_mark_each_transition() -> None:
    backend = ScriptedBackend().queue(
        ReplyBuilder().tool("toolu_1", "echo", {}).end(), text_reply("ok")
    )
    events = run(ask("go"), make_ports(backend, FakeTools().add("echo", echo)))
    steps = [(e.turn, e.reason) for e in events if isinstance(e, StepFinished)]
    assert steps == [(1, TransitionReason.TOOL_USE), (2, TransitionReason.END_TURN)]


def test_a_server_tools_call_keeps_the_input_it_streamed() -> None:
    """A `server_tool_use` starts with an empty input that deltas fill (as the recorded
    Fable 5 stream shows): the call sent back carries the whole input, not `{}`."""
    from desktop_app.core.assembly import MessageAssembler
    from desktop_app.core.blocks import OpaqueBlock
    from desktop_app.core.events import (
        StreamBlockStart,
        StreamBlockStop,
        StreamInputDelta,
        StreamMessageStop,
    )

    start = OpaqueBlock(
        "server_tool_use",
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
    )
    assembler = MessageAssembler("m1")
    for event in (
        StreamBlockStart(0, "server_tool_use", block=start),
        StreamInputDelta(0, '{"query": "solar'),
        StreamInputDelta(0, ' eclipse"}'),
        StreamBlockStop(0),
        StreamMessageStop(),
    ):
        assembler.feed(event)
    (call,) = assembler.finish().blocks
    assert isinstance(call, OpaqueBlock)
    assert call.raw == {**start.raw, "input": {"query": "solar eclipse"}}
