"""Each message's whole state in one plan, as spans: a 100,000-message chat's plan marks
most of its messages "not sent" (trimmed) or "summarized" — two ranges, not 100,000
entries made for every plan."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from desktop_app.context.plan import WHOLE_NOT_SENT, BlockState
from desktop_app.core.messages import Message

if TYPE_CHECKING:
    from desktop_app.context.known_prefix import KnownPrefix

MessageMark = tuple[BlockState, int | None]


class MessageStates(Mapping[str, MessageMark]):
    """Precedence, as the projection decides it: the trimmed span is not sent; else a
    message marked one by one (excluded) keeps its mark; else in the summary's span a
    message is summarized in #`number` if the summary stands for it, not sent if not."""

    def __init__(
        self,
        messages: Sequence[Message],
        known: KnownPrefix,
        marked: Mapping[str, MessageMark],
        trimmed: range,
        summarized: range = range(0),
        covered: frozenset[str] = frozenset(),
        number: int | None = None,
        covered_in_span: int = 0,  # how many of the summary's span it stands for
    ) -> None:
        self.messages = messages
        self.known = known
        self.index_of = known.index_of
        self.divergences = known.divergences
        self.marked = marked
        self.trimmed, self.summarized = trimmed, summarized
        self.covered, self.number = covered, number
        self.covered_in_span = covered_in_span
        self._own: dict[str, int] | None = None
        self._held: dict[str, int] = {}

    def hold_from(self, settled: int) -> None:
        """Index here the spans' messages from `settled` on: the known index may forget
        those without counting a divergence (a summary's span can reach the last turn)."""
        high = max(self.trimmed.stop, self.summarized.stop)
        low = max(settled, min(self.trimmed.start, self.summarized.start))
        self._held = {self.messages[i].id: i for i in range(low, high)}

    def index(self, message_id: str) -> int | None:
        """Where a message of this plan's spans is (None: not in one — or, from the known
        index, not in this transcript)."""
        held = self._held.get(message_id)
        if held is not None:
            return held
        if self.known.divergences == self.divergences:
            # (nothing settled changed since: the known index is this transcript's there)
            i = self.index_of.get(message_id)
            return i if i is not None and i < len(self.messages) else None
        if self._own is None:  # another transcript was projected since: index the spans
            low = min(self.trimmed.start, self.summarized.start)
            high = max(self.trimmed.stop, self.summarized.stop)
            self._own = {self.messages[i].id: i for i in range(low, high)}
        return self._own.get(message_id)

    def __getitem__(self, message_id: str) -> MessageMark:
        i = self.index(message_id)
        if i is not None and i in self.trimmed:
            return WHOLE_NOT_SENT
        mark = self.marked.get(message_id)
        if mark is not None:
            return mark
        if i is not None and i in self.summarized:
            if message_id in self.covered:
                return (BlockState.SUMMARIZED, self.number)
            return WHOLE_NOT_SENT
        raise KeyError(message_id)

    def __iter__(self) -> Iterator[str]:
        return (m.id for m in self.messages if m.id in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def not_sent_count(self) -> int:
        """How many messages this plan leaves out as "not sent"."""
        count = len(self.trimmed)
        if self.summarized:
            marked_in_span = [
                m
                for m in self.marked
                if (i := self.index(m)) is not None
                and i in self.summarized
                and m not in self.covered
            ]
            count += len(self.summarized) - self.covered_in_span - len(marked_in_span)
        return count

    def first_unmarked(self, start: int) -> str | None:
        """The first message from `start` on with no state here (in context)."""
        i, n = start, len(self.messages)
        while i < n:
            if i in self.summarized:
                i = self.summarized.stop
            elif i in self.trimmed:
                i = self.trimmed.stop
            elif self.messages[i].id in self.marked:
                i += 1
            else:
                return self.messages[i].id
        return None
