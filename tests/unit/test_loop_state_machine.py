"""A Hypothesis state machine over the whole core: whatever users, models, tools and
cancels do, in any order, the next request is one the API accepts.

Rules: the user sends text; the model replies with 0–4 parallel tool calls, thinking and
text, and the user may cancel at any phase (while text streams, between tool calls in the
stream, while a tool runs, while an approval waits); tools may fail; the history is
repaired and round-tripped through the API's JSON. The invariant: the validator accepts
what would be sent, and every request the (strict) backend received was valid.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import Cancelled
from desktop_app.core.events import TurnFinished
from desktop_app.core.history import merge_same_role
from desktop_app.core.loop import LoopConfig, LoopState, run_turn
from desktop_app.core.messages import Message, user_text
from desktop_app.core.ports import ApprovalDecision, ApprovalPolicy, ApprovalRequest
from desktop_app.core.protocol import validate
from desktop_app.core.repair import repair
from desktop_app.core.wire import messages_from_api
from tests.fakes.backend import CancelNow, ReplyBuilder, ScriptedBackend, Step
from tests.fakes.harness import make_ports
from tests.fakes.tools import FakeTools

EXAMPLES = int(os.environ.get("CONTEXTDESK_STATE_MACHINE_EXAMPLES", "500"))
WORDS = ["refund", "847.20", "2026-04-13", "订单", "שלום", "🙂", "path/a.py", "  ", "\n"]
texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join).filter(str.strip)
PHASES = ["none", "text", "between_calls", "after_stream", "tool", "approval"]


class ToolBox:
    """Tools whose behaviour each reply scripts: ok, fail, or cancel the turn mid-run."""

    def __init__(self) -> None:
        self.cancel: CancelToken | None = None
        self.cancel_on_call = -1
        self.fail_calls: set[int] = set()
        self.count = 0

    def handler(self, tool_input: dict[str, object], token: CancelToken) -> str:
        n = self.count
        self.count += 1
        if n == self.cancel_on_call:
            token.cancel()
            raise Cancelled()
        if n in self.fail_calls:
            raise OSError("tool failed")
        return f"result {n}: {tool_input}"


class Approver:
    def __init__(self) -> None:
        self.cancel_now = False
        self.deny = False

    def approve(self, request: ApprovalRequest, cancel: CancelToken) -> ApprovalDecision:
        if self.cancel_now:
            cancel.cancel()
            raise Cancelled()
        return ApprovalDecision.DENY if self.deny else ApprovalDecision.ALLOW_ONCE


class ConversationMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[Message] = []
        self.backend = ScriptedBackend()
        self.next_id = 0

    def tool_id(self) -> str:
        self.next_id += 1
        return f"toolu_{self.next_id:04d}"

    @rule(text=texts)
    def user_sends(self, text: str) -> None:
        self.messages.append(user_text(text))

    @precondition(lambda self: self.messages and self.messages[-1].role == "user")
    @rule(
        n_calls=st.integers(0, 4),
        thinking=st.booleans(),
        text=st.one_of(st.none(), texts),
        phase=st.sampled_from(PHASES),
        cancel_at=st.integers(0, 3),
        failing=st.sets(st.integers(0, 3), max_size=2),
        ask=st.booleans(),
        deny=st.booleans(),
        stop=st.sampled_from(["tool_use", "tool_use", "max_tokens", "end_turn"]),
    )
    def model_replies(
        self,
        n_calls: int,
        thinking: bool,
        text: str | None,
        phase: str,
        cancel_at: int,
        failing: set[int],
        ask: bool,
        deny: bool,
        stop: str,
    ) -> None:
        reply = ReplyBuilder()
        if thinking:
            reply.thinking("weighing it…", f"sig{self.next_id}==")
        if text:
            if phase == "text":
                reply.then(CancelNow())
            reply.text(text)
        for n in range(n_calls):
            if phase == "between_calls" and n == min(cancel_at, n_calls - 1):
                reply.then(CancelNow())
            reply.tool(self.tool_id(), "work", {"n": n, "note": "ok"})
        if phase == "after_stream":
            reply.then(CancelNow())
        first: list[Step] = (
            reply.end(stop if n_calls else "end_turn")
            if (text or thinking or n_calls)
            else ReplyBuilder().text("ok").end()
        )
        self.backend.queue(first, ReplyBuilder().text("Finished.").end())

        tools = ToolBox()
        tools.cancel_on_call = cancel_at if phase == "tool" else -1
        tools.fail_calls = failing
        approver = Approver()
        approver.cancel_now = phase == "approval"
        approver.deny = deny
        runner = FakeTools().add(
            "work", tools.handler, ApprovalPolicy.ASK if ask else ApprovalPolicy.ALLOW
        )
        ports = make_ports(self.backend, runner)
        ports = type(ports)(ports.backend, ports.planner, approver, ports.tools)

        state = LoopState(messages=list(self.messages))
        events = list(run_turn(state, ports, CancelToken(), LoopConfig(max_turns=3)))
        finished = events[-1]
        assert isinstance(finished, TurnFinished)
        assert finished.error is None, finished.error
        self.messages = state.messages
        self.backend.replies.clear()

    @rule()
    def repair_history(self) -> None:
        """Repairing what the loop left changes nothing that would be sent..."""
        if not self.messages:
            return
        result = repair(merge_same_role([*self.messages, user_text("next")]))
        assert not result.changed, [str(r) for r in result.repairs]
        # ...and a repaired stored history (what loading a chat does) stays sendable.
        self.messages = list(repair(self.messages).messages)

    @rule()
    def json_round_trip(self) -> None:
        data = [m.to_api() for m in self.messages]
        again = messages_from_api(data)
        assert [m.blocks for m in again] == [m.blocks for m in self.messages]
        self.messages = again

    @invariant()
    def next_request_is_valid(self) -> None:
        if not self.messages:
            return
        sendable = merge_same_role([*self.messages, user_text("next")])
        assert validate(sendable) == [], [str(p) for p in validate(sendable)]


ConversationMachine.TestCase.settings = settings(
    max_examples=EXAMPLES,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestConversation = ConversationMachine.TestCase
