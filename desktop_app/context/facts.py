"""Pinned facts: sent verbatim on every request, never
summarized, trimmed or rewritten by any policy."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

from desktop_app.core.messages import new_id

FACTS_HEADING = "## Pinned facts"
FACTS_PREAMBLE = (
    "The user pinned these facts for this conversation. They are authoritative and are sent "
    "unchanged with every message, even after older turns are summarized or dropped. "
    "Quote them exactly."
)


class FactSource(StrEnum):
    USER = "user"
    MODEL = "model"  # proposed by the model through pin_fact
    IMPORT = "import"  # another app's memory or custom instructions, brought by an import


@dataclass(frozen=True, slots=True)
class Fact:
    text: str
    fields: tuple[tuple[str, str], ...] = ()
    source: FactSource = FactSource.USER
    id: str = field(default_factory=lambda: new_id("fact"))
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)
    pending: bool = False  # a model's suggestion the user has not accepted yet: not sent

    def edited(self, text: str, fields: tuple[tuple[str, str], ...] | None = None) -> Fact:
        return replace(
            self,
            text=text,
            fields=self.fields if fields is None else fields,
            updated_at=time.time(),
        )

    def render(self) -> str:
        """The fact as it appears in the system prompt: its text exactly, then its fields."""
        lines = [f"- {self.text}"]
        lines += [f"  - {key}: {value}" for key, value in self.fields]
        return "\n".join(lines)


def offered(texts: Sequence[str], source: FactSource, known: Sequence[Fact] = ()) -> list[Fact]:
    """`texts` as facts awaiting the user's Accept or Reject (shown, not sent), each once,
    leaving out those already among `known` (pinned or offered)."""
    held = {f.text for f in known}
    return [Fact(t, source=source, pending=True) for t in dict.fromkeys(texts) if t not in held]


def facts_block(facts: Sequence[Fact]) -> str:
    """The system-prompt section holding every accepted fact, in order; "" when none."""
    sent = [f for f in facts if not f.pending]
    if not sent:
        return ""
    return "\n".join([FACTS_HEADING, FACTS_PREAMBLE, "", *(f.render() for f in sent)])
