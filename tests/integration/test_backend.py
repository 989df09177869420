"""The real anthropic SDK over a real socket against the simulator, through the real loop."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from desktop_app.api.backend import (
    AnthropicBackend,
    Deadlines,
    is_anthropic,
)
from desktop_app.api.simulator import Fault, FaultKind, Reply, SimulatorServer
from desktop_app.core.blocks import ThinkingBlock, ToolResultBlock, ToolUseBlock
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import ContextDeskError, ErrorKind
from desktop_app.core.events import LoopEvent, RetryWaiting, TransitionReason, TurnFinished
from desktop_app.core.history import merge_same_role
from desktop_app.core.loop import LoopConfig, LoopPorts, LoopState, run_turn
from desktop_app.core.messages import Message, MessageStatus, user_text
from desktop_app.core.ports import ApprovalDecision
from desktop_app.core.protocol import validate
from desktop_app.core.request import ChatRequest
from desktop_app.core.whole_history import WholeHistoryPlanner
from desktop_app.core.wire import messages_from_api
from desktop_app.tools.builtin import builtin_tools
from desktop_app.tools.registry import ToolRegistry
from tests.fakes.tools import ScriptedApprover
from tests.integration.conftest import TEST_KEY

MODEL = "contextdesk-demo"


def ports(
    backend: AnthropicBackend,
    workspace: Path | None = None,
    approver: ScriptedApprover | None = None,
    thinking: int | None = None,
    commands: bool = False,
) -> LoopPorts:
    registry = ToolRegistry(builtin_tools(commands=commands), workspace=workspace)
    planner = WholeHistoryPlanner(
        MODEL,
        max_tokens=4096,  # above any thinking budget, as the API requires
        system="Be brief.",
        tools=tuple(registry.specs()),
        thinking_budget=thinking,
    )
    return LoopPorts(
        backend=backend, planner=planner, approver=approver or ScriptedApprover(), tools=registry
    )


def turn(state: LoopState, ports: LoopPorts, cancel: CancelToken | None = None) -> TurnFinished:
    events: list[LoopEvent] = list(
        run_turn(state, ports, cancel or CancelToken(), LoopConfig(max_turns=5))
    )
    finished = events[-1]
    assert isinstance(finished, TurnFinished)
    return finished


def sendable(messages: list[Message]) -> list[Message]:
    return list(merge_same_role([*messages, user_text("next")]))


def received_valid(sim: SimulatorServer) -> None:
    for request in sim.message_requests():
        assert validate(messages_from_api(request.body["messages"])) == []


def test_a_streamed_reply_with_the_right_headers(
    sim: SimulatorServer, backend: AnthropicBackend
) -> None:
    state = LoopState([user_text("hello there")])
    finished = turn(state, ports(backend))
    assert finished.reason is TransitionReason.END_TURN
    reply = state.messages[-1]
    assert reply.text.startswith("[Simulated reply from the ContextDesk offline demo model]")
    assert reply.usage is not None
    assert reply.usage.input_tokens > 0
    [request] = sim.message_requests()
    assert request.headers["x-contextdesk-purpose"] == "chat"
    assert request.headers["x-api-key"] == TEST_KEY
    assert request.body["stream"] is True
    assert "cache_control" not in str(request.body)  # not Anthropic's API: markers stripped


def test_every_client_in_a_process_shares_one_tls_context(
    sim: SimulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each turn's thread has a client of its own; reading the CA certificates for each
    cost 50–120 ms (most of a short test's time, and a turn's start)."""
    import httpx2

    from desktop_app.api import backend as backend_module

    made = []
    create = httpx2.create_ssl_context

    def counted() -> object:
        made.append(1)
        return create()

    monkeypatch.setattr(backend_module, "_tls", None)
    monkeypatch.setattr(httpx2, "create_ssl_context", counted)
    for n in range(3):
        api = AnthropicBackend(TEST_KEY, sim.base_url, max_retries=0, timeout=10)
        state = LoopState([user_text(f"hello {n}")])
        try:
            assert turn(state, ports(api)).reason is TransitionReason.END_TURN
        finally:
            api.close()
    assert len(made) == 1
    assert len(sim.message_requests()) == 3


