"""Compaction: the middle of a long chat becomes a summary the user can
preview, edit, apply and undo.

The span runs from after the first message to before the most recent turns, cut at clean
boundaries; a new summary absorbs the previous one. The summarizer is asked to keep what
summaries usually lose, and its text is checked for fidelity before it is accepted.
Applying is a pure state change (`ContextState.with_summary`) that storage writes in one
transaction; undo restores the span exactly.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import islice

from desktop_app.context.chat_settings import ContextSettings
from desktop_app.context.errors import NothingToCompact
from desktop_app.context.facts import facts_block
from desktop_app.context.fidelity import missing_facts
from desktop_app.context.request_notes import summary_as_sent, turn_numbers
from desktop_app.context.state import ContextState, Summary
from desktop_app.core.assembly import MessageAssembler
from desktop_app.core.blocks import (
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import Cancelled, ContextDeskError, ErrorKind
from desktop_app.core.messages import Message, Usage, new_id, user_text
from desktop_app.core.ports import ChatBackend
from desktop_app.core.protocol import is_clean_start
from desktop_app.core.request import ChatRequest, SystemPart
from desktop_app.tokens.counter import TokenCounter

SUMMARY_MAX_TOKENS = 4096
RESULT_CHARS_IN_SPAN = 4000  # a tool result is shown to the summarizer up to this length

SUMMARIZER_SYSTEM = """\
You compact the earlier part of a conversation into a summary that will replace it. The \
model continuing the conversation will see only the first message, your summary and the \
latest turns, so the summary must carry everything still needed.

Keep, exactly as written: every number and amount, date and time, identifier (order, \
ticket, invoice, commit, customer), name, file path, URL and e-mail address.
Keep: decisions made and their reasons; approaches that were tried and FAILED, and why; \
the user's constraints, preferences and stated expectations; open questions; the current \
state of the work.
Do not invent anything. Write in the conversation's own language. Use short sections \
with bullet points. Reply with the summary only."""


@dataclass(frozen=True, slots=True)
class CompactionSpan:
    start: int  # index of the first message compacted
    end: int  # index after the last one (a clean start: the recent turns begin here)
    covers: tuple[str, ...]  # every message id the new summary stands for
    previous: Summary | None  # the summary it absorbs
    turns: tuple[int, int]


@dataclass(frozen=True, slots=True)
class CompactionPreview:
    span: CompactionSpan
    text: str
    model: str
    instructions: str
    tokens_before: int  # the span as it is sent now (estimate)
    tokens_after: int  # the summary as it is sent (estimate)
    missing: tuple[str, ...]  # hard facts the text lost (and no pinned fact holds)

    def summary(self, number: int, text: str | None = None) -> Summary:
        """The summary to apply; `text` is the user's edit of the preview, if any."""
        edited = text is not None and text != self.text
        return Summary(
            number=number,
            covers=self.span.covers,
            text=self.text if text is None else text,
            model=self.model,
            instructions=self.instructions,
            replaces=self.span.previous.id if self.span.previous else None,
            warnings=self.missing,
            edited=edited,
        )


@dataclass(frozen=True, slots=True)
class SummarySize:
    """What a summary stands in for and what it costs, counted as its preview counts them
    (so the panel's timeline and the preview say the same)."""

    turns: tuple[int, int] | None  # the turns it covers (None: none on this branch)
    messages: int  # … and how many messages they are
    before: int  # those messages, as a plan counts them (calibrated)
    after: int  # the summary as it is sent, its heading too (calibrated)


def summary_size(
    messages: Sequence[Message], summary: Summary, counter: TokenCounter, model: str
) -> SummarySize:
    covered = set(summary.covers)
    places = [n for n, m in enumerate(messages) if m.id in covered]
    turns = None
    if places:
        numbers = turn_numbers(messages[: places[-1] + 1])
        turns = (numbers[places[0]], numbers[places[-1]])
    factor = counter.calibration.factor(model)
    before = sum(counter.message(messages[n]) for n in places) * factor
    after = counter.message_as_sent(summary_as_sent(summary, turns)) * factor  # (not kept)
    return SummarySize(turns, len(places), round(before), round(after))


