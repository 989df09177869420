"""The projection: transcript + context state → the exact next request, and an account of it.

One pure function decides what Claude is sent. Request layout (docs/architecture.md):

    system    base prompt (+ where the workspace is), then the pinned facts, verbatim;
              a cache breakpoint after the facts
    messages  the first user message, the active summary (marked as one, naming its
              turns), then the most recent turns, whole tool groups only; same-role
              neighbours merged explicitly; a cache breakpoint on the last message

Nothing here deletes: policies change the view. Every block of the transcript gets a
state in the plan — in context, summarized in #k, trimmed, excluded, cleared, not sent —
so the UI can show, block by block, what the model will see.

Here: `Projector` and the projection itself — which messages are kept, the request
assembled, the account of it. Its result is `plan.py`'s `Plan`; each message's view
(exclusions, clearing, trimming, and its cache) is `views.py`'s; the words added to the
request are `request_notes.py`'s.
"""

from __future__ import annotations

import math
import threading
from bisect import bisect_left, bisect_right
from collections import ChainMap
from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import accumulate, pairwise

from desktop_app.context.chat_settings import ContextSettings
from desktop_app.context.facts import facts_block
from desktop_app.context.known_prefix import KnownPrefix
from desktop_app.context.message_states import MessageStates
from desktop_app.context.plan import NO_THINKING, BlockState, Plan, Section
from desktop_app.context.project import ProjectLayers
from desktop_app.context.request_notes import (
    omission_note,
    summary_as_sent,
    user_note,
    workspace_note,
)
from desktop_app.context.state import ContextState, Summary
from desktop_app.context.trimming import TrimPolicy
from desktop_app.context.views import MessageViews, ViewEntry
from desktop_app.core.binding import PrefixDigest, sendable_thinking
from desktop_app.core.blocks import THINKING_TYPES, Block, OpaqueBlock
from desktop_app.core.history import merge_same_role, without_trailing_whitespace
from desktop_app.core.messages import Message
from desktop_app.core.model_facts import ModelFacts, facts_for
from desktop_app.core.protocol import thinking_problems
from desktop_app.core.repair import repair
from desktop_app.core.request import ChatRequest, SystemPart, ToolSpec
from desktop_app.core.thinking import ThinkingSetup
from desktop_app.tokens.counter import (
    MESSAGE_OVERHEAD,
    REQUEST_OVERHEAD,
    TokenCounter,
    TokenFigure,
)

FORECAST_TURNS = 5  # turns averaged for "auto-compaction in about N turns"


