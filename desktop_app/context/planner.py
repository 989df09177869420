"""The `RequestPlanner` the loop uses: project, compact first when due, project again.

It owns the chat's latest `ContextState`; every change (a summary applied, a compaction
failure counted by the circuit breaker) is announced as `ContextStateChanged`, which the
GUI thread or the CLI persists.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from desktop_app.context.chat_settings import ContextSettings
from desktop_app.context.compaction import (
    Compactor,
    apply_preview,
    plan_span,
    why_not_compactable,
)
from desktop_app.context.errors import NothingToCompact
from desktop_app.context.facts import Fact, FactSource
from desktop_app.context.plan import Plan
from desktop_app.context.project import ProjectLayers
from desktop_app.context.projection import Projector
from desktop_app.context.state import ContextState
from desktop_app.context.trimming import TrimPolicy
from desktop_app.core.blocks import JSONObject
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import ContextDeskError
from desktop_app.core.events import (
    CompactionApplied,
    CompactionFailed,
    CompactionStarted,
    ContextStateChanged,
    LoopEvent,
)
from desktop_app.core.messages import Message
from desktop_app.core.model_facts import ModelFacts, facts_for
from desktop_app.core.request import ChatRequest, ToolSpec
from desktop_app.core.thinking import allowed_tool_choice, setup


@dataclass
class ContextPlanner:
    projector: Projector
    compactor: Compactor
    settings: ContextSettings
    state: ContextState
    model: str
    system: str = ""
    tools: Sequence[ToolSpec] = ()
    trim_policies: Mapping[str, TrimPolicy] = field(default_factory=dict)
    workspace: str | None = None
    # The model's rules (core/model_facts.py) and the chat's thinking choice; None: the
    # table's facts for `model`, and thinking as ContextSettings say.
    facts: ModelFacts | None = None
    auto_pin: bool = False  # facts the model proposes are pinned at once, not suggested
    tool_choice: JSONObject | None = None  # an imported chat's own (`RequestExtras`)
    metadata: JSONObject | None = None
    prompt_caching: bool = True  # the server takes `cache_control` (Anthropic's API)
    project: ProjectLayers | None = None  # the chat's project's layers, if it has one
    # Called before each request of a turn, to bring up to date what may change meanwhile
    # (the MCP servers' tools and the line about those not ready: tools/mcp_tools.py).
    refresh: Callable[[ContextPlanner], None] | None = None
    _unannounced: bool = field(default=False, init=False, repr=False)  # a tool's change

    @property
    def model_facts(self) -> ModelFacts:
        return self.facts if self.facts is not None else facts_for(self.model)

    def plan(self, messages: Sequence[Message]) -> Plan:
        facts = self.model_facts
        thinking = setup(facts, self.settings.thinking_choice, self.settings.max_tokens)
        plan = self.projector.project(
            messages,
            self.state,
            self.settings,
            model=self.model,
            system=self.system,
            tools=self.tools,
            trim_policies=self.trim_policies,
            workspace=self.workspace,
            thinking=thinking,
            facts=facts,
            project=self.project,
        )
        plan = replace(plan, compaction_blocked=self.compaction_blocked(messages))
        tool_choice = allowed_tool_choice(facts, self.tool_choice, plan.thinking.thinks)
        if tool_choice or self.metadata or not self.prompt_caching:
            request = replace(
                plan.request,
                tool_choice=tool_choice,
                metadata=self.metadata,
                prompt_caching=self.prompt_caching,
            )
            plan = replace(plan, request=request)
        return plan

    def compaction_blocked(self, messages: Sequence[Message]) -> str:
        """Why nothing can be compacted now ("" when something can): *Compact now…* is
        offered only when it can do something, its reason in the tooltip otherwise."""
        return why_not_compactable(messages, self.state, self.settings)

    def compacts_first(self, plan: Plan, messages: Sequence[Message]) -> bool:
        """Will sending `messages` (planned as `plan`) compact older turns first, so the
        request is not yet known (its summary is still to be written)?"""
        due = plan.compaction_due and self.settings.auto_compact and not self.state.breaker.paused
        if not due:
            return False
        try:
            plan_span(messages, self.state, self.settings)
        except NothingToCompact:
            return False  # too few turns: trimming makes the request fit instead
        return True

    def propose_fact(self, text: str, fields: tuple[tuple[str, str], ...]) -> str:
        """pin_fact's handler: the model's fact waits for the user (or is pinned at once
        when the chat allows auto-pinning). Persist `state` after the turn either way."""
        fact = Fact(text, fields, source=FactSource.MODEL, pending=not self.auto_pin)
        self.state = self.state.pin(fact)
        self._unannounced = True
        if self.auto_pin:
            return f"Pinned: {text!r}. It will be sent with every message from now on."
        return f"Suggested {text!r} as a pinned fact; the user will accept or reject it."

    def prepare(
        self, messages: Sequence[Message], cancel: CancelToken
    ) -> Generator[LoopEvent, None, ChatRequest]:
        if self.refresh is not None:
            self.refresh(self)
        if self._unannounced:
            self._unannounced = False
            yield ContextStateChanged(self.state)
        plan = self.plan(messages)
        if self.compacts_first(plan, messages):
            yield from self.auto_compact(messages, plan.due_reason, cancel)
            plan = self.plan(messages)
        return plan.request

    def auto_compact(
        self, messages: Sequence[Message], reason: str, cancel: CancelToken
    ) -> Generator[LoopEvent, None, None]:
        """Compact; on failure count it (3 in a row pause auto-compaction) and let the
        projection fall back to trimming. A cancel propagates: the turn stops."""
        yield CompactionStarted(reason)
        try:
            preview = self.compactor.auto(
                messages, self.state, self.settings, model=self.model, cancel=cancel
            )
        except NothingToCompact:
            return  # too few turns to compact: trimming makes the request fit
        except ContextDeskError as exc:
            self.state = self.state.compaction_failed(exc.message)
            yield CompactionFailed(exc.info, self.state.breaker.paused)
            yield ContextStateChanged(self.state)
            return
        self.state = apply_preview(self.state, preview)
        summary = self.state.active_summary
        yield CompactionApplied(
            summary.number if summary else 0,
            preview.tokens_before,
            preview.tokens_after,
            preview.missing,
        )
        yield ContextStateChanged(self.state)