def plan_span(
    messages: Sequence[Message],
    state: ContextState,
    settings: ContextSettings,
    keep_recent: int | None = None,
    *,
    size: Callable[[Message], int] | None = None,
    budget: int | None = None,
) -> CompactionSpan:
    """The span to compact now, or `NothingToCompact` saying why there is none. Given
    `size` (a message's tokens), only its oldest turns that the summarizer can read in
    one request (`budget`, else `span_budget`): the next compaction goes on from their
    summary."""
    first, end = _span_bounds(messages, settings, keep_recent)
    previous = state.active_summary
    covered = _summarized(state)
    if size is not None:
        most = span_budget(settings) if budget is None else budget
        end = _readable_end(messages, first, end, covered | state.excluded_messages, size, most)
    new_ids = [
        m.id
        for m in messages[first:end]
        if m.id not in covered and m.id not in state.excluded_messages
    ]
    if not new_ids:
        raise NothingToCompact(ALL_SUMMARIZED)
    order = {m.id: i for i, m in enumerate(messages)}
    covers = tuple(sorted(covered | set(new_ids), key=lambda i: order.get(i, -1)))
    numbers = turn_numbers(messages)
    return CompactionSpan(first, end, covers, previous, (numbers[first], numbers[end - 1]))


def why_not_compactable(
    messages: Sequence[Message], state: ContextState, settings: ContextSettings
) -> str:
    """What `plan_span` would say stops a compaction now ("" when one can be made),
    found from the newest turns back and the oldest messages on: every plan asks, and a
    100,000-message chat's whole span took a fifth of its plan (~130 ms) to say ""."""
    try:
        first, end = _span_bounds(messages, settings)
    except NothingToCompact as exc:
        return exc.message
    covered, excluded = _summarized(state), state.excluded_messages
    if end - first > len(covered) + len(excluded):
        return ""  # (more messages than all the summarized and left out: one is neither)
    for message in islice(messages, first, end):  # (iterated, not indexed: a `Continued`)
        if message.id not in covered and message.id not in excluded:
            return ""
    return ALL_SUMMARIZED


ALL_SUMMARIZED = "Everything before the recent turns is already summarized."


def _span_bounds(
    messages: Sequence[Message], settings: ContextSettings, keep_recent: int | None = None
) -> tuple[int, int]:
    """Where the span may start (after the first message, if it is kept) and end (where
    the last `keep_recent` turns start), found from the newest turn back; or
    `NothingToCompact` when there is no turn older than those."""
    keep = settings.keep_recent_turns if keep_recent is None else keep_recent
    first = 1 if settings.keep_first_message else 0
    if keep <= 0:
        return first, len(messages)
    seen, end = 0, len(messages)
    for i in range(len(messages) - 1, first, -1):  # turn starts, newest first
        if is_clean_start(messages, i):
            seen += 1
            if seen == keep:
                end = i
            elif seen > keep:  # an older turn than the kept ones: something to compact
                return first, end
    raise NothingToCompact(f"The chat has no turns older than the {keep} most recent ones.")


def _summarized(state: ContextState) -> set[str]:
    """The messages the active summary stands for already."""
    previous = state.active_summary
    return set(previous.covers) if previous else set()


def span_budget(settings: ContextSettings) -> int:
    """The tokens of new messages one summary request may carry: half the chat's window
    (the estimate is not exact, and the earlier summary, the instructions and the
    reply need room). A 100,000-message chat's whole span was ~12M tokens: a request
    no model reads."""
    return settings.context_window // 2


