"""Tool calls of one reply: asked about one by one, in order, then run — calls in different
lanes (MCP servers) at the same time, a lane's calls in order — with every result back in
ONE message, in the calls' order; Stop cancels them all."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import pytest

from desktop_app.core.blocks import ToolUseBlock
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import Cancelled
from desktop_app.core.events import (
    ToolCallFinished,
    ToolCallStarted,
    TransitionReason,
    TurnFinished,
)
from desktop_app.core.ports import (
    ApprovalDecision,
    ApprovalPolicy,
    ApprovalRequest,
    ToolCheck,
)
from desktop_app.core.protocol import validate
from tests.fakes.backend import ReplyBuilder, ScriptedBackend, text_reply
from tests.fakes.harness import ask, make_ports, run
from tests.fakes.tools import FakeTools, ScriptedApprover
from tests.unit.builders import results_of

pytestmark = pytest.mark.timeout(30)


@dataclass
class LanedTools(FakeTools):
    """FakeTools whose calls run in the lane named for each tool."""

    lanes: dict[str, str] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)  # what happened, in order
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add_in(self, lane: str, name: str, handler: object, policy: ApprovalPolicy) -> LanedTools:
        self.lanes[name] = lane
        self.add(name, handler, policy)  # type: ignore[arg-type]
        return self

    def check(self, call: ToolUseBlock) -> ToolCheck:
        checked = super().check(call)
        return ToolCheck(checked.policy, checked.summary, checked.error, self.lanes[call.name])

    def note(self, what: str) -> None:
        with self.lock:
            self.log.append(what)


@dataclass
class LoggingApprover(ScriptedApprover):
    tools: LanedTools | None = None

    def approve(self, request: ApprovalRequest, cancel: CancelToken) -> ApprovalDecision:
        assert self.tools is not None
        self.tools.note(f"asked {request.call.id}")
        return super().approve(request, cancel)


def reply_calling(*calls: tuple[str, str]) -> ScriptedBackend:
    builder = ReplyBuilder()
    for tool_id, name in calls:
        builder = builder.tool(tool_id, name, {})
    return ScriptedBackend().queue(builder.end(), text_reply("Done."))


def test_calls_in_different_lanes_run_at_the_same_time() -> None:
    meeting = threading.Barrier(2, timeout=5)  # serially, the first call waits alone

    def meet(_input: dict[str, object], _cancel: CancelToken) -> str:
        meeting.wait()
        return "met"

    tools = LanedTools()
    tools.add_in("mcp:a", "a_meet", meet, ApprovalPolicy.ALLOW)
    tools.add_in("mcp:b", "b_meet", meet, ApprovalPolicy.ALLOW)
    state = ask("meet")
    events = run(
        state, make_ports(reply_calling(("toolu_1", "a_meet"), ("toolu_2", "b_meet")), tools)
    )
    results = results_of(state.messages[2])
    assert [r.tool_use_id for r in results] == ["toolu_1", "toolu_2"]
    assert [r.content for r in results] == ["met", "met"]
    assert len([e for e in events if isinstance(e, ToolCallFinished)]) == 2
    assert validate(state.messages) == []


def test_every_approval_is_asked_in_order_before_any_call_runs() -> None:
    tools = LanedTools()

    def work(name: str):  # type: ignore[no-untyped-def]
        def handler(_input: dict[str, object], _cancel: CancelToken) -> str:
            tools.note(f"ran {name}")
            return name

        return handler

    tools.add_in("mcp:a", "a_write", work("a"), ApprovalPolicy.ASK)
    tools.add_in("mcp:b", "b_write", work("b"), ApprovalPolicy.ASK)
    approver = LoggingApprover([ApprovalDecision.ALLOW_ONCE, ApprovalDecision.DENY], tools=tools)
    state = ask("write both")
    run(
        state,
        make_ports(reply_calling(("toolu_1", "a_write"), ("toolu_2", "b_write")), tools, approver),
    )
    assert tools.log == ["asked toolu_1", "asked toolu_2", "ran a"]  # b was denied
    first, second = results_of(state.messages[2])
    assert (first.content, first.is_error) == ("a", False)
    assert second.is_error
    assert "denied" in str(second.content)


def test_a_lane_s_calls_run_one_after_another_in_order() -> None:
    tools = LanedTools()
    running = threading.Lock()

    def step(_input: dict[str, object], _cancel: CancelToken) -> str:
        assert running.acquire(blocking=False), "two calls of one lane ran at once"
        try:
            tools.note("step")
            return "ok"
        finally:
            running.release()

    tools.add_in("mcp:a", "a_step", step, ApprovalPolicy.ALLOW)
    state = ask("three steps")
    calls = [(f"toolu_{n}", "a_step") for n in range(3)]
    run(state, make_ports(reply_calling(*calls), tools))
    assert [r.content for r in results_of(state.messages[2])] == ["ok", "ok", "ok"]
    assert [c.id for c in tools.calls] == ["toolu_0", "toolu_1", "toolu_2"]


def test_stop_cancels_every_running_call_and_answers_all_in_order() -> None:
    both_running = threading.Barrier(3, timeout=5)  # two calls and the test
    saw_stop = threading.Semaphore(0)  # released by each call that saw the Stop

    def wait_for_stop(_input: dict[str, object], cancel: CancelToken) -> str:
        both_running.wait()
        if cancel.wait(20):
            saw_stop.release()
        raise Cancelled()

    tools = LanedTools()
    tools.add_in("mcp:a", "a_hang", wait_for_stop, ApprovalPolicy.ALLOW)
    tools.add_in("mcp:b", "b_hang", wait_for_stop, ApprovalPolicy.ALLOW)
    cancel = CancelToken()

    def stop_once_both_run() -> None:
        both_running.wait()
        cancel.cancel()

    threading.Thread(target=stop_once_both_run, daemon=True).start()
    state = ask("wait")
    ports = make_ports(reply_calling(("toolu_1", "a_hang"), ("toolu_2", "b_hang")), tools)
    events = run(state, ports, cancel)
    finished = events[-1]
    assert isinstance(finished, TurnFinished)
    assert finished.reason is TransitionReason.CANCELLED
    results = results_of(state.messages[-1])
    assert [r.tool_use_id for r in results] == ["toolu_1", "toolu_2"]
    assert all(r.is_error for r in results)
    # Both calls saw the Stop (the turn ends at once; a call's thread may end just after).
    assert saw_stop.acquire(timeout=5)
    assert saw_stop.acquire(timeout=5)
    started = [e.call.id for e in events if isinstance(e, ToolCallStarted)]
    assert started == ["toolu_1", "toolu_2"]
