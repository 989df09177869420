"""A transcript that says which earlier transcripts it begins with.

After a turn in a 100,000-message chat, the next request is planned from a transcript
two messages longer than the last. Finding that it goes on from the last one by
comparing them message by message cost ~0.5 ms a comparison, and a plan made several
(what the projection learned, where the protocol check goes on from, the chat's size).
A `Transcript` carries its `lineage` instead: for a few transcripts it was made from,
how many leading messages it shares with each. Two transcripts made from a common one
share at least that many — found without looking at a message.

A transcript is never changed once made (its mutating methods raise; `list.append(t,
…)` would get past that: never call list's own methods on one): a new one is made from
it (`extended`, `prefix`), so what its lineage says stays true. Names are this process's
own: a copy or a pickle is a transcript without a lineage.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, count, islice
from typing import Any, NoReturn, overload

from desktop_app.core.messages import Message

# (a transcript's name, how many of its leading messages this one shares), its own first
Lineage = tuple[tuple[int, int], ...]
DEPTH = 8  # the ancestors remembered: a plan's transcript is ~3 makings from the last one
KEPT = 12  # … and, by what compared equal to it, of other families (`merged`)
_names = count(1)
_naming = threading.Lock()  # (a count is atomic only under the GIL)


def _new_name() -> int:
    with _naming:
        return next(_names)


class Transcript(list[Message]):
    """A list of messages, never changed, with its `lineage`."""

    __slots__ = ("lineage",)

    def __init__(self, messages: Iterable[Message] = (), lineage: Lineage = ()) -> None:
        super().__init__(messages)
        self.lineage: Lineage = ((_new_name(), len(self)), *_thinned(lineage))[:DEPTH]

    def extended(self, new: Iterable[Message], after: int = -1) -> Transcript:
        """This transcript with `new` messages after it — or after its first `after`."""
        kept = self if after < 0 else islice(self, after)  # (copied once, not sliced first)
        out = Transcript(kept, self.lineage if after < 0 else capped(self.lineage, after))
        list.extend(out, new)
        out.lineage = ((out.lineage[0][0], len(out)), *out.lineage[1:])
        return out

    def prefix(self, length: int) -> Transcript:
        """Its first `length` messages."""
        if length >= len(self):
            return self
        return Transcript(self[:length], capped(self.lineage, length))

    def __reduce__(self) -> tuple[type[Transcript], tuple[list[Message]]]:
        return (Transcript, (list(self),))  # (copied or pickled: no lineage, no mutation)

    def _unchanged(self, *_args: Any, **_kwargs: Any) -> NoReturn:
        raise TypeError("a Transcript is never changed: make a new one (extended, prefix)")

    append = extend = insert = pop = remove = clear = sort = reverse = _unchanged
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _unchanged


class Continued(Sequence[Message]):
    """A transcript with a few messages after it — a plan's draft, the one-word stand-in
    for an empty composer, a window's rows since their last copy (`Snapshots`) — without
    a copy of it (93,000 pointers copied, then freed, were most of a plan after a turn).
    Never changed; indexed, sliced (a slice is a list), and iterated as a list is;
    `lineage` as `base.extended(tail)` would have."""

    __slots__ = ("_n", "base", "lineage", "tail")

    def __init__(
        self, base: Transcript | Continued, tail: Sequence[Message], known: Lineage = ()
    ) -> None:
        """`known`: what else it shares with other transcripts (a lineage)."""
        parents = base.lineage
        if isinstance(base, Continued):  # (one level: its transcript, and all that follows)
            first: Transcript = base.base
            tail = (*base.tail, *tail)
        else:
            first = base
        self.base: Transcript = first
        self.tail: tuple[Message, ...] = tuple(tail)
        self._n = len(first)
        ancestors = _thinned((*known, *parents))
        self.lineage: Lineage = ((_new_name(), len(self)), *ancestors)[:DEPTH]

    def extended(self, new: Iterable[Message], after: int = -1) -> Continued:
        """As `Transcript.extended` (a view too)."""
        kept = self if after < 0 else self.prefix(after)
        return Continued(kept, tuple(new))

    def prefix(self, length: int) -> Transcript | Continued:
        """Its first `length` messages."""
        if length >= len(self):
            return self
        if length <= self._n:
            return self.base.prefix(length)
        return Continued(self.base, self.tail[: length - self._n], capped(self.lineage, length))

    def __len__(self) -> int:
        return self._n + len(self.tail)

    @overload
    def __getitem__(self, at: int) -> Message: ...
    @overload
    def __getitem__(self, at: slice) -> list[Message]: ...
    def __getitem__(self, at: int | slice) -> Message | list[Message]:
        n = self._n
        if isinstance(at, slice):
            start, stop, step = at.indices(len(self))
            if step != 1:
                return list(self)[at]
            if stop <= n:
                return self.base[start:stop]
            return [*self.base[start:], *self.tail[max(0, start - n) : stop - n]]
        if at < 0:
            at += len(self)
            if at < 0:
                raise IndexError("Continued index out of range")
        return self.base[at] if at < n else self.tail[at - n]

    def __iter__(self) -> Iterator[Message]:
        return chain(self.base, self.tail)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        if len(other) != len(self):
            return False
        return list(self) == (other if isinstance(other, list) else list(other))

    __hash__ = None  # type: ignore[assignment]


class Snapshots:
    """Transcripts of a list that changes in place (the window's, a turn's): each names
    the one made before, up to the first message changed since (`changed_from`). The
    list is copied only now and then (`frozen`); a snapshot is that copy and the few
    messages after it (`Continued`): a turn is not 100,000 pointers copied, and freed."""

    TAIL = 64  # messages after the copy before it is made again

    def __init__(self, start: Sequence[Message] = ()) -> None:
        self.lineage, self.same = lineage_of(start), len(start)  # (what the list began as)
        self.frozen: Transcript | None = None  # the list's start, as a snapshot had it

    def changed_from(self, at: int) -> None:
        """The list's messages from `at` on were replaced or taken out."""
        self.same = min(self.same, at)

    def of(self, messages: Sequence[Message]) -> Transcript | Continued:
        """The list as it is now."""
        frozen, earlier = self.frozen, capped(self.lineage, self.same)
        # (`same` counts from the last snapshot, which began with `frozen`)
        if frozen is None or self.same < len(frozen) or len(messages) - len(frozen) > self.TAIL:
            self.frozen = Transcript(messages, earlier)
            made: Transcript | Continued = self.frozen
        else:
            made = Continued(frozen, messages[len(frozen) :], earlier)
        self.lineage, self.same = made.lineage, len(made)
        return made