class Projector:
    """Projects with one `TokenCounter`. It and the view cache here make a re-projection
    of an unchanged chat (the live meter, while the user types) cheap."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.views: dict[str, ViewEntry] = {}
        self._views_for: tuple[object, ...] = ()
        self.known = KnownPrefix(counter)  # what the last projection learned, kept
        self._lock = threading.Lock()  # (one projection at a time: `known` is shared)

    def view_cache(
        self, state: ContextState, settings: ContextSettings, policies: Mapping[str, TrimPolicy]
    ) -> dict[str, ViewEntry]:
        """The cache of message views, emptied whenever anything that shapes a view changed."""
        if not self.shaped_alike(state, settings, policies):
            self.views = {}
            self._views_for = _shapers(state, settings, policies)
            self.known.forget_views()
        return self.views

    def shaped_alike(
        self, state: ContextState, settings: ContextSettings, policies: Mapping[str, TrimPolicy]
    ) -> bool:
        """Would every view be as the cached ones are?"""
        new, old = _shapers(state, settings, policies), self._views_for
        # Equal, not only identical: a state read back from disk after a turn holds new
        # but equal sets, and rebuilding 5,000 views costs ~0.4 s.
        return bool(old) and all(a is b or a == b for a, b in zip(new, old, strict=True))

    def for_preview(
        self,
        state: ContextState,
        settings: ContextSettings,
        trim_policies: Mapping[str, TrimPolicy] | None = None,
    ) -> Projector:
        """The projector to show a change's request with, before it is made: this one
        when the change leaves every view as it is (a window, a threshold) and no
        projection is running (one may still start before the preview's: it waits for
        that one); else one of its own — a preview must not make the chat's next plan
        work out every view again, nor wait behind a long one (a chat's first)."""
        policies = trim_policies or _NO_POLICIES
        if not self._lock.locked() and self.shaped_alike(state, settings, policies):
            return self
        return Projector(self.counter)

    def project(
        self,
        messages: Sequence[Message],
        state: ContextState,
        settings: ContextSettings,
        *,
        model: str,
        system: str = "",
        tools: Sequence[ToolSpec] = (),
        trim_policies: Mapping[str, TrimPolicy] | None = None,
        workspace: str | None = None,
        thinking: ThinkingSetup | None = None,
        facts: ModelFacts | None = None,
        project: ProjectLayers | None = None,
    ) -> Plan:
        """`thinking`: the fields the chat's choice becomes for this model (None: none
        sent); `facts`: the model's rules (None: the built-in table's for `model`)."""
        policies = trim_policies or _NO_POLICIES
        with self._lock:
            cache = self.view_cache(state, settings, policies)
            self.known.follow(messages)
            projection = _Projection(
                self.counter, messages, state, settings, model, policies, cache, self.known
            )
            projection.facts = facts or facts_for(model)
            return projection.run(system, tuple(tools), workspace, thinking or NO_THINKING, project)

    def transcript_raw(self, messages: Sequence[Message]) -> int:
        """The raw tokens of a whole transcript (what it shares with the last projected
        one summed already)."""
        with self._lock:
            return self.known.raw_total(messages)


class _Projection:
    def __init__(
        self,
        counter: TokenCounter,
        messages: Sequence[Message],
        state: ContextState,
        settings: ContextSettings,
        model: str,
        trim_policies: Mapping[str, TrimPolicy],
        view_cache: dict[str, ViewEntry],
        known: KnownPrefix,
    ) -> None:
        self.counter = counter
        self.messages = messages
        self.state = state
        self.settings = settings
        self.model = model
        counter.take_lessons()  # (a reply's count, learned here: off the window's thread)
        self.factor = counter.calibration.factor(model)
        self.known = known
        # The marks the views of the messages not yet settled make — whole messages
        # (excluded), blocks (cleared, trimmed…) — and the thinking blocks left out of
        # this request (`bound_thinking`).
        self.view_states: dict[str, tuple[BlockState, int | None]] = {}
        self.view_marks: dict[tuple[str, int], tuple[BlockState, int]] = {}
        self.unsent: dict[tuple[str, int], tuple[BlockState, int]] = {}
        self.block_states = ChainMap(self.unsent, self.view_marks, *known.block_marks)
        self.recount = False  # set when repair or stripping changed blocks after costing
        self.project: ProjectLayers | None = None
        self.documents_raw = 0  # the project's documents, which open the first message
        self.facts: ModelFacts = facts_for(model)
        self.unsent_reasons: dict[tuple[str, int], str] = {}  # why a thinking block is not sent
        self._owners: dict[int, tuple[str, int]] | None = None
        self.kept: list[int] = []  # the transcript's messages sent, by index
        self.viewer = MessageViews(
            counter,
            messages,
            state,
            settings,
            trim_policies,
            view_cache,
            known,
            self.view_states,
            self.view_marks,
        )

    def run(
        self,
        system: str,
        tools: tuple[ToolSpec, ...],
        workspace: str | None,
        thinking: ThinkingSetup,
        project: ProjectLayers | None = None,
    ) -> Plan:
        messages, settings, counter, known = self.messages, self.settings, self.counter, self.known
        n = len(messages)
        turns = known.turns
        # The views of the messages since the last settled (the rest are kept, with sums).
        settled = known.settled
        views = self.viewer.views(settled)
        cost = self.viewer.cost
        tail = [0 if v is None else cost(messages[settled + k], v) for k, v in enumerate(views)]
        self.costs = costs = _Costs(known, views, tail)

        # The opening question is kept; a history that opens with the assistant has none
        # (and a call there must stay with its result).
        head = [0] if settings.keep_first_message and n and known.clean[0] else []
        summary = self.state.active_summary
        covered, covered_ids = known.covered(summary) if summary else ([], frozenset[str]())
        # (covered is empty with no summary)
        summarized_until = covered[-1] if covered else (head[-1] if head else -1)
        span_from = head[-1] + 1 if head else 0
        tail_from = summarized_until + 1 if summary else (1 if head else 0)
        if summary:  # the kept part must start cleanly, even if the summary's span does not end so
            later = bisect_left(known.starts, tail_from)
            tail_from = known.starts[later] if later < len(known.starts) else n

        # The system prompt, facts, tools and summary are fixed; the tail is what may shrink.
        base = "\n\n".join(p for p in (system, workspace_note(workspace) if workspace else "") if p)
        facts = facts_block(self.state.facts)
        # The project's layers first, one cache breakpoint after them: every chat of the
        # project shares that prefix.
        shared = SystemPart(project.text if project else "", cache=True)
        system_parts = tuple(
            p
            for p in (shared, SystemPart(base, cache=not facts), SystemPart(facts, cache=True))
            if p.text
        )
        self.project = project
        documents = project.documents if project else ()
        self.documents_raw = sum(counter.block(d) for d in documents)
        summary_message = self.summary_message(summary, turns) if summary else None
        fixed = (
            REQUEST_OVERHEAD
            + counter.system(system_parts)
            + counter.tools(tools)
            + sum(costs[i] for i in head)
            + (counter.message(summary_message) if summary_message else 0)
            + self.documents_raw
        )
        starts = _Starts(known.starts, tail_from, n)
        keep_from = self.window_start(starts, tail_from, n, len(head))
        untrimmed = fixed + costs.between(tail_from, n)
        keep_from = self.trim_to_budget(starts, keep_from, fixed)

        self.message_states = MessageStates(
            messages,
            known,
            ChainMap(self.view_states, *known.excluded),
            trimmed=range(tail_from, keep_from),
            summarized=range(span_from, tail_from) if summary else range(0),
            covered=covered_ids,
            number=summary.number if summary else None,
            covered_in_span=bisect_left(covered, tail_from) - bisect_left(covered, span_from),
        )
        # What is sent, in order, each with its raw cost (reused below: no recount).
        self.kept = [*head, *range(keep_from, n)]
        kept = [(costs.view(i), costs[i]) for i in self.kept]
        synthetic = [summary_message] if summary_message else []
        if keep_from > tail_from:
            turns_cut = (turns[tail_from], turns[keep_from - 1])
            synthetic.append(user_note(omission_note(keep_from - tail_from, turns_cut)))
        kept[len(head) : len(head)] = [(m, counter.message(m)) for m in synthetic]
        sent = self.sendable([m for m, _ in kept if m is not None])
        if documents and sent:  # the project's documents open the conversation
            sent = (replace(sent[0], blocks=(*documents, *sent[0].blocks)), *sent[1:])
        sent = documents_agree(sent)
        sent = self.bound_thinking(sent, system_parts, tools)
        if self.recount:  # (as sent: a view must not displace its message's kept counts)
            messages_raw = sum(counter.message_as_sent(m) for m in sent)
        else:  # merging regroups blocks: the same block costs, one overhead per sent message
            blocks_raw = sum(cost - MESSAGE_OVERHEAD for m, cost in kept if m is not None)
            messages_raw = blocks_raw + MESSAGE_OVERHEAD * len(sent) + self.documents_raw

        if thinking.thinks is True and thinking_problems(sent, enabled=True):
            # The turn in progress began without thinking (a budget turned on mid-loop, an
            # import, a block not sent): with a budget on the API refuses that, so this
            # request goes without; the next turn has it again.
            thinking = replace(
                thinking,
                thinking=None,
                thinks=False,
                note="this request goes without thinking: the turn in progress began without it",
            )
        request = ChatRequest(
            model=self.model,
            messages=sent,
            max_tokens=settings.max_tokens,
            system=system_parts,
            tools=tools,
            thinking=thinking.thinking,
            effort=thinking.effort,
            cache_last_message=True,
            cache_ttl=settings.cache_ttl,
        )
        plan = self.plan(request, summary_message, messages_raw, untrimmed, starts, facts)
        # What is settled now — the turns before the last — is kept for the next plan.
        last_start = known.starts[-1] if known.starts else 0
        known.settle(last_start, views, costs.tail, self.view_states, self.view_marks)
        self.message_states.hold_from(known.settled)
        return replace(plan, thinking=thinking)

    def bound_thinking(
        self, sent: tuple[Message, ...], system: tuple[SystemPart, ...], tools: tuple[ToolSpec, ...]
    ) -> tuple[Message, ...]:
        """`sent` without the thinking blocks the model would not take: written by a
        model it cannot read, or bound to a prefix that has changed since
        (core/binding.py). Each block left out is marked "not sent", with why."""
        facts = self.facts
        if not any(m.role == "assistant" and _has_thinking(m) for m in sent):
            return sent  # the usual case: nothing to check, nothing hashed
        digest = PrefixDigest((p.text for p in system), (t.to_api() for t in tools))
        out: list[Message] = []
        for message in sent:
            if message.role == "assistant" and _has_thinking(message):
                unsent = sendable_thinking(message, digest.value, facts)
                if unsent is not None:
                    message = self.without_thinking(message, unsent.reason)
            out.append(message)
            digest.extend((message,))
        return tuple(out)

    def without_thinking(self, message: Message, reason: str) -> Message:
        """`message` without its thinking, each block marked "not sent" (the blocks are
        found in the transcript by identity: the view shares them)."""
        owners = self.thinking_owners()
        for block in message.blocks:
            if isinstance(block, THINKING_TYPES) and id(block) in owners:
                key = owners[id(block)]
                self.block_states[key] = (BlockState.NOT_SENT, 0)
                self.unsent_reasons[key] = reason
        self.recount = True
        kept = tuple(b for b in message.blocks if not isinstance(b, THINKING_TYPES))
        return replace(message, blocks=kept)

    def thinking_owners(self) -> dict[int, tuple[str, int]]:
        """Each thinking block sent: its message and index (built on need)."""
        if self._owners is None:
            # (by the views' blocks: a view kept from a message read before shares that
            # message's blocks, equal to these)
            sent = ((self.messages[i], self.costs.view(i)) for i in self.kept)
            self._owners = {
                id(b): (m.id, _block_index(m.blocks, b))
                for m, view in sent
                if view is not None and m.role == "assistant"
                for b in view.blocks
                if isinstance(b, THINKING_TYPES)
            }
        return self._owners

    def sendable(self, kept: list[Message]) -> tuple[Message, ...]:
        """Merge same-role neighbours; where exclusions or an assistant-after-assistant
        merge may have broken a rule, repair (reported by the validator if it ever fails)."""
        risky = bool(self.state.excluded_messages or self.state.excluded_blocks) or any(
            a.role == b.role == "assistant" for a, b in pairwise(kept)
        )
        sent = merge_same_role(kept)
        if sent and sent[0].role != "user":
            sent = (
                user_note("[ContextDesk note: the conversation's first message is excluded.]"),
                *sent,
            )
            self.recount = True
        if risky:
            sent = tuple(repair(sent).messages)  # (itself, a tuple, if nothing changed)
            self.recount = True
        if sent and sent[-1].role == "assistant":
            last = without_trailing_whitespace(sent[-1])
            self.recount = self.recount or last is not sent[-1]
            sent = (*sent[:-1], last)
        return sent

    # -- which messages are kept ------------------------------------------------------------

    def window_start(self, starts: _Starts, tail_from: int, n: int, head_count: int) -> int:
        """Seed 000's sliding window by message count: first + the latest N−1 (cut at a
        clean start, so the kept part may hold fewer)."""
        limit = self.settings.max_context_messages
        if limit <= 0 or n - tail_from <= limit - head_count:
            return tail_from
        candidate = n - max(1, limit - head_count)
        return starts.first_from(candidate, starts.last() if starts else tail_from)

    def trim_to_budget(self, starts: _Starts, keep_from: int, fixed: int) -> int:
        """Seed 001's trim, when the request would not fit: keep the first message and the
        most recent N turns, dropping the whole middle at once (a stable cut keeps the
        prompt cache useful); if that is still too much, drop recent turns oldest first,
        always keeping the latest one."""
        budget = self.settings.context_window - self.settings.max_tokens
        n = len(self.messages)
        if self.calibrated(fixed + self.costs.between(keep_from, n)) <= budget:
            return keep_from
        fixed += self.counter.message(user_note(omission_note(10**6, (10**5, 10**5))))  # its note
        recent, clean = self.settings.keep_recent_turns, starts.clean
        later = starts.after(keep_from)  # (clean[later:] start after it)
        if recent > 0 and len(clean) - later >= recent:
            keep_from = clean[-recent]
        for k in range(starts.after(keep_from), len(clean)):
            if self.calibrated(fixed + self.costs.between(keep_from, n)) <= budget:
                break
            keep_from = clean[k]
        return keep_from

    # -- the account -------------------------------------------------------------------------

    def summary_message(self, summary: Summary, turns: Sequence[int]) -> Message:
        covered, _ = self.known.covered(summary)
        return summary_as_sent(
            summary, (turns[covered[0]], turns[covered[-1]]) if covered else None
        )

    def calibrated(self, raw: int) -> int:
        return round(raw * self.factor)

    def plan(
        self,
        request: ChatRequest,
        summary_message: Message | None,
        messages_raw: int,
        untrimmed_raw: int,
        starts: _Starts,
        facts: str,
    ) -> Plan:
        counter, settings = self.counter, self.settings
        window = settings.context_window
        self.factor = counter.request_factor(request)  # this body's mix of content
        project = self.project.text if self.project else ""
        system_raw = counter.system(
            tuple(p for p in request.system if p.text not in (facts, project))
        )
        facts_raw = counter.system((SystemPart(facts),)) if facts else 0
        project_raw = counter.system((SystemPart(project),)) if project else 0
        layers_raw = _layer_costs(self.project, project_raw, counter)
        tools_raw = counter.tools(request.tools)
        summary_raw = (
            sum(counter.block(b) for b in summary_message.blocks) if summary_message else 0
        )
        total_raw = REQUEST_OVERHEAD + counter.system(request.system) + tools_raw + messages_raw
        estimated = self.calibrated(total_raw)
        sections = {
            Section.SYSTEM: self.calibrated(system_raw),
            Section.FACTS: self.calibrated(facts_raw),
            Section.TOOLS: self.calibrated(tools_raw),
            Section.SUMMARY: self.calibrated(summary_raw),
            Section.PROJECT_INSTRUCTIONS: self.calibrated(layers_raw.get("instructions", 0)),
            Section.PROJECT_FACTS: self.calibrated(layers_raw.get("facts", 0)),
            Section.PROJECT_KNOWLEDGE: self.calibrated(
                layers_raw.get("knowledge", 0) + self.documents_raw
            ),
            Section.MESSAGES: estimated
            - sum(
                self.calibrated(x)
                for x in (system_raw, facts_raw, tools_raw, summary_raw, project_raw)
            )
            - self.calibrated(self.documents_raw),
            Section.RESERVED: settings.max_tokens,
        }
        sections[Section.FREE] = max(0, window - sum(sections.values()))

        threshold = int(window * settings.compaction_threshold)
        untrimmed = self.calibrated(untrimmed_raw)
        due_reason = ""
        if untrimmed >= threshold:
            share = f"{settings.compaction_threshold:.0%}"
            due_reason = f"the input (≈{untrimmed:,} tokens) reached {share} of the window"
        elif untrimmed + settings.max_tokens > window:
            due_reason = "the input plus the reserved reply would not fit the window"
        states = self.message_states
        last_reported = self.known.last_usage
        usage = self.messages[last_reported].usage if last_reported >= 0 else None
        return Plan(
            request=request,
            sections=sections,
            context_window=window,
            estimated_input=estimated,
            calibration=self.factor,
            threshold=threshold,
            compaction_due=bool(due_reason),
            due_reason=due_reason,
            fits=estimated + settings.max_tokens <= window,
            forecast_turns=self.forecast(starts, threshold - untrimmed),
            first_sent_after_head=states.first_unmarked(1),
            last_reported=TokenFigure(usage.prompt_tokens, exact=True) if usage else None,
            not_sent_count=states.not_sent_count(),
            message_states=states,
            block_states=self.block_states,
            counter=counter,
            project=self.project,
            unsent_reasons=self.unsent_reasons,
            documents_tokens=self.calibrated(self.documents_raw),
        )

    def forecast(self, starts: _Starts, headroom: int) -> int | None:
        if headroom <= 0:
            return 0
        recent = starts.last_few(FORECAST_TURNS)  # the turns of the tail, newest last
        if len(recent) < 2:
            return None
        rate = self.calibrated(self.costs.between(recent[0], len(self.messages))) / len(recent)
        return math.ceil(headroom / rate) if rate > 0 else None


_NO_POLICIES: Mapping[str, TrimPolicy] = {}


def _shapers(
    state: ContextState, settings: ContextSettings, policies: Mapping[str, TrimPolicy]
) -> tuple[object, ...]:
    """What shapes a message's view (views.py)."""
    return (
        state.excluded_messages,
        state.excluded_blocks,
        state.cleared_results,
        policies,
        settings.tool_result_cap,
        settings.drop_old_thinking,
    )


def _layer_costs(
    project: ProjectLayers | None, whole: int, counter: TokenCounter
) -> dict[str, int]:
    """Each project layer's share of the project's part (`whole`, raw): its own text,
    with the part's framing and joins given to the first layer sent."""
    if project is None or not whole:
        return {}
    costs = {layer.name: counter.text(layer.text) for layer in project.layers if layer.text}
    first = next(iter(costs))
    costs[first] += whole - sum(costs.values())
    return costs


def documents_agree(sent: tuple[Message, ...]) -> tuple[Message, ...]:
    """The request's documents with citations on, when some are and some are not: the API
    takes citations "on all or none of the documents within a request" (citations page,
    2026-12-03) — a PDF attached before citations were turned on, or an imported one,
    beside one of today's. Nothing changes when they already agree."""
    states = {
        bool((b.raw.get("citations") or {}).get("enabled"))
        for m in sent
        if m.role == "user"
        for b in m.blocks
        if isinstance(b, OpaqueBlock) and b.type == "document"
    }
    if len(states) < 2:
        return sent
    return tuple(
        replace(m, blocks=tuple(_cited(b) for b in m.blocks)) if m.role == "user" else m
        for m in sent
    )


def _cited(block: Block) -> Block:
    if isinstance(block, OpaqueBlock) and block.type == "document":
        return OpaqueBlock("document", {**block.raw, "citations": {"enabled": True}})
    return block


def _block_index(blocks: tuple[Block, ...], block: Block) -> int:
    """Where `block` is in `blocks`: the same object, else the first equal one."""
    same = next((j for j, b in enumerate(blocks) if b is block), None)
    return blocks.index(block) if same is None else same


def _has_thinking(message: Message) -> bool:
    return any(isinstance(b, THINKING_TYPES) for b in message.blocks)


class _Costs:
    """Each message's view and its raw cost, with sums: the settled ones `known`'s, the
    rest (`views` and `tail`, from `known.settled` on) this projection's."""

    def __init__(self, known: KnownPrefix, views: list[Message | None], tail: list[int]) -> None:
        self.known, self.views, self.tail = known, views, tail
        self.start = known.settled
        self.sums = list(accumulate(tail, initial=known.cost_sums[self.start]))

    def __getitem__(self, i: int) -> int:
        return self.known.costs[i] if i < self.start else self.tail[i - self.start]

    def view(self, i: int) -> Message | None:
        return self.known.views[i] if i < self.start else self.views[i - self.start]

    def _sum_to(self, i: int) -> int:
        return self.known.cost_sums[i] if i <= self.start else self.sums[i - self.start]

    def between(self, a: int, b: int) -> int:
        """The raw cost of messages [a, b)."""
        return self._sum_to(b) - self._sum_to(a) if a < b else 0


class _Starts:
    """Where a kept part may start, from `tail_from` on: `tail_from` itself, then each
    clean start after it (`clean`: all of the transcript's, ascending) — found by
    halves, not by walking 40,000 turns."""

    def __init__(self, clean: list[int], tail_from: int, n: int) -> None:
        self.clean, self.tail_from, self.n = clean, tail_from, n

    def __bool__(self) -> bool:
        return self.tail_from < self.n

    def after(self, at: int) -> int:
        """Where in `clean` the starts after `at` (at ≥ tail_from) begin."""
        return bisect_right(self.clean, max(at, self.tail_from))

    def first_from(self, at: int, default: int) -> int:
        """The first start at or after `at`, else `default`."""
        if at <= self.tail_from:
            return self.tail_from if self else default
        later = bisect_left(self.clean, at)
        return self.clean[later] if later < len(self.clean) else default

    def last(self) -> int:
        return self.clean[-1] if self.clean and self.clean[-1] > self.tail_from else self.tail_from

    def last_few(self, count: int) -> list[int]:
        if not self:
            return []
        later = bisect_right(self.clean, self.tail_from)
        return [self.tail_from, *self.clean[max(later, len(self.clean) - count) :]][-count:]
