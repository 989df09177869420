"""Transcripts that say what they were made from (`core/transcript.py`): what a lineage
says is always true, and a plan after a turn finds by it how far the new transcript goes
on from the last — without comparing every message."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Sequence
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_app.context.known_prefix import KnownPrefix
from desktop_app.core.messages import Message
from desktop_app.core.protocol import validate_from
from desktop_app.core.transcript import (
    Continued,
    Snapshots,
    Transcript,
    known_shared,
    lineage_of,
    shared_prefix,
    transcript_of,
)
from desktop_app.core.valid_prefix import ValidPrefix
from desktop_app.tokens.counter import TokenCounter
from tests.unit.builders import a, u


def brute_shared(x: Sequence[Message], y: Sequence[Message]) -> int:
    n = 0
    while n < min(len(x), len(y)) and x[n] == y[n]:
        n += 1
    return n


def test_a_copy_or_a_pickle_is_a_transcript_of_its_own() -> None:
    history = Transcript([u("one"), a("two")]).extended([u("three")])
    for copied in (copy.copy(history), copy.deepcopy(history), pickle.loads(pickle.dumps(history))):
        assert copied == history
        assert isinstance(copied, Transcript)
        assert known_shared(copied.lineage, history.lineage) == 0  # (names are this process's)


def test_a_transcript_cannot_be_changed_in_place() -> None:
    history = Transcript([u("one"), a("two")])
    for change in (
        lambda: history.append(u("x")),
        lambda: history.extend([u("x")]),
        lambda: history.pop(),
        lambda: history.__setitem__(0, u("x")),
        lambda: history.__delitem__(0),
        lambda: history.__iadd__([u("x")]),
        lambda: history.clear(),
    ):
        with pytest.raises(TypeError):
            change()
    assert [m.text for m in history] == ["one", "two"]


def test_made_from_one_another_two_transcripts_know_what_they_share() -> None:
    history = Transcript([u("one"), a("two")])
    draft = history.extended([u("draft")])
    turn = history.extended([u("three"), a("four")])
    next_draft = turn.extended([u("another draft")])
    assert known_shared(draft.lineage, next_draft.lineage) == 2  # `history`, their common start
    assert shared_prefix(draft, draft.lineage, next_draft) == 2
    edited = turn.extended([u("three, edited")], after=2)  # the question edited: a new branch
    assert known_shared(edited.lineage, turn.lineage) == 2
    assert shared_prefix(turn, turn.lineage, edited) == 2
    assert turn.prefix(3) == turn[:3]
    assert known_shared(turn.prefix(3).lineage, turn.lineage) == 3


def test_a_transcript_of_another_family_is_compared_and_remembered() -> None:
    """The window's transcripts and a turn's are made apart: compared once, equal, the
    next comparison knows them both."""
    counter = TokenCounter()
    known = KnownPrefix(counter)
    window = Transcript([u("one"), a("two"), u("three")])
    turn = Transcript(list(window))  # the same messages, read apart: no common name
    known.follow(turn.extended([a("four")]))
    assert known_shared(known.lineage, lineage_of(window)) == 0
    known.follow(window.extended([a("four, the window's")]))  # compared message by message
    later = window.extended([a("five"), u("six")])
    assert known_shared(known.lineage, lineage_of(later)) == 3  # now by name


def test_the_check_goes_on_from_where_its_lineage_says() -> None:
    history = Transcript([u("Order 1?"), a("Done."), u("Order 2?"), a("Done too.")])
    _problems, point = validate_from(history, None)
    assert point is not None
    assert point.length == 3
    longer = history.extended([u("Order 3?")])
    # (a different object where the point stands: not the same history, checked whole)
    other = Transcript([*history[:2], replace(history[2], id="msg_other"), *history[3:]])
    assert point.begins(longer)
    assert not point.begins(other)


def test_a_draft_after_a_transcript_reads_as_the_list_it_stands_for() -> None:
    history = Transcript([u("one"), a("two"), u("three")])
    tail = [a("four"), u("five")]
    drafted = Continued(history, tail)
    whole = [*history, *tail]
    assert len(drafted) == 5
    assert list(drafted) == whole
    assert drafted == whole
    assert [drafted[i] for i in range(-5, 5)] == whole + whole
    for start in range(-6, 7):
        for stop in range(-6, 7):
            assert drafted[start:stop] == whole[start:stop]
    assert drafted[::2] == whole[::2]
    with pytest.raises(IndexError):
        drafted[5]
    with pytest.raises(IndexError):
        drafted[-6]
    assert known_shared(drafted.lineage, history.lineage) == 3


def test_snapshots_of_a_list_changed_in_place_name_only_what_stayed() -> None:
    rows = [u("one"), a("two"), u("three")]
    snapshots = Snapshots()
    first = snapshots.of(rows)
    rows.append(a("streaming"))
    rows[3] = a("streamed")  # a reply replaced as it streams
    snapshots.changed_from(3)
    second = snapshots.of(rows)
    assert known_shared(first.lineage, second.lineage) == 3
    rows[1] = a("two, repaired")
    snapshots.changed_from(1)
    third = snapshots.of(rows)
    assert known_shared(second.lineage, third.lineage) == 1
    assert shared_prefix(second, second.lineage, third) == 1


def test_a_snapshot_after_a_turn_is_the_last_copy_and_the_turn() -> None:
    """The window snapshots its rows at every plan: only now and then a copy of them."""
    rows = [u("one"), a("two")]
    snapshots = Snapshots()
    first = snapshots.of(rows)
    rows += [u("three"), a("four")]
    second = snapshots.of(rows)
    assert isinstance(second, Continued)
    assert second.base is first
    assert list(second) == rows
    rows += [u("more"), a("more")] * Snapshots.TAIL
    assert isinstance(snapshots.of(rows), Transcript)  # (copied again: a long tail)
    rows[0] = u("one, edited")  # a change inside the copy: copied again
    snapshots.changed_from(0)
    again = snapshots.of(rows)
    assert isinstance(again, Transcript)
    assert again == rows


POOL = [u(f"q{i}") for i in range(4)] + [a(f"r{i}") for i in range(4)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 30), st.integers(0, 7)), max_size=40))
def test_a_lineage_never_says_more_than_the_messages_do(
    steps: list[tuple[int, int, int]],
) -> None:
    """Whatever is made from what — extended, cut, replaced, copied apart, equal
    messages read again — `shared_prefix` is the count a message-by-message comparison
    gives, and a `KnownPrefix` following them agrees."""
    made: list[Transcript | Continued] = [Transcript([POOL[0]])]
    known = KnownPrefix(TokenCounter())
    rows: list[Message] = []
    snapshots = Snapshots()
    snapshots.TAIL = 2  # (copied again often: both ways of making a snapshot are taken)
    point: ValidPrefix | None = None
    for kind, number, pick in steps:
        base = made[number % len(made)]
        message = POOL[pick]
        if kind == 0:
            made.append(transcript_of(base).extended([message]))
        elif kind == 1:
            made.append(transcript_of(base).prefix(number % (len(base) + 1)))
        elif kind == 2:
            made.append(transcript_of(base).extended([message], after=number % (len(base) + 1)))
        elif kind == 3 and pick % 2:  # the same messages, equal objects read again
            made.append(Transcript([replace(m) for m in base]))
        elif kind == 3:  # a draft after it
            made.append(Continued(base.base if isinstance(base, Continued) else base, [message]))
        elif kind == 4:  # a list changed in place, snapshotted
            at = number % (len(rows) + 1)
            rows[at:] = [message]
            snapshots.changed_from(at)
            made.append(snapshots.of(rows))
        else:
            followed = made[pick % len(made)]
            known.follow(followed)
            point = validate_from(followed, point)[1] or point  # (it goes on from the last)
        for other in made[-4:]:
            assert known.shared_with(other) == brute_shared(known.messages, other)
            if point is not None:
                checked = point.history[: point.length]
                assert point.begins(other) == (brute_shared(checked, other) == point.length)
    for x in made[-5:]:
        for y in made[-5:]:
            assert shared_prefix(x, x.lineage, y) == brute_shared(x, y)
