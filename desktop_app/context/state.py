"""A chat's context settings (the user's choices) and context state (what was decided:
facts, summaries, exclusions, the compaction circuit breaker). Both are immutable; every
change returns a new value, which storage persists in one transaction."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from desktop_app.context.facts import Fact
from desktop_app.core.messages import new_id

BREAKER_LIMIT = 3  # consecutive compaction failures before auto-compaction pauses


@dataclass(frozen=True, slots=True)
class Summary:
    """One compaction: the messages it stands for and the text that replaces them."""

    number: int  # #k, in the order summaries were made in this chat
    covers: tuple[str, ...]  # message ids, in transcript order (absorbing earlier summaries)
    text: str
    model: str
    instructions: str = ""
    replaces: str | None = None  # the summary this one absorbed (restored by undo)
    warnings: tuple[str, ...] = ()  # fidelity: facts the text lost, accepted anyway
    id: str = field(default_factory=lambda: new_id("sum"))
    created_at: float = field(default_factory=time.time)
    edited: bool = False
    undone: bool = False


@dataclass(frozen=True, slots=True)
class Breaker:
    """The circuit breaker: after BREAKER_LIMIT failures in a row, auto-compaction pauses."""

    failures: int = 0
    paused: bool = False
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ContextState:
    facts: tuple[Fact, ...] = ()
    summaries: tuple[Summary, ...] = ()
    excluded_messages: frozenset[str] = frozenset()
    excluded_blocks: frozenset[tuple[str, int]] = frozenset()
    cleared_results: frozenset[str] = frozenset()  # tool_use ids whose results are cleared
    breaker: Breaker = Breaker()
    # The messages of the chat's other branches (core/branches.py), as the store read
    # them; never saved. A summary that stands for any of them is not this branch's.
    off_branch: frozenset[str] = frozenset()

    @property
    def active_summary(self) -> Summary | None:
        return next(
            (
                s
                for s in reversed(self.summaries)
                if not s.undone and self.off_branch.isdisjoint(s.covers)
            ),
            None,
        )

    # -- facts ---------------------------------------------------------------------------

    def pin(self, fact: Fact) -> ContextState:
        return replace(self, facts=(*self.facts, fact))

    def update_fact(self, fact: Fact) -> ContextState:
        return replace(self, facts=tuple(fact if f.id == fact.id else f for f in self.facts))

    def unpin(self, fact_id: str) -> ContextState:
        return replace(self, facts=tuple(f for f in self.facts if f.id != fact_id))

    def move_fact(self, fact_id: str, to_index: int) -> ContextState:
        facts = [f for f in self.facts if f.id != fact_id]
        moving = next(f for f in self.facts if f.id == fact_id)
        facts.insert(max(0, min(to_index, len(facts))), moving)
        return replace(self, facts=tuple(facts))

    # -- summaries ----------------------------------------------------------------------

    def with_summary(self, summary: Summary) -> ContextState:
        """Apply a compaction; a successful one also closes the circuit breaker."""
        return replace(self, summaries=(*self.summaries, summary), breaker=Breaker())

    def undo_summary(self) -> ContextState:
        """Undo the active summary: the span it covered is sent as before (or as the
        summary it replaced)."""
        active = self.active_summary
        if active is None:
            return self
        return replace(
            self,
            summaries=tuple(replace(s, undone=True) if s is active else s for s in self.summaries),
        )

    def edit_summary(self, summary_id: str, text: str) -> ContextState:
        return replace(
            self,
            summaries=tuple(
                replace(s, text=text, edited=True) if s.id == summary_id else s
                for s in self.summaries
            ),
        )

    def next_summary_number(self) -> int:
        return len(self.summaries) + 1

    # -- exclusions and clearing -----------------------------------------------------------

    def exclude_message(self, message_id: str, excluded: bool = True) -> ContextState:
        ids = (
            self.excluded_messages | {message_id}
            if excluded
            else self.excluded_messages - {message_id}
        )
        return replace(self, excluded_messages=frozenset(ids))

    def exclude_block(self, message_id: str, index: int, excluded: bool = True) -> ContextState:
        key = (message_id, index)
        ids = self.excluded_blocks | {key} if excluded else self.excluded_blocks - {key}
        return replace(self, excluded_blocks=frozenset(ids))

    def clear_results(self, tool_use_ids: frozenset[str] | set[str]) -> ContextState:
        return replace(self, cleared_results=self.cleared_results | frozenset(tool_use_ids))

    # -- the circuit breaker ------------------------------------------------------------------

    def compaction_failed(self, reason: str) -> ContextState:
        failures = self.breaker.failures + 1
        paused = failures >= BREAKER_LIMIT
        why = (
            f"Auto-compaction paused after {failures} failures in a row. Last error: {reason}"
            if paused
            else reason
        )
        return replace(self, breaker=Breaker(failures, paused, why))

    def resume_auto_compaction(self) -> ContextState:
        return replace(self, breaker=Breaker())
