"""Running the loop to the end in tests."""

from __future__ import annotations

from desktop_app.core.cancel import CancelToken
from desktop_app.core.events import LoopEvent, TurnFinished
from desktop_app.core.loop import LoopConfig, LoopPorts, LoopState, run_turn
from desktop_app.core.messages import Message, user_text
from desktop_app.core.whole_history import WholeHistoryPlanner
from tests.fakes.backend import ScriptedBackend
from tests.fakes.tools import FakeTools, ScriptedApprover


def make_ports(
    backend: ScriptedBackend,
    tools: FakeTools | None = None,
    approver: ScriptedApprover | None = None,
) -> LoopPorts:
    specs = tuple(tools.specs()) if tools else ()
    return LoopPorts(
        backend=backend,
        planner=WholeHistoryPlanner(model="claude-test", system="Be brief.", tools=specs),
        approver=approver or ScriptedApprover(),
        tools=tools,
    )


def run(
    state: LoopState,
    ports: LoopPorts,
    cancel: CancelToken | None = None,
    config: LoopConfig | None = None,
) -> list[LoopEvent]:
    events = list(run_turn(state, ports, cancel or CancelToken(), config or LoopConfig()))
    assert isinstance(events[-1], TurnFinished), "run_turn must always end with TurnFinished"
    return events


def ask(text: str, history: list[Message] | None = None) -> LoopState:
    return LoopState(messages=[*(history or []), user_text(text)])
