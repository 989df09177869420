"""Asking the ledger about a text — a fact, an order number, a file name: which of the
chat's requests carried it, the last one, whether the next request carries it and, when
it does not, what stopped it (a compaction, trimming, an exclusion, a cleared tool
result, a thinking block a model switch cannot resend, another branch). One home for
"last sent in request #N": the fact list's and `requests --find`'s."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from desktop_app.core.errors import ContextDeskError, ErrorKind

if TYPE_CHECKING:
    from desktop_app.chats.chat_core import ChatCore
    from desktop_app.chats.planning import Planning
    from desktop_app.context.plan import Plan
    from desktop_app.core.messages import Message
    from desktop_app.storage.ledger import Carrier
    from desktop_app.storage.store import ChatStore


@dataclass(frozen=True, slots=True)
class Trace:
    """What the ledger and the next request say of one text in one chat."""

    text: str
    carriers: tuple[Carrier, ...]  # the requests that carried it, oldest first
    in_next: bool  # the next request carries it
    where: str  # what holds it now: "message #3 (you)", "a pinned fact" ("": nothing)
    stopped_by: str  # while not sent: "compaction #1", "trimming", … ("": it is sent)
    why: str  # one sentence: where it is sent, or what stopped it

    @property
    def last(self) -> Carrier | None:
        return self.carriers[-1] if self.carriers else None

    def to_json(self) -> dict[str, Any]:
        last = self.last
        return {
            "text": self.text,
            "requests": [c.number for c in self.carriers],
            "last": last.number if last else None,
            "last_sent_at": last.sent_at if last else None,
            "in_next_request": self.in_next,
            "held_by": self.where or None,
            "stopped_by": self.stopped_by or None,
            "why": self.why,
        }


def trace(core: ChatCore, plans: Planning, text: str, plan: Plan | None = None) -> Trace:
    """Where `text` went in the chat's requests, and where it stands in the next one
    (`plan`'s, when the caller has it: the window's, already made off its thread)."""
    from desktop_app.storage import ledger

    _given(text)
    needle = json.dumps(text, ensure_ascii=False)[1:-1]  # as it stands in a body's JSON
    carriers = tuple(ledger.carried(core.host.store.db, core.id, {text: (needle,)})[text])
    plan = plan or plans.plan()
    in_next = needle in json.dumps(plan.request.body(), ensure_ascii=False)
    where, stopped_by, why = _standing(core, plan, text, needle, in_next)
    return Trace(text, carriers, in_next, where, stopped_by, why)


def requests_carrying(store: ChatStore, text: str) -> dict[str, list[Carrier]]:
    """Every chat whose requests carried `text`: chat id → those requests, oldest first."""
    from desktop_app.storage import ledger

    _given(text)
    return ledger.chats_carrying(store.db, text)


def _given(text: str) -> None:
    if not text.strip():
        raise ContextDeskError(
            "Nothing to find", "Give the text to look for.", kind=ErrorKind.USAGE
        )


def _standing(
    core: ChatCore, plan: Plan, text: str, needle: str, in_next: bool
) -> tuple[str, str, str]:
    """(what holds it, what stopped it, the sentence) for the next request."""
    state = core.state
    shown = core.messages()
    found = _holder(shown, needle)
    summary = state.active_summary
    if in_next:
        if summary is not None and text in summary.text:
            inside = f"summary #{summary.number}"
            if found is not None and found[0].id in summary.covers:
                named = _named(shown, found[0])
                why = f"Compaction #{summary.number} summarized {named}; still sent, inside it."
                return inside, "", why
            return inside, "", f"Still sent, inside {inside}."
        if any(text in f.text and not f.pending for f in state.facts):
            return "a pinned fact", "", "Sent in a pinned fact."
        if found is not None:
            return _named(shown, found[0]), "", f"Sent in {_named(shown, found[0])}."
        return "the system prompt or a project layer", "", "Sent, outside the messages."
    if found is None:
        return _elsewhere(core, text, needle)
    message, index = found
    status = plan.block_status(message, index)
    named = _named(shown, message)
    from desktop_app.context.plan import BlockState

    if status.state is BlockState.SUMMARIZED:
        return (
            named,
            f"compaction #{status.summary}",
            f"Compaction #{status.summary} summarized {named}, and its summary does not quote it.",
        )
    if status.state is BlockState.EXCLUDED:
        return named, "exclusion", f"{named.capitalize()} is left out of the context."
    if status.state is BlockState.CLEARED:
        return named, "a cleared tool result", f"The tool result in {named} was cleared."
    if status.state is BlockState.TRIMMED:
        return named, "trimming", f"Trimming cut it from {named} ({status.label})."
    if status.why:
        stopped = "a model switch" if "model" in status.why else "not sent"
        return named, stopped, f"{named.capitalize()}: {status.label}."
    return named, "not sent", f"{named.capitalize()} is {status.label} in the next request."


def _holder(messages: Sequence[Message], needle: str) -> tuple[Message, int] | None:
    """The newest message of the branch shown whose block holds the text, with the
    block's index (the newest: the one that would still be sent)."""
    for message in reversed(messages):
        for i, block in enumerate(message.to_api()["content"]):
            said = {k: v for k, v in block.items() if k not in OPAQUE}
            if needle in json.dumps(said, ensure_ascii=False):
                return message, i
    return None


OPAQUE = ("signature", "data")  # a thinking block's seal: base64, matched only by chance


def _named(messages: Sequence[Message], message: Message) -> str:
    position = next(i for i, m in enumerate(messages) if m.id == message.id) + 1
    who = "you" if message.role == "user" and not message.is_tool_results else "Claude"
    return f"message #{position} ({who})"


def _elsewhere(core: ChatCore, text: str, needle: str) -> tuple[str, str, str]:
    """Not in the branch shown: on another branch, a suggestion, or nowhere any more."""
    store = core.host.store
    if _holder([m for _, m in store.other_branches(core.id)], needle) is not None:
        return "another branch", "another branch", "It is on a branch not shown (a version)."
    if any(text in f.text and f.pending for f in core.state.facts):
        return (
            "a suggested fact",
            "not accepted",
            "A suggested fact holds it: not sent until accepted.",
        )
    return (
        "",
        "gone from the chat",
        "Nothing in the chat holds it now (a fact unpinned or edited, a system prompt changed).",
    )