def test_prompt_caching_markers_go_to_anthropic_or_when_asked(sim: SimulatorServer) -> None:
    assert is_anthropic(None)
    assert is_anthropic("https://api.anthropic.com")
    assert not is_anthropic("http://localhost:11434")
    assert not is_anthropic("https://anthropic.com.evil.example")
    api = AnthropicBackend(TEST_KEY, sim.base_url, max_retries=0, prompt_caching=True)
    try:
        turn(LoopState([user_text("hi")]), ports(api))
    finally:
        api.close()
    assert '"cache_control": {"type": "ephemeral"}' in str(sim.message_requests()[0].body).replace(
        "'", '"'
    )


def test_three_parallel_tool_calls_round_trip(
    sim: SimulatorServer, backend: AnthropicBackend, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("alpha")
    (tmp_path / "b.txt").write_text("beta")
    sim.queue(
        Reply.tools(
            ("toolu_a", "read_file", {"path": "a.txt"}),
            ("toolu_b", "read_file", {"path": "b.txt"}),
            ("toolu_c", "current_time", {}),
            text="Three at once.",
        )
    )
    state = LoopState([user_text("read both and tell the time")])
    finished = turn(state, ports(backend, tmp_path))
    assert finished.reason is TransitionReason.END_TURN
    results = state.messages[2].blocks
    assert [b.tool_use_id for b in results if isinstance(b, ToolResultBlock)] == [
        "toolu_a",
        "toolu_b",
        "toolu_c",
    ]
    assert [b.text for b in results if isinstance(b, ToolResultBlock)][:2] == ["alpha", "beta"]
    assert len(sim.message_requests()) == 2
    received_valid(sim)
    assert "The tools returned" in state.messages[-1].text


def test_thinking_signatures_come_back_byte_exact(
    sim: SimulatorServer, backend: AnthropicBackend
) -> None:
    sim.queue(
        Reply(
            (
                {"type": "thinking", "thinking": "Hmm… 🙂\n", "signature": "Sig+/abc=="},
                {"type": "tool_use", "id": "toolu_t", "name": "current_time", "input": {}},
            ),
            "tool_use",
        )
    )
    state = LoopState([user_text("what time is it")])
    turn(state, ports(backend, thinking=1024))
    thinking = state.messages[1].blocks[0]
    assert thinking == ThinkingBlock("Hmm… 🙂\n", "Sig+/abc==")
    second = sim.message_requests()[1].body["messages"][1]["content"][0]
    assert second == {"type": "thinking", "thinking": "Hmm… 🙂\n", "signature": "Sig+/abc=="}


def test_cancel_while_the_server_hangs_stops_at_once(
    sim: SimulatorServer, backend: AnthropicBackend
) -> None:
    sim.queue(
        Fault(
            FaultKind.HANG,
            after_events=5,
            reply=Reply.text("This will hang mid-way through the reply text"),
        )
    )
    cancel = CancelToken()
    state = LoopState([user_text("hi")])
    stopped_at: list[float] = []

    def press_stop() -> None:
        stopped_at.append(time.monotonic())
        cancel.cancel()

    threading.Timer(0.8, press_stop).start()
    finished = turn(state, ports(backend), cancel)
    latency = time.monotonic() - stopped_at[0]
    assert finished.reason is TransitionReason.CANCELLED
    assert latency < 1.0  # measured in tests/perf: the target is 200 ms
    assert state.messages[-1].status is MessageStatus.INTERRUPTED
    assert validate(sendable(state.messages)) == []


def test_cancel_during_retry_backoff(sim: SimulatorServer) -> None:
    sim.queue(Fault(FaultKind.RATE_LIMITED, retry_after_ms=20_000))
    api = AnthropicBackend(TEST_KEY, sim.base_url, max_retries=2)
    cancel = CancelToken()
    threading.Timer(0.5, cancel.cancel).start()
    started = time.monotonic()
    try:
        finished = turn(LoopState([user_text("hi")]), ports(api), cancel)
    finally:
        api.close()
    assert finished.reason is TransitionReason.CANCELLED
    assert time.monotonic() - started < 2.5


def test_a_refused_request_is_tried_again(sim: SimulatorServer) -> None:
    sim.queue(Fault(FaultKind.OVERLOADED, retry_after_ms=10), Reply.text("Recovered."))
    api = AnthropicBackend(TEST_KEY, sim.base_url, max_retries=2)
    state = LoopState([user_text("hi")])
    try:
        finished = turn(state, ports(api))
    finally:
        api.close()
    assert finished.reason is TransitionReason.END_TURN
    assert state.messages[-1].text == "Recovered."
    assert len(sim.message_requests()) == 2


def test_cancel_during_a_running_command(
    sim: SimulatorServer, backend: AnthropicBackend, tmp_path: Path
) -> None:
    sim.queue(Reply.tools(("toolu_s", "run_command", {"command": "sleep 43.3"})))
    cancel = CancelToken()
    threading.Timer(0.8, cancel.cancel).start()
    state = LoopState([user_text("sleep")])
    started = time.monotonic()
    finished = turn(
        state,
        ports(backend, tmp_path, ScriptedApprover([ApprovalDecision.ALLOW_ONCE]), commands=True),
        cancel,
    )
    assert finished.reason is TransitionReason.CANCELLED
    assert time.monotonic() - started < 3
    [result] = state.messages[-1].blocks
    assert isinstance(result, ToolResultBlock)
    assert result.is_error
    assert validate(sendable(state.messages)) == []


@pytest.mark.parametrize(
    ("fault", "kind", "retryable"),
    [
        (Fault(FaultKind.RATE_LIMITED), "rate_limit", True),
        (Fault(FaultKind.OVERLOADED), "overloaded", True),
        (Fault(FaultKind.SERVER_ERROR), "server_error", True),
        (
            Fault(
                FaultKind.MID_STREAM_ERROR,
                after_events=4,
                reply=Reply.text("Some words before the error arrives."),
            ),
            "overloaded",
            True,
        ),
        (
            Fault(
                FaultKind.CUT_OFF, after_events=4, reply=Reply.text("Some words before the cut.")
            ),
            "stream_cut",
            True,
        ),
        (
            Fault(
                FaultKind.MALFORMED_TOOL_JSON,
                reply=Reply.tools(("toolu_m", "current_time", {"tz": "UTC"})),
            ),
            "malformed_tool_input",
            True,
        ),
    ],
)
def test_every_fault_becomes_the_right_error_and_a_valid_history(
    sim: SimulatorServer, backend: AnthropicBackend, fault: Fault, kind: str, retryable: bool
) -> None:
    sim.queue(fault)
    state = LoopState([user_text("hi")])
    finished = turn(state, ports(backend))
    assert finished.reason is TransitionReason.ERROR
    assert finished.error is not None
    assert (finished.error.kind, finished.error.retryable) == (kind, retryable)
    assert finished.error.title
    assert finished.error.message
    assert validate(sendable(state.messages)) == []
    # and the next turn works
    assert (
        turn(LoopState(sendable(state.messages)), ports(backend)).reason
        is TransitionReason.END_TURN
    )


def test_a_rejected_request_is_not_retryable(backend: AnthropicBackend) -> None:
    """Sent straight to the backend (the loop would refuse it first): the server's 400."""
    unanswered = Message("assistant", (ToolUseBlock("t1", "x", {}),))
    request = ChatRequest(MODEL, (user_text("hi"), unanswered), 100)
    with pytest.raises(ContextDeskError) as caught:
        list(backend.stream(request, CancelToken()))
    info = caught.value.info
    assert (info.kind, info.retryable) == ("invalid_request", False)
    assert "`tool_use` ids were found without `tool_result` blocks" in info.message


@pytest.mark.parametrize(
    ("key", "title"), [("", "No API key"), ("sk-wrong", "The API key was not accepted")]
)
def test_a_missing_or_wrong_key_is_a_clear_error(
    sim: SimulatorServer, key: str, title: str
) -> None:
    sim.state.required_key = TEST_KEY
    api = AnthropicBackend(key, sim.base_url, max_retries=0)
    try:
        finished = turn(LoopState([user_text("hi")]), ports(api))
    finally:
        api.close()
    assert finished.error is not None
    assert (finished.error.kind, finished.error.title, finished.error.retryable) == (
        "auth",
        title,
        False,
    )


def test_a_404_says_model_or_endpoint_not_a_missing_chat(sim: SimulatorServer) -> None:
    """An HTTP 404 has a kind of its own: `NOT_FOUND` is for our chats, messages and facts."""
    api = AnthropicBackend(TEST_KEY, sim.base_url + "/not-the-api", max_retries=0)
    try:
        finished = turn(LoopState([user_text("hi")]), ports(api))
    finally:
        api.close()
    assert finished.error is not None
    assert (finished.error.kind, finished.error.retryable) == (ErrorKind.UNKNOWN_MODEL, False)
    assert "check the base URL" in finished.error.message


def test_an_unreachable_server(tmp_path: Path) -> None:
    api = AnthropicBackend(TEST_KEY, "http://127.0.0.1:9", max_retries=0, timeout=5)
    try:
        finished = turn(LoopState([user_text("hi")]), ports(api))
    finally:
        api.close()
    assert finished.error is not None
    assert finished.error.kind == "connection"
    assert "127.0.0.1:9" in finished.error.message


def test_count_tokens_and_the_fallback_when_missing(
    sim: SimulatorServer, backend: AnthropicBackend
) -> None:
    request = ChatRequest(MODEL, (user_text("count me please"),), 100)
    assert (backend.count_tokens(request) or 0) > 0
    assert sim.received[-1].headers["x-contextdesk-purpose"] == "count"
    sim.state.count_tokens_available = False
    assert backend.count_tokens(request) is None


def test_models_and_their_limits(backend: AnthropicBackend) -> None:
    models = {m.id: m for m in backend.models()}
    assert models["claude-haiku-4-5"].context_window == 200_000
    assert models["claude-haiku-4-5"].web_search is True  # capabilities.server_tools
    assert backend.model_info("claude-sonnet-5-5").context_window == 1_000_000
    assert backend.model_info("no-such-model").context_window == 200_000


def test_models_fall_back_to_the_builtin_table(tmp_path: Path) -> None:
    api = AnthropicBackend(TEST_KEY, "http://127.0.0.1:9", max_retries=0, timeout=5)
    try:
        assert [m.id for m in api.models()][:1] == ["claude-opus-5-5"]
    finally:
        api.close()


def test_compaction_requests_say_so(sim: SimulatorServer, backend: AnthropicBackend) -> None:
    request = ChatRequest(
        MODEL, (user_text("Summarize: refund 847.20 due 2026-04-13."),), 200, purpose="compaction"
    )
    list(backend.stream(request, CancelToken()))
    assert sim.message_requests()[0].headers["x-contextdesk-purpose"] == "compaction"


QUICK = Deadlines(connect_s=2, first_event_s=1.5, idle_s=1.5, max_wait_s=5, retries=2)


def timed_turn(sim: SimulatorServer, deadlines: Deadlines) -> tuple[TurnFinished, LoopState, float]:
    """One turn against the simulator with these deadlines; and how long it took."""
    api = AnthropicBackend(TEST_KEY, sim.base_url, deadlines=deadlines)
    state = LoopState([user_text("hi")])
    began = time.monotonic()
    try:
        finished = turn(state, ports(api))
    finally:
        api.close()
    return finished, state, time.monotonic() - began


@pytest.mark.parametrize(
    ("fault", "started"),
    [
        (Fault(FaultKind.SILENT), False),  # accepts the connection, then nothing
        (Fault(FaultKind.HANG, after_events=0), False),  # headers, then silence
        (Fault(FaultKind.PINGS, after_events=4, reply=Reply.text("a long reply " * 50)), True),
        (Fault(FaultKind.HANG, after_events=6, reply=Reply.text("a long reply " * 50)), True),
    ],
)
def test_a_stream_that_goes_quiet_ends_with_an_error_in_time(
    sim: SimulatorServer, fault: Fault, started: bool
) -> None:
    sim.queue(fault)
    finished, state, took = timed_turn(sim, QUICK)
    assert finished.error is not None
    assert finished.error.kind is ErrorKind.TIMEOUT
    assert finished.error.retryable
    assert ("in the middle of the reply" in finished.error.message) is started
    assert took < QUICK.first_event_s + QUICK.idle_s + 3  # not HANG_LIMIT_S, not 30 minutes
    assert validate(sendable(state.messages)) == []  # what arrived is kept, validly


def test_a_wait_longer_than_we_keep_a_user_waiting_is_an_error_at_once(
    sim: SimulatorServer,
) -> None:
    sim.queue(Fault(FaultKind.RATE_LIMITED, retry_after_ms=3_600_000))  # "come back in an hour"
    finished, _, took = timed_turn(sim, QUICK)
    assert took < 3
    assert finished.error is not None
    assert finished.error.kind is ErrorKind.RATE_LIMIT
    assert "asks to wait 60 minutes" in finished.error.message
    assert finished.error.retryable
    assert len(sim.message_requests()) == 1


def test_a_stream_line_that_is_not_json_is_a_readable_error(
    sim: SimulatorServer, backend: AnthropicBackend
) -> None:
    sim.queue(Fault(FaultKind.MALFORMED_SSE, after_events=5, reply=Reply.text("Half of a reply")))
    state = LoopState([user_text("hi")])
    finished = turn(state, ports(backend))
    assert finished.error is not None
    assert finished.error.kind is ErrorKind.STREAM_ERROR
    assert "not the Messages API's format" in finished.error.message
    assert validate(sendable(state.messages)) == []


def test_a_wait_before_trying_again_is_counted_down(sim: SimulatorServer) -> None:
    sim.queue(Fault(FaultKind.OVERLOADED, retry_after_ms=2500), Reply.text("Recovered."))
    api = AnthropicBackend(TEST_KEY, sim.base_url, max_retries=2, deadlines=QUICK)
    state = LoopState([user_text("hi")])
    try:
        events = list(run_turn(state, ports(api), CancelToken(), LoopConfig(max_turns=5)))
    finally:
        api.close()
    waits = [e for e in events if isinstance(e, RetryWaiting)]
    assert [round(w.seconds, 1) for w in waits] == [2.5, 1.5, 0.5]
    assert {w.reason for w in waits} == {"Claude is overloaded"}
    assert state.messages[-1].text == "Recovered."


def test_a_reply_that_never_stops_trickling_ends_at_the_request_deadline(
    sim: SimulatorServer,
) -> None:
    sim.state.frame_delay_s = 0.05  # steady progress: no idle deadline would fire
    sim.queue(Reply.text("word " * 2000))
    finished, state, took = timed_turn(sim, Deadlines(request_s=1.0, retries=0))
    assert took < 3
    assert finished.error is not None
    assert finished.error.title == "The reply took too long"
    assert state.messages[-1].text.startswith("word word")  # what arrived is kept
