"""The failures named in the core issue, each as a test.

The pattern behind all of them (anthropics/claude-code#3003 and #12162,
continuedev/continue#4751, block/buzz#559): a history ends up holding a `tool_use` with
no `tool_result` (or a result with no call), the API answers 400, and because the broken
history is stored, *every later request* fails the same way. The backend here is strict:
it answers an invalid request with a 400, like the API.
"""

from __future__ import annotations

from desktop_app.core.blocks import TextBlock, ToolResultBlock
from desktop_app.core.cancel import CancelToken
from desktop_app.core.events import TransitionReason, TurnFinished
from desktop_app.core.loop import LoopState
from desktop_app.core.messages import Message, MessageStatus, user_text
from desktop_app.core.protocol import validate
from desktop_app.core.repair import repair
from desktop_app.core.wire import messages_from_api
from tests.fakes.backend import CancelNow, ReplyBuilder, ScriptedBackend, text_reply
from tests.fakes.harness import make_ports, run
from tests.fakes.tools import FakeTools, echo, hang
from tests.unit.builders import a, call, result, u


def next_turn_succeeds(messages: list[Message]) -> None:
    """The user types again; the request must be accepted and answered."""
    backend = ScriptedBackend().queue(text_reply("Back on track."))
    state = LoopState(messages=[*messages, user_text("Let's continue.")])
    events = run(state, make_ports(backend))
    finished = events[-1]
    assert isinstance(finished, TurnFinished)
    assert finished.error is None, finished.error
    assert finished.reason is TransitionReason.END_TURN
    assert state.messages[-1].text == "Back on track."


def test_cancel_while_a_tool_runs_does_not_poison_the_chat() -> None:
    """claude-code#3003: Esc during a running tool left the call unanswered for good."""
    cancel = CancelToken()

    def cancel_then_hang(tool_input: dict[str, object], token: CancelToken) -> str:
        token.cancel()
        return hang(tool_input, token)

    backend = ScriptedBackend().queue(ReplyBuilder().tool("toolu_01", "slow", {}).end())
    state = LoopState(messages=[user_text("run the slow thing")])
    run(state, make_ports(backend, FakeTools().add("slow", cancel_then_hang)), cancel)
    assert state.transition_reason is TransitionReason.CANCELLED
    next_turn_succeeds(state.messages)


def test_cancel_while_parallel_calls_stream_does_not_poison_the_chat() -> None:
    """claude-code#12162: interrupted while several tool calls were in flight."""
    reply = (
        ReplyBuilder()
        .text("Checking both.")
        .tool("toolu_a", "echo", {"x": 1})
        .then(CancelNow())
        .tool("toolu_b", "echo", {"x": 2})
        .end()
    )
    backend = ScriptedBackend().queue(reply)
    state = LoopState(messages=[user_text("check both")])
    run(state, make_ports(backend, FakeTools().add("echo", echo)))
    assert state.messages[1].status is MessageStatus.INTERRUPTED
    next_turn_succeeds(state.messages)


def test_deleting_the_message_with_the_call_leaves_no_orphan_result() -> None:
    """continue#4751: removing a message by hand left a tool_result with no tool_use."""
    messages = [
        u("find it"),
        a(call("toolu_1")),
        u(result("toolu_1", "found: 847.20")),
        a("It is 847.20."),
    ]
    broken = messages[:1] + messages[2:]  # the message with the call, removed
    assert validate(broken)  # the raw view would be rejected...
    fixed = repair(broken)
    assert "847.20" in fixed.messages[0].text  # ...the repair keeps the result's content
    next_turn_succeeds(list(fixed.messages))


def test_a_history_saved_mid_tool_by_a_crash_is_repaired_on_load() -> None:
    """block/buzz#559: a session restored after a crash mid-tool could not be resumed."""
    saved = messages_from_api(
        [
            {"role": "user", "content": "rename the files"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Renaming now. "},
                    {
                        "type": "tool_use",
                        "id": "toolu_x",
                        "name": "run_command",
                        "input": {"cmd": "mv a b"},
                    },
                ],
            },
            {"role": "user", "content": "are you done?"},
        ]
    )
    fixed = repair(saved)
    assert [type(b) for b in fixed.messages[2].blocks] == [ToolResultBlock, TextBlock]
    assert fixed.messages[2].blocks[1] == TextBlock("are you done?")
    assert any("toolu_x" in str(r) for r in fixed.repairs)
    next_turn_succeeds(list(fixed.messages))


def test_the_strict_backend_really_rejects_a_poisoned_history() -> None:
    """Guard for the tests above: without the repair, the next turn is refused."""
    backend = ScriptedBackend().queue(text_reply("never"))
    state = LoopState(messages=[u("go"), a(call("toolu_1")), user_text("hello?")])
    events = run(state, make_ports(backend))
    finished = events[-1]
    assert isinstance(finished, TurnFinished)
    assert finished.error is not None
    assert "`tool_use` ids were found without `tool_result` blocks" in finished.error.message