def _readable_end(
    messages: Sequence[Message],
    first: int,
    end: int,
    skipped: set[str],
    size: Callable[[Message], int],
    budget: int,
) -> int:
    """Where a span from `first` ends to hold at most `budget` tokens of the messages not
    `skipped` (summarized already, or excluded): at a turn's start, after one turn with
    such messages at least; `end` if the whole span fits."""
    total, cut, at_cut = 0, end, 0
    for i in range(first, end):
        if i > first and is_clean_start(messages, i):
            if total > budget:
                return cut if at_cut else i
            cut, at_cut = i, total
        if messages[i].id not in skipped:
            total += size(messages[i])
    return cut if total > budget and at_cut else end


def render_span(messages: Sequence[Message], span: CompactionSpan) -> str:
    """The span as plain text for the summarizer (the previous summary first)."""
    parts: list[str] = []
    if span.previous:
        parts.append(f"EARLIER SUMMARY (#{span.previous.number}):\n{span.previous.text}")
    covered = set(span.covers)
    for msg in messages[span.start : span.end]:
        if msg.id not in covered or (span.previous and msg.id in span.previous.covers):
            continue
        lines = [_render_block(b) for b in msg.blocks]
        parts.append(f"{msg.role.upper()}:\n" + "\n".join(line for line in lines if line))
    return "\n\n".join(parts)


