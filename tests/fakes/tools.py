"""A `ToolRunner` and an `Approver` for tests: plain Python callables, scripted answers."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from desktop_app.core.blocks import ToolUseBlock
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import Cancelled
from desktop_app.core.ports import (
    ApprovalDecision,
    ApprovalPolicy,
    ApprovalRequest,
    ToolCheck,
    ToolOutcome,
)
from desktop_app.core.request import ToolSpec

Handler = Callable[[dict[str, object], CancelToken], str]


@dataclass
class FakeTools:
    handlers: dict[str, Handler] = field(default_factory=dict)
    policies: dict[str, ApprovalPolicy] = field(default_factory=dict)
    calls: list[ToolUseBlock] = field(default_factory=list)

    def add(
        self, name: str, handler: Handler, policy: ApprovalPolicy = ApprovalPolicy.ALLOW
    ) -> FakeTools:
        self.handlers[name] = handler
        self.policies[name] = policy
        return self

    def specs(self) -> Sequence[ToolSpec]:
        return [ToolSpec(n, f"the {n} tool", {"type": "object"}) for n in self.handlers]

    def check(self, call: ToolUseBlock) -> ToolCheck:
        if call.name not in self.handlers:
            return ToolCheck(ApprovalPolicy.DENY, call.name, error=f"Unknown tool {call.name!r}.")
        return ToolCheck(self.policies[call.name], f"{call.name} {call.input}")

    def run(self, call: ToolUseBlock, cancel: CancelToken) -> ToolOutcome:
        self.calls.append(call)
        return ToolOutcome(self.handlers[call.name](call.input, cancel))


def echo(tool_input: dict[str, object], cancel: CancelToken) -> str:
    return f"echo {tool_input}"


def hang(tool_input: dict[str, object], cancel: CancelToken) -> str:
    """A tool that runs until it is cancelled."""
    cancel.wait(30)
    raise Cancelled()


def boom(tool_input: dict[str, object], cancel: CancelToken) -> str:
    raise RuntimeError("disk on fire")


@dataclass
class ScriptedApprover:
    decisions: list[ApprovalDecision] = field(default_factory=list)
    asked: list[ApprovalRequest] = field(default_factory=list)
    hang: bool = False
    gate: threading.Event = field(default_factory=threading.Event)

    def approve(self, request: ApprovalRequest, cancel: CancelToken) -> ApprovalDecision:
        self.asked.append(request)
        if self.hang:
            cancel.wait(30)
            raise Cancelled()
        if not self.decisions:
            raise AssertionError(f"unexpected approval request for {request.call.name}")
        return self.decisions.pop(0)