def _thinned(lineage: Lineage) -> Lineage:
    """One ancestor for each length shared, the oldest (the likeliest to be named
    elsewhere): a reply saved a hundred times as it streams is one step back, not a
    hundred."""
    oldest: dict[int, int] = {}  # length shared → the name
    for name, shared in reversed(lineage):
        oldest.setdefault(shared, name)
    return tuple((name, shared) for shared, name in reversed(oldest.items()))


def transcript_of(messages: Sequence[Message]) -> Transcript | Continued:
    """`messages` as a transcript (itself when it is one; else a copy that shares with
    nothing known)."""
    return messages if isinstance(messages, Transcript | Continued) else Transcript(messages)


def lineage_of(messages: Sequence[Message]) -> Lineage:
    """What a transcript was made from; () for any other sequence (it may change)."""
    return messages.lineage if isinstance(messages, Transcript | Continued) else ()


def capped(lineage: Lineage, length: int) -> Lineage:
    """The lineage of a transcript's first `length` messages."""
    return tuple((name, min(shared, length)) for name, shared in lineage)


def merged(newer: Lineage, older: Lineage, shared: int) -> Lineage:
    """`newer`, and what `older` said of the first `shared` messages (found equal): a
    transcript compared once with one of another family (the window's, a turn's, the
    store's) names both from then on."""
    names = {name for name, _ in newer}
    rest = ((name, min(length, shared)) for name, length in older if name not in names)
    return (*newer, *((name, length) for name, length in rest if length))[:KEPT]


def known_shared(a: Lineage, b: Lineage) -> int:
    """How many leading messages two transcripts surely share, by their lineages alone
    (0 when they name no common transcript)."""
    theirs = dict(b)
    return max((min(shared, theirs[name]) for name, shared in a if name in theirs), default=0)


def shared_prefix(
    known: Sequence[Message], lineage: Lineage, messages: Sequence[Message], most: int = -1
) -> int:
    """How many leading messages `messages` shares (equal) with `known`, whose lineage
    is `lineage` (counted up to `most`, if given): what the lineages say, then compared
    from there on."""
    n = min(len(known), len(messages))
    n = n if most < 0 else min(n, most)
    low = min(n, known_shared(lineage, lineage_of(messages)))
    if low == n:
        return n
    # the usual cases, compared at C speed (slicing only what must be): one extends the
    # other; the last differs (another draft)
    if (known if low == 0 and n == len(known) else known[low:n]) == (
        messages if low == 0 and n == len(messages) else messages[low:n]
    ):
        return n
    if known[low : n - 1] == messages[low : n - 1]:
        return n - 1
    high = n - 1  # equal for `low` messages, not for `high` (found by halves)
    while high - low > 1:
        mid = (low + high) // 2
        if known[low:mid] == messages[low:mid]:
            low = mid
        else:
            high = mid
    return low
