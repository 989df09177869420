"""The tool registry: the `ToolRunner` the loop calls.

A tool is data (name, description, input schema, approval policy, trimming policy,
timeout) plus a handler. Before a call runs, its input is checked against the schema and
its fully resolved action described (the real path, the exact command), so the approval
dialog shows what will actually happen, and a refused path never reaches a handler.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop_app.context.trimming import TrimPolicy
from desktop_app.core.blocks import ToolUseBlock
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import Cancelled, ContextDeskError
from desktop_app.core.ports import ApprovalPolicy, ToolCheck, ToolOutcome
from desktop_app.core.request import ToolSpec
from desktop_app.tools.schema import check_input

PinCallback = Callable[[str, tuple[tuple[str, str], ...]], str]


@dataclass
class ToolContext:
    """What a handler may use: the workspace, the cancel token, the pin callback."""

    workspace: Path | None
    cancel: CancelToken
    on_pin: PinCallback | None = None
    command_env: tuple[str, ...] = ()  # variables the user lets commands see


Handler = Callable[[dict[str, Any], ToolContext], "ToolOutcome | str"]
Describer = Callable[[dict[str, Any], ToolContext], str]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    handler: Handler
    policy: ApprovalPolicy = ApprovalPolicy.ALLOW
    trim: TrimPolicy | None = None
    timeout: float = 60.0
    describe: Describer | None = None  # the resolved action, shown when asking
    lane: str = ""  # calls in different lanes may run at once (core/ports.py ToolCheck)

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.input_schema)


@dataclass
class ToolRegistry:
    tools: Sequence[Tool]
    workspace: Path | None = None
    on_pin: PinCallback | None = None
    policies: Mapping[str, ApprovalPolicy] = field(default_factory=dict)  # the user's overrides
    command_env: tuple[str, ...] = ()  # variables the user lets commands see

    def __post_init__(self) -> None:
        self._by_name = {t.name: t for t in self.tools}

    def specs(self) -> Sequence[ToolSpec]:
        return [t.spec for t in self.tools]

    def update(self, fresh: Iterable[Tool]) -> None:
        """Add these tools, or replace those of the same names (a tool server changed
        between two requests); the others stay, in their order."""
        by_name = {t.name: t for t in fresh}
        kept = [by_name.pop(t.name, t) for t in self.tools]
        self.tools = [*kept, *by_name.values()]
        self._by_name = {t.name: t for t in self.tools}

    def trim_policies(self) -> dict[str, TrimPolicy]:
        return {t.name: t.trim for t in self.tools if t.trim}

    def check(self, call: ToolUseBlock) -> ToolCheck:
        tool = self._by_name.get(call.name)
        if tool is None:
            known = ", ".join(self._by_name) or "none"
            return ToolCheck(
                ApprovalPolicy.DENY,
                call.name,
                error=f"Unknown tool {call.name!r}. Available tools: {known}.",
            )
        problems = check_input(call.input, tool.input_schema)
        if problems:
            return ToolCheck(
                ApprovalPolicy.DENY,
                call.name,
                error=f"Invalid input for {call.name}: " + "; ".join(problems),
            )
        policy = self.policies.get(call.name, tool.policy)
        if tool.policy is ApprovalPolicy.ASK and policy is ApprovalPolicy.ALLOW:
            policy = ApprovalPolicy.ASK  # a tool that always asks cannot be set to allow
        try:
            summary = (
                tool.describe(call.input, self._context(CancelToken()))
                if tool.describe
                else f"{call.name} {call.input}"
            )
        except ContextDeskError as exc:
            return ToolCheck(ApprovalPolicy.DENY, call.name, error=exc.message)
        return ToolCheck(policy, summary, lane=tool.lane)

    def run(self, call: ToolUseBlock, cancel: CancelToken) -> ToolOutcome:
        tool = self._by_name[call.name]
        context = self._context(cancel)
        done = threading.Event()
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["result"] = tool.handler(call.input, context)
            except BaseException as exc:  # handed to the caller's thread below
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=work, name=f"tool-{call.name}", daemon=True).start()
        unregister = cancel.on_cancel(done.set)
        try:
            finished = done.wait(tool.timeout)
        finally:
            unregister()
        if cancel.cancelled:
            raise Cancelled()
        if not finished:
            return ToolOutcome(
                f"{call.name} timed out after {tool.timeout:g} s and was abandoned.", is_error=True
            )
        if "error" in box:
            error = box["error"]
            if isinstance(error, ContextDeskError):
                return ToolOutcome(error.message, is_error=True)
            if isinstance(error, OSError):  # a file that vanished, a race: refused, not fatal
                return ToolOutcome(f"{call.name} failed: {error.strerror or error}", is_error=True)
            raise error
        result = box["result"]
        return result if isinstance(result, ToolOutcome) else ToolOutcome(str(result))

    def _context(self, cancel: CancelToken) -> ToolContext:
        return ToolContext(self.workspace, cancel, self.on_pin, self.command_env)


def registry(tools: Iterable[Tool], **kwargs: Any) -> ToolRegistry:
    return ToolRegistry(list(tools), **kwargs)