def _render_block(block: object) -> str:
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, ToolUseBlock):
        return f"[called {block.name} with {json.dumps(block.input, ensure_ascii=False)}]"
    if isinstance(block, ToolResultBlock):
        text = block.text
        if len(text) > RESULT_CHARS_IN_SPAN:
            text = text[: RESULT_CHARS_IN_SPAN // 2] + " […] " + text[-RESULT_CHARS_IN_SPAN // 2 :]
        return f"[{'error from' if block.is_error else 'result of'} the call: {text}]"
    if isinstance(block, ImageBlock):
        return "[an image]"
    if isinstance(block, ThinkingBlock):
        return ""  # the model's private reasoning is not summarized
    return ""


def summarizer_request(
    span_text: str, *, model: str, instructions: str, missing: Sequence[str]
) -> ChatRequest:
    ask = ["Summarize this part of the conversation:", "", span_text]
    if instructions:
        ask += ["", f"The user's instructions for this summary: {instructions}"]
    if missing:
        ask += [
            "",
            "Your previous summary left out these facts; include every one: " + ", ".join(missing),
        ]
    return ChatRequest(
        model=model,
        messages=(user_text("\n".join(ask)),),
        max_tokens=SUMMARY_MAX_TOKENS,
        system=(SystemPart(SUMMARIZER_SYSTEM),),
        purpose="compaction",
    )


@dataclass(frozen=True, slots=True)
class SummaryRequestSent:
    """A request the compactor sent, for the chat's ledger (written later, on the thread
    that owns the database: the compactor runs on a worker)."""

    request: ChatRequest
    sent_at: float
    seconds: float
    usage: Usage | None
    status: str  # complete, interrupted or error, as for a turn's requests


class Compactor:
    def __init__(self, backend: ChatBackend, counter: TokenCounter) -> None:
        self.backend = backend
        self.counter = counter
        self._sent: list[SummaryRequestSent] = []
        self._sent_lock = threading.Lock()

    def take_sent(self) -> list[SummaryRequestSent]:
        """The summary requests sent since the last call, oldest first."""
        with self._sent_lock:
            sent, self._sent = self._sent, []
        return sent

    def preview(
        self,
        messages: Sequence[Message],
        state: ContextState,
        settings: ContextSettings,
        *,
        model: str,
        cancel: CancelToken,
        instructions: str = "",
        keep_recent: int | None = None,
        missing: Sequence[str] = (),
    ) -> CompactionPreview:
        """Ask the model for a summary of the span and check it; nothing is applied."""
        counted = self.counter.message
        span = plan_span(messages, state, settings, keep_recent, size=counted)
        span_text = render_span(messages, span)
        request = summarizer_request(
            span_text, model=model, instructions=instructions, missing=missing
        )
        text = self.summarize(request, cancel)
        factor = self.counter.calibration.factor(model)
        facts = facts_block(state.facts)
        covers = set(span.covers)
        before = sum(counted(m) for m in messages[span.start : span.end] if m.id in covers)
        # (after: the summary as it is sent, its heading too — the Overview's Summary row)
        sent = summary_as_sent(
            Summary(state.next_summary_number(), span.covers, text, model), span.turns
        )
        return CompactionPreview(
            span=span,
            text=text,
            model=model,
            instructions=instructions,
            tokens_before=round(before * factor),
            tokens_after=round(self.counter.message_as_sent(sent) * factor),
            missing=tuple(missing_facts(span_text, text, [facts])),
        )

    def auto(
        self,
        messages: Sequence[Message],
        state: ContextState,
        settings: ContextSettings,
        *,
        model: str,
        cancel: CancelToken,
    ) -> CompactionPreview:
        """Auto-compaction's preview: one retry naming what the first summary lost, then
        accept (the loss is recorded as the summary's warnings). Not for a span larger
        than the chat's whole window: it would take a summary request a part at a time
        for many turns (a 100,000-message chat: ~120, each one a turn's wait and cost),
        so it is refused (the breaker counts it) and trimming keeps the request in the
        window; *Compact now* still summarizes such a span, its oldest part first."""
        window = settings.context_window
        self.refuse_a_part(
            messages,
            state,
            settings,
            budget=window,
            why=f"The turns before the recent ones hold more than this chat's window "
            f"({window:,} tokens), so the oldest are left out of the request instead. "
            "Compact now… summarizes them a part at a time.",
        )
        first = self.preview(messages, state, settings, model=model, cancel=cancel)
        if not first.missing:
            return first
        second = self.preview(
            messages, state, settings, model=model, cancel=cancel, missing=first.missing
        )
        return second

    def refuse_a_part(
        self,
        messages: Sequence[Message],
        state: ContextState,
        settings: ContextSettings,
        keep_recent: int | None = None,
        *,
        budget: int | None = None,
        why: str,
    ) -> None:
        """Raise (saying `why`) if one summary request of at most `budget` tokens (else
        `span_budget`) would not carry the whole span: for whoever needs all of it."""
        whole = plan_span(messages, state, settings, keep_recent)
        most = span_budget(settings) if budget is None else budget
        skipped = _summarized(state) | state.excluded_messages
        size = self.counter.message
        if _readable_end(messages, whole.start, whole.end, skipped, size, most) < whole.end:
            raise ContextDeskError(
                "Too long to summarize at once", why, kind=ErrorKind.REQUEST_TOO_LARGE
            )

    def summarize(self, request: ChatRequest, cancel: CancelToken) -> str:
        assembler = MessageAssembler(new_id())
        sent_at, started = time.time(), time.monotonic()
        usage, status = None, "error"
        try:
            for event in self.backend.stream(request, cancel):
                assembler.feed(event)
                cancel.raise_if_cancelled()
            reply = assembler.finish()
            usage, status = reply.usage, "complete"
        except Cancelled:
            status = "interrupted"
            raise
        finally:
            sent = SummaryRequestSent(request, sent_at, time.monotonic() - started, usage, status)
            with self._sent_lock:
                self._sent.append(sent)
        text = reply.text.strip()
        if not text:
            raise ContextDeskError(
                "The summary came back empty",
                "The model returned no text for the summary. Nothing was changed; try again, "
                "or compact with instructions.",
                retryable=True,
                kind=ErrorKind.COMPACTION_EMPTY,
            )
        if reply.stop_reason == "max_tokens":
            text += "\n\n[The summary was cut off at its length limit.]"
        return text


def apply_preview(
    state: ContextState, preview: CompactionPreview, text: str | None = None
) -> ContextState:
    """The state with the preview's summary applied (the user's edit of it, if any)."""
    return state.with_summary(preview.summary(state.next_summary_number(), text))
