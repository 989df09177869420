"""Continue in a new chat (a hand-off): long work outgrows one chat, and compacting again
and again blurs it. The new chat starts with what the user chose to carry — the pinned
facts (each moved, copied or left), a summary of the old chat (the model's, or an
extractive digest that costs no request), its last turns verbatim, its project — and
nothing else from it. First a preview (nothing changes), then `hand_off`; both chats link
to each other (`handoffs`), and what the hand-off left behind is named."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

from desktop_app.chats.changes import Changes
from desktop_app.context.facts import Fact, facts_block
from desktop_app.core.messages import Message, new_id

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

    from desktop_app.chats.chat import Chat
    from desktop_app.chats.projects import Projects
    from desktop_app.core.cancel import CancelToken
    from desktop_app.storage.chat_info import ChatInfo
    from desktop_app.storage.store import ChatStore
    from desktop_app.tokens.counter import TokenCounter

KEEP_TURNS = 2  # the last turns a new chat starts with, verbatim, unless the user says
# Above the summary, in the new chat's system prompt (where the user sees and edits it).
SUMMARY_HEADING = "## Where the conversation was (continued from an earlier chat)"


class FactChoice(StrEnum):
    COPY = "copy"  # pinned in both chats
    MOVE = "move"  # pinned in the new chat only
    DROP = "drop"  # left in the old chat only (named: the hand-off dropped it)


@dataclass(frozen=True, slots=True)
class HandoffPreview:
    """What the new chat would start with (nothing is made yet)."""

    chat_id: str
    title: str
    summary: str  # of the turns before the kept ones ("": none are older)
    by_model: bool  # the model wrote the summary (else: an extractive digest)
    kept: tuple[Message, ...]  # the last turns, verbatim
    facts: tuple[Fact, ...]  # the old chat's pinned facts, to move, copy or drop
    missing: tuple[str, ...]  # hard facts of the summarized turns the summary lost
    project_id: str | None
    older: str = field(default="", repr=False)  # the summarized turns, as the check reads them


@dataclass(frozen=True, slots=True)
class Handoff:
    chat: Chat  # the new chat
    dropped: tuple[str, ...]  # the old chat's facts the new one does not carry
    missing: tuple[str, ...]  # hard facts neither the summary nor a carried fact holds


class HandoffHost(Protocol):
    """`Engine`, as a hand-off sees it (a protocol: the engine calls this module)."""

    store: ChatStore

    @property
    def projects(self) -> Projects: ...

    def chat(self, chat_id: str) -> Chat: ...


def preview_handoff(chat: Chat, keep_turns: int, *, use_model: bool) -> HandoffPreview:
    """The new chat's start: the last `keep_turns` turns, and a summary of the rest —
    asked of the chat's model (one request, in the ledger) or, without one, a digest."""
    from desktop_app.chats.slow import run_here

    previewing = previewing_handoff(chat, keep_turns, use_model=use_model)
    run_here(previewing)
    assert previewing.preview is not None  # (it ends with one, or raises)
    return previewing.preview


def previewing_handoff(chat: Chat, keep_turns: int, *, use_model: bool) -> HandoffPreviewing:
    """`preview_handoff` as a slow action (chats/slow.py): the chat is read now, on the
    calling thread; the model is asked on a worker's."""
    from desktop_app.chats.chat_core import repaired
    from desktop_app.context.compaction import plan_span, render_span
    from desktop_app.context.digest import digest
    from desktop_app.context.errors import NothingToCompact
    from desktop_app.context.fidelity import missing_facts

    messages = repaired(chat.messages())
    state = chat.state
    # Everything before the kept turns, the first message too (it is not sent again).
    settings = replace(chat.settings, keep_first_message=False)
    facts = tuple(f for f in state.facts if not f.pending)
    planner = chat.plans.planner() if use_model else None
    start = HandoffPreview(chat.id, chat.title, "", False, (), facts, (), chat.info.project_id)
    keep = max(1, keep_turns)

    def ask(cancel: CancelToken) -> HandoffPreview:
        try:
            span = plan_span(messages, state, settings, keep)
        except NothingToCompact:  # a short chat: every turn is carried
            return replace(start, kept=tuple(messages))
        older = messages[: span.end]
        if planner is not None:
            planner.compactor.refuse_a_part(
                messages,
                state,
                settings,
                keep,
                why="The turns before the ones kept hold more than one summary request "
                "carries. Continue without the model's summary: the older turns are "
                "digested here instead, or keep more turns.",
            )
            summary = planner.compactor.preview(
                messages,
                state,
                settings,
                model=planner.model,
                cancel=cancel,
                instructions="This summary starts a new chat that continues this one.",
                keep_recent=keep,
            ).text
            source = render_span(messages, span)
        else:
            summary, source = digest(older), "\n".join(m.text for m in older)
        lost = missing_facts(source, summary, [facts_block(facts)])
        return replace(
            start,
            summary=summary,
            by_model=planner is not None,
            kept=tuple(messages[span.end :]),
            missing=tuple(lost),
            older=source,
        )

    return HandoffPreviewing(ask, chat)


