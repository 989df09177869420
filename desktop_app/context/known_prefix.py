"""What a projection learned of each message of a transcript, kept for the next one.

A turn adds a question and a reply to a 100,000-message chat, and the next request is
planned again. A message's turn number, whether a kept window may start at it, its raw
tokens — and, once its turn is over, its view and the view's cost — do not change when
messages come after it. So they are kept here, with running sums, and the next
projection works out only what is new: the plan after a turn costs the turn, not the
chat (it was ~200 ms at 93,000 messages).

The new transcript is compared with the last one — as far as their lineages say
(`transcript.py`), then message by message (identical objects compare at C speed); one
that differs earlier — another branch, an edit, a different draft — is taken from where
it differs. The marks plans hold are layers never changed once made
(`_layered`); the index a plan's states look messages up in loses entries only past
what was settled, or after `divergences` has counted the change (message_states.py).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Sequence
from itertools import accumulate, compress
from typing import TypeVar

from desktop_app.context.plan import BlockState
from desktop_app.context.state import Summary
from desktop_app.core.blocks import ToolResultBlock, ToolUseBlock
from desktop_app.core.messages import Message
from desktop_app.core.protocol import is_clean_start
from desktop_app.core.transcript import Lineage, capped, lineage_of, merged, shared_prefix
from desktop_app.tokens.counter import TokenCounter

MessageMark = tuple[BlockState, int | None]
BlockMark = tuple[BlockState, int]
K = TypeVar("K")
V = TypeVar("V")


class KnownPrefix:
    """The per-message facts of the last transcript projected (`follow`), and the views
    of its settled messages — those before its last turn (`settle`)."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.messages: list[Message] = []
        self.clean = bytearray()
        self.turns = array("q")  # 1-based turn number of each message
        self.starts: list[int] = []  # where a kept window may start, ascending
        self.index_of: dict[str, int] = {}  # message id → index
        self.raw_sums = array("q", [0])  # raw_sums[i]: the raw tokens of messages[:i]
        self.tool_names: dict[str, str] = {}  # tool_use id → the tool's name
        self.last_usage = -1  # the last reply the API counted the prompt of
        self.lineage: Lineage = ()  # that of the transcript `messages` equals (`transcript`)
        # How often what was settled changed (a transcript that differed before it, or a
        # shorter one): the index may then have lost, or moved, what a plan's spans hold.
        self.divergences = 0
        self._covered: tuple[Summary, int, list[int], frozenset[str]] | None = None
        self.forget_views()

    def forget_views(self) -> None:
        """Start the views afresh (something that shapes a view changed)."""
        self.settled = 0
        self.views: list[Message | None] = []
        self.costs = array("q")
        self.cost_sums = array("q", [0])
        # The marks the settled messages' views made: whole messages (excluded), blocks.
        self.excluded: tuple[dict[str, MessageMark], ...] = ()
        self.block_marks: tuple[dict[tuple[str, int], BlockMark], ...] = ()
        self.paired_out: set[str] | None = None  # tool ids excluded with their partner
        self.paired_upto = 0  # … found in the messages before this

    # -- the per-message facts --------------------------------------------------------------

    def follow(self, messages: Sequence[Message]) -> None:
        """Take `messages` as the transcript: keep what it shares with the last one,
        learn the rest."""
        same = self.shared_with(messages)  # (`messages` indexed, sliced: never copied whole)
        if same and self.messages[same - 1] is not messages[same - 1]:
            # Read again: equal messages, not the same objects. What was learned of them
            # holds; these are kept, so that the next comparison is by identity.
            self.messages[:same] = messages[:same]
        if same < len(self.messages):
            self.forget_from(same)
        new, at = messages[same:], range(same, len(messages))
        # (each fact of the new messages in one pass of its own: a chat opened learns
        # 100,000 of them)
        flags = [is_clean_start(messages, i) for i in at]
        self.clean.extend(flags)
        self.starts.extend(compress(at, flags))
        steps = (starts_turn or i == 0 for i, starts_turn in zip(at, flags, strict=True))
        self.turns.extend(accumulate(steps, initial=self.turns[-1] if self.turns else 0))
        del self.turns[same]  # (`initial` again)
        self.raw_sums.extend(accumulate(map(self.counter.message, new), initial=self.raw_sums[-1]))
        del self.raw_sums[same + 1]
        self.index_of.update(zip([m.id for m in new], at, strict=True))
        names = self.tool_names
        for i, message in zip(at, new, strict=True):
            if message.role == "assistant":  # (calls, and the API's counts, are in replies)
                for block in message.blocks:
                    if isinstance(block, ToolUseBlock):
                        names[block.id] = block.name
                if message.usage and message.usage.prompt_tokens:
                    self.last_usage = i
        self.messages.extend(new)
        # A shorter transcript may end in a turn settled before: its thinking is kept again.
        last = self.starts[-1] if self.starts else 0
        if last < self.settled:
            self.unsettle(last, self.messages[last : self.settled])
        self.lineage = merged(lineage_of(messages), self.lineage, same)

    def shared_with(self, messages: Sequence[Message]) -> int:
        """How many leading messages `messages` shares with the known transcript."""
        return shared_prefix(self.messages, self.lineage, messages)

    def forget_from(self, at: int) -> None:
        """Forget the messages from `at` on (a transcript that differs there)."""
        gone = self.messages[at:]
        if at < self.settled:
            self.divergences += 1  # (first: a plan read on another thread sees it at once)
        tools = False
        for message in gone:
            if self.index_of.get(message.id, -1) >= at:
                del self.index_of[message.id]
            for block in message.blocks:
                if isinstance(block, ToolUseBlock):
                    self.tool_names.pop(block.id, None)
                tools = tools or isinstance(block, ToolUseBlock | ToolResultBlock)
        if tools or at < self.paired_upto:
            self.paired_out = None if tools else self.paired_out
            self.paired_upto = min(self.paired_upto, at)
        del self.messages[at:], self.clean[at:], self.turns[at:], self.raw_sums[at + 1 :]
        self.lineage = capped(self.lineage, at)
        del self.starts[bisect_left(self.starts, at) :]
        if self.last_usage >= at:
            self.last_usage = next(
                (
                    i
                    for i in range(at - 1, -1, -1)
                    if (m := self.messages[i]).role == "assistant"
                    and m.usage
                    and m.usage.prompt_tokens
                ),
                -1,
            )
        # A call's view depends on its result's exclusion (`pairs_out`): a transcript that
        # differs at a result (another branch's) makes the call's view again.
        cut = max(0, at - 1) if tools else at
        if cut < self.settled:
            self.unsettle(cut, self.messages[cut:] + gone)

    def raw_total(self, messages: Sequence[Message]) -> int:
        """The raw tokens of `messages`, those it shares with the known transcript summed
        already (changes nothing)."""
        same = self.shared_with(messages)
        rest = messages[same:]
        return self.raw_sums[same] + sum(self.counter.message(m) for m in rest)

    def covered(self, summary: Summary) -> tuple[list[int], frozenset[str]]:
        """Where the messages `summary` stands for are, in order, and their ids (kept
        while it is the summary and they are settled: a summary stands for old turns)."""
        cached = self._covered
        if cached is not None and cached[0] is summary and cached[1] == self.divergences:
            return cached[2], cached[3]
        index_of, messages = self.index_of, self.messages
        found = sorted(
            i for c in summary.covers if (i := index_of.get(c)) is not None and messages[i].id == c
        )
        ids = frozenset(summary.covers)
        # (kept only when all are here and settled: one missing may come with the next
        # transcript, one after `settled` may go with it, and neither counts a divergence)
        if len(found) == len(ids) and (not found or found[-1] < self.settled):
            self._covered = (summary, self.divergences, found, ids)
        return found, ids

    # -- the settled views ----------------------------------------------------------------

    def settle(
        self,
        until: int,
        views: Sequence[Message | None],
        costs: Sequence[int],
        excluded: dict[str, MessageMark],
        block_marks: dict[tuple[str, int], BlockMark],
    ) -> None:
        """Keep the views of messages [`settled`, `until`): `views` and `costs` start at
        `settled`; the marks are those the projection made of them (and maybe more)."""
        start = self.settled
        if until <= start:
            return
        count = until - start
        self.views.extend(views[:count])
        self.costs.extend(costs[:count])
        self.cost_sums.extend(accumulate(costs[:count], initial=self.cost_sums[-1]))
        del self.cost_sums[start + 1]  # (`initial` again)
        # The marks of the messages settling (most have none): found by index.
        index_of = self.index_of
        new_excluded = {k: v for k, v in excluded.items() if start <= index_of.get(k, -1) < until}
        new_marks = {
            k: v for k, v in block_marks.items() if start <= index_of.get(k[0], -1) < until
        }
        self.excluded = _layered(self.excluded, new_excluded)
        self.block_marks = _layered(self.block_marks, new_marks)
        self.settled = until

    def unsettle(self, at: int, gone: Sequence[Message]) -> None:
        """Forget the settled views from `at` on. The marks plans hold are replaced, not
        changed."""
        self.divergences += 1
        ids = {m.id for m in gone}
        excluded = {k: v for layer in self.excluded for k, v in layer.items() if k not in ids}
        marks = {k: v for layer in self.block_marks for k, v in layer.items() if k[0] not in ids}
        self.excluded = (excluded,) if excluded else ()
        self.block_marks = (marks,) if marks else ()
        del self.views[at:], self.costs[at:], self.cost_sums[at + 1 :]
        self.settled = at

    def pairs_out(
        self, excluded_messages: frozenset[str], excluded_blocks: frozenset[tuple[str, int]]
    ) -> set[str]:
        """The tool ids excluded with their partner: a call and its result are sent
        together or not at all (kept, and extended with each new message)."""
        if self.paired_out is None:
            self.paired_out, self.paired_upto = set(), 0
        out = self.paired_out
        if excluded_messages or excluded_blocks:
            for msg in self.messages[self.paired_upto :]:
                for j, block in enumerate(msg.blocks):
                    gone = msg.id in excluded_messages or (msg.id, j) in excluded_blocks
                    if gone and isinstance(block, ToolUseBlock):
                        out.add(block.id)
                    elif gone and isinstance(block, ToolResultBlock):
                        out.add(block.tool_use_id)
        self.paired_upto = len(self.messages)
        return out


def _layered(layers: tuple[dict[K, V], ...], new: dict[K, V]) -> tuple[dict[K, V], ...]:
    """`layers` and `new` — each turn's marks a layer, merged as a binary counter's
    digits carry (~log₂ of them to look through) into new dicts: a layer a plan holds
    is never changed."""
    if not new:
        return layers
    out = [*layers, new]
    while len(out) > 1 and len(out[-1]) >= len(out[-2]):
        out[-2:] = [{**out[-2], **out[-1]}]
    return tuple(out)
