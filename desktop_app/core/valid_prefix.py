"""Where checking a long history may go on from (`protocol.validate_from`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from desktop_app.core.images import ImageFacts
from desktop_app.core.messages import Message
from desktop_app.core.transcript import Lineage, capped, lineage_of, merged, shared_prefix


@dataclass(frozen=True, slots=True)
class ValidPrefix:
    """A history checked without a problem before its last turn: those messages, and the
    check's state where that turn starts. The same history a turn longer — or with
    another last turn (a draft, a stand-in) — is checked on from there
    (`validate_from`), not from its first of 100,000 messages."""

    history: Sequence[Message]  # the history checked, never changed: a transcript, or a copy
    length: int  # … its first `length` messages, that is
    lineage: Lineage  # theirs (`transcript.py`), and of the checks they went on from
    continued: bool  # the message after them carried the assistant's turn on
    expected: tuple[str, ...]  # the tool calls the turn there must answer
    seen_ids: tuple[frozenset[str], ...]  # the tool ids met, in layers (`SeenIds`)
    image_count: int
    wide_images: tuple[tuple[str, ImageFacts], ...]
    server_calls: bool
    documents: tuple[tuple[str, bool], ...]

    def begins(self, messages: Sequence[Message]) -> bool:
        """Do `messages` begin with this prefix's messages? (Their lineages may say so;
        else they are compared, identical objects at C speed.)"""
        return shared_prefix(self.history, self.lineage, messages, self.length) == self.length


def lineage_at(messages: Sequence[Message], at: int, since: ValidPrefix | None) -> Lineage:
    """The lineage of `messages[:at]`, and what `since` knew, when the check went on
    from it (they begin with its messages)."""
    own = capped(lineage_of(messages), at)
    return own if since is None else merged(own, since.lineage, since.length)


class SeenIds:
    """The tool ids a check has met: those it met itself, over the frozen layers of the
    prefix it went on from — shared, not copied (a 100,000-message chat has ~40,000 ids,
    and each plan checks it). Layers merge as a binary counter's digits carry, so there
    are never more than ~log₂ of them, and a turn's ids are copied ~log₂ times in all."""

    def __init__(self, layers: tuple[frozenset[str], ...] = ()) -> None:
        self.layers = layers
        self.new: set[str] = set()

    def __contains__(self, tool_id: object) -> bool:
        return tool_id in self.new or any(tool_id in layer for layer in self.layers)

    def add(self, tool_id: str) -> None:
        self.new.add(tool_id)

    def frozen(self) -> tuple[frozenset[str], ...]:
        """The ids met, as layers for the next check."""
        if not self.new:
            return self.layers
        layers = [*self.layers, frozenset(self.new)]
        while len(layers) > 1 and len(layers[-1]) >= len(layers[-2]):
            layers[-2:] = [layers[-2] | layers[-1]]
        return tuple(layers)