@dataclass
class HandoffPreviewing:
    """Making a hand-off's preview (a slow action: chats/slow.py). Its one event is the
    preview; once it ends, the summary request it sent goes to the old chat's ledger."""

    ask: Callable[[CancelToken], HandoffPreview]
    chat: Chat
    preview: HandoffPreview | None = None

    def events(self, cancel: CancelToken) -> Iterator[HandoffPreview]:
        yield self.ask(cancel)

    def release_thread(self) -> None:
        self.chat.release_thread()

    def record(self, event: HandoffPreview) -> None:
        self.preview = event

    def finish(self) -> Changes:
        self.chat.plans.record_compaction_requests()
        return Changes()


def hand_off(
    host: HandoffHost,
    chat: Chat,
    preview: HandoffPreview,
    *,
    summary: str | None = None,
    choices: Mapping[str, FactChoice] | None = None,
) -> Handoff:
    """Make the new chat from `preview` — its summary as the user edited it, each fact
    as chosen (copied by default) — in one transaction, linked to the old one; then take
    the moved facts out of the old chat."""
    from desktop_app.context.fidelity import missing_facts
    from desktop_app.context.state import ContextState
    from desktop_app.core.repair import repair

    chosen = dict(choices or {})
    text = (preview.summary if summary is None else summary).strip()
    carried = [f for f in preview.facts if chosen.get(f.id, FactChoice.COPY) is not FactChoice.DROP]
    system = chat.info.system_prompt
    if text:
        where = f"{SUMMARY_HEADING}\n\n{text}"
        system = f"{system}\n\n{where}" if system.strip() else where
    messages = repair([replace(m, id=new_id()) for m in preview.kept]).messages
    state = ContextState(facts=tuple(replace(f, id=new_id("fact")) for f in carried))
    info = host.store.create_full(
        _title(preview.title),
        chat.model,
        system,
        chat.settings,
        messages,
        state,
        continues=chat.id,
    )
    new = host.chat(info.id)
    if preview.project_id:
        host.projects.move(new, preview.project_id)
    for fact in preview.facts:
        if chosen.get(fact.id) is FactChoice.MOVE:
            chat.memory.unpin(fact)
    dropped = tuple(f.text for f in preview.facts if chosen.get(f.id) is FactChoice.DROP)
    lost = missing_facts(preview.older, text, [facts_block(carried)])  # (as edited and chosen)
    return Handoff(new, dropped, tuple(lost))


def _title(old: str) -> str:
    return old if old.endswith("(continued)") else f"{old} (continued)"


def first_request_tokens(preview: HandoffPreview, chat: Chat, counter: TokenCounter) -> int:
    """About what the new chat's first request holds, in tokens (an estimate before it
    is made): the system prompt with the summary, the facts carried, the kept turns."""
    system = chat.info.system_prompt + "\n\n" + SUMMARY_HEADING + "\n\n" + preview.summary
    facts = facts_block(preview.facts)
    return counter.text(system) + counter.text(facts) + sum(map(counter.message, preview.kept))


def handoff_links(store: ChatStore, chat_id: str) -> tuple[ChatInfo | None, list[ChatInfo]]:
    """The chat this one continues (None), and the chats that continue it (oldest
    first) — those still here (one deleted for good is gone from the links too)."""
    before, after = store.handoffs(chat_id)
    rows = store.chats([c for c in [before, *after] if c])
    return (rows.get(before) if before else None), [rows[c] for c in after if c in rows]
