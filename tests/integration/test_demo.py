"""The offline demo model end to end, through the real SDK, the loop and the context engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.api.backend import AnthropicBackend
from desktop_app.api.simulator import SimulatorServer
from desktop_app.context.chat_settings import ContextSettings
from desktop_app.context.compaction import Compactor
from desktop_app.context.plan import BlockState
from desktop_app.context.planner import ContextPlanner
from desktop_app.context.projection import Projector
from desktop_app.context.state import ContextState
from desktop_app.core.blocks import ToolResultBlock
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import ContextDeskError
from desktop_app.core.events import CompactionApplied, LoopEvent, TransitionReason, TurnFinished
from desktop_app.core.loop import LoopConfig, LoopPorts, LoopState, run_turn
from desktop_app.core.messages import Message, user_text
from desktop_app.core.request import ChatRequest
from desktop_app.tools.builtin import builtin_tools
from desktop_app.tools.registry import ToolRegistry
from tests.fakes.tools import ScriptedApprover
from tests.fakes.words import word_counter

MODEL = "contextdesk-demo"


def setup(
    backend: AnthropicBackend,
    settings: ContextSettings,
    *,
    auto_pin: bool = False,
    workspace: Path | None = None,
) -> tuple[ContextPlanner, LoopPorts]:
    counter = word_counter()
    planner = ContextPlanner(
        Projector(counter),
        Compactor(backend, counter),
        settings,
        ContextState(),
        model=MODEL,
        auto_pin=auto_pin,
    )
    registry = ToolRegistry(
        builtin_tools(files=workspace is not None), workspace=workspace, on_pin=planner.propose_fact
    )
    planner.tools = registry.specs()
    ports = LoopPorts(
        backend=backend,
        planner=planner,
        approver=ScriptedApprover(),
        tools=registry,
        counter=counter,
    )
    return planner, ports


def turn(state: LoopState, ports: LoopPorts, window: int = 200_000) -> list[LoopEvent]:
    events = list(run_turn(state, ports, CancelToken(), LoopConfig(context_window=window)))
    assert isinstance(events[-1], TurnFinished)
    assert events[-1].error is None, events[-1].error
    return events


BIG = ContextSettings(context_window=200_000, max_tokens=1000)


def test_the_demo_uses_a_tool_and_labels_itself(backend: AnthropicBackend, tmp_path: Path) -> None:
    (tmp_path / "plan.md").write_text("Ship on Friday.")
    _, ports = setup(backend, BIG, workspace=tmp_path)
    state = LoopState([user_text("please read plan.md")])
    turn(state, ports)
    assert [m.role for m in state.messages] == ["user", "assistant", "user", "assistant"]
    [result] = state.messages[2].blocks
    assert isinstance(result, ToolResultBlock)
    assert result.text == "Ship on Friday."
    assert state.messages[-1].text.startswith(
        "[Simulated reply from the ContextDesk offline demo model]"
    )
    assert state.transition_reason is TransitionReason.END_TURN


def test_the_demo_points_only_at_the_tools_it_was_offered(
    backend: AnthropicBackend, tmp_path: Path
) -> None:
    """Without a workspace it offered to list and read files it could not reach (a new
    user asked, and nothing happened): it says what the file tools need instead. With
    one, "read file X" reads X as "read the file X" does."""
    _, ports = setup(backend, BIG)
    state = LoopState([user_text("hello there")])
    turn(state, ports)
    said = state.messages[-1].text
    assert "Ask me for the time to see tool calls" in said
    assert "to list files" not in said
    assert "the file tools need a workspace folder" in said
    (tmp_path / "itinerary.txt").write_text("Lisbon on 2026-05-14.")
    _, ports = setup(backend, BIG, workspace=tmp_path)
    state = LoopState([user_text("read file itinerary.txt")])
    turn(state, ports)
    assert isinstance(result := state.messages[2].blocks[0], ToolResultBlock)
    assert result.text == "Lisbon on 2026-05-14."
    state = LoopState([user_text("hello there")])
    turn(state, ports)
    assert "to list files or to read a file" in state.messages[-1].text


def test_a_fact_the_model_proposes_waits_for_the_user(backend: AnthropicBackend) -> None:
    planner, ports = setup(backend, BIG)
    state = LoopState([user_text("pin Refund 847.20 due 2026-04-13")])
    turn(state, ports)
    [fact] = planner.state.facts
    assert (fact.text, fact.source.value, fact.pending) == (
        "Refund 847.20 due 2026-04-13",
        "model",
        True,
    )
    assert "847.20" not in planner.plan([*state.messages, user_text("next")]).request.system_text


def test_with_auto_pin_the_fact_is_sent_at_once(
    sim: SimulatorServer, backend: AnthropicBackend
) -> None:
    planner, ports = setup(backend, BIG, auto_pin=True)
    turn(LoopState([user_text("pin Refund 847.20 due 2026-04-13")]), ports)
    follow_up = sim.message_requests()[-1].body
    assert "Refund 847.20 due 2026-04-13" in str(follow_up["system"])
    assert not planner.state.facts[0].pending


def test_the_demo_writes_a_faithful_summary_when_compacting(backend: AnthropicBackend) -> None:
    settings = ContextSettings(context_window=450, max_tokens=50, keep_recent_turns=1)
    planner, ports = setup(backend, settings)
    history: list[Message] = []
    for n in range(6):
        history += [
            user_text(
                f"Order #8821{n} costs {840 + n}.20 and is due 2026-04-1{n}. " + "words " * 30
            ),
            Message("assistant", user_text(f"Noted order #8821{n}.").blocks),
        ]
    events = turn(LoopState([*history, user_text("What is due first?")]), ports, window=450)
    assert any(isinstance(e, CompactionApplied) for e in events)
    summary = planner.state.active_summary
    assert summary is not None
    assert summary.text.startswith("[Simulated summary by the offline demo model]")
    for kept in ("#88211", "841.20", "2026-04-11"):
        assert kept in summary.text
    plan = planner.plan([*history, user_text("again")])
    assert plan.block_status(history[3], 0).state is BlockState.SUMMARIZED


def test_the_environment_configures_the_backend(
    sim: SimulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", sim.base_url)
    api = AnthropicBackend.from_environment(max_retries=0)
    try:
        assert api.base_url == sim.base_url
        assert api.count_tokens(ChatRequest(MODEL, (user_text("hi"),), 10))
    finally:
        api.close()
    assert sim.received[-1].headers["x-api-key"] == "sk-env-key"
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(ContextDeskError, match="ANTHROPIC_API_KEY"):
        AnthropicBackend.from_environment()


def test_count_tokens_calibrates_the_local_estimate(
    sim: SimulatorServer, backend: AnthropicBackend
) -> None:
    counter = word_counter()
    request = ChatRequest(MODEL, (user_text("calibrate me with a few words of text"),), 10)
    factor = backend.calibrate(counter, request)
    assert factor is not None
    assert counter.calibration.factor(MODEL) == factor
    sim.state.count_tokens_available = False
    assert backend.calibrate(counter, request) is None
