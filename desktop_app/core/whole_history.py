"""The simplest `RequestPlanner`: the whole history, same-role neighbours merged.

The context engine replaces it with the real projection (facts, summaries, trimming); this
one serves tests, the CLI before the context engine exists, and compaction requests.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass

from desktop_app.core.cancel import CancelToken
from desktop_app.core.events import LoopEvent
from desktop_app.core.history import merge_same_role
from desktop_app.core.messages import Message
from desktop_app.core.request import ChatRequest, SystemPart, ToolSpec


@dataclass(frozen=True, slots=True)
class WholeHistoryPlanner:
    model: str
    max_tokens: int = 4096
    system: str = ""
    tools: tuple[ToolSpec, ...] = ()
    thinking_budget: int | None = None  # extended thinking (models that take a budget)
    cache: bool = True

    def prepare(
        self, messages: Sequence[Message], cancel: CancelToken
    ) -> Generator[LoopEvent, None, ChatRequest]:
        yield from ()
        return ChatRequest(
            model=self.model,
            messages=merge_same_role(messages),
            max_tokens=self.max_tokens,
            system=(SystemPart(self.system, cache=self.cache),) if self.system else (),
            tools=self.tools,
            thinking=(
                {"type": "enabled", "budget_tokens": self.thinking_budget}
                if self.thinking_budget
                else None
            ),
            cache_last_message=self.cache,
        )
