"""What a chat remembers for the model (`chat.memory`): pinned facts, messages left out
of the context, old tool results cleared, and compaction — each a change of the chat's
context state (`ChatCore.change`), never of its transcript."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from desktop_app.chats.changes import Changes
from desktop_app.chats.chat_core import ChatCore, StateChange, repaired
from desktop_app.chats.costs import Costs
from desktop_app.chats.planning import Planning
from desktop_app.context.facts import Fact, FactSource, offered
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import ContextDeskError, ErrorKind
from desktop_app.core.messages import Message

if TYPE_CHECKING:
    from desktop_app.context.compaction import CompactionPreview, SummarySize
    from desktop_app.context.state import ContextState, Summary

KEEP_RESULTS_OF_LAST_TURNS = 2  # "clear old tool results" leaves the latest ones


class Memory:
    def __init__(self, core: ChatCore, plans: Planning, costs: Costs) -> None:
        self._core = core
        self._plans = plans
        self._costs = costs

    # -- pinned facts -------------------------------------------------------------------

    def pin(self, text: str) -> Changes:
        """Pin `text`: sent verbatim with every request from now on (`Changes.fact`)."""
        text = text.strip()
        if not text:
            raise ContextDeskError("Nothing to pin", "Give the fact's text.", kind=ErrorKind.USAGE)
        fact = Fact(text)
        return replace(self._core.change(lambda s: s.pin(fact)), fact=fact)

    def fact(self, ref: str) -> Fact:
        """A pinned or suggested fact by its id or a unique prefix of it."""
        matches = [f for f in self._core.state.facts if f.id.startswith(ref)]
        if len(matches) != 1:
            why = "no fact has this id" if not matches else f"{len(matches)} facts start with it"
            raise ContextDeskError("Fact not found", f"{ref!r}: {why}.", kind=ErrorKind.NOT_FOUND)
        return matches[0]

    def suggest(self, texts: Sequence[str], source: FactSource) -> Changes:
        """Offer facts to accept or reject (an imported memory): shown, not sent until
        accepted; one the chat holds already is not offered again."""
        new = offered(texts, source, self._core.state.facts)

        def add(state: ContextState) -> ContextState:
            for fact in new:
                state = state.pin(fact)
            return state

        return self._core.change(add) if new else Changes()

    def edit_fact(self, fact: Fact, text: str) -> Changes:
        text = text.strip()
        if not text or text == fact.text:
            return Changes()
        return self._core.change(lambda s: s.update_fact(fact.edited(text)))

    def unpin(self, fact: Fact) -> Changes:
        """Delete a pinned fact, or reject one Claude suggested."""
        return self._core.change(lambda s: s.unpin(fact.id))

    def restore_fact(self, fact: Fact, index: int) -> Changes:
        """Undo a deletion: the fact comes back where it was."""
        return self._core.change(lambda s: s.pin(fact).move_fact(fact.id, index))

    def move_fact(self, fact: Fact, index: int) -> Changes:
        return self._core.change(lambda s: s.move_fact(fact.id, index))

    def accept_fact(self, fact: Fact, text: str | None = None) -> Changes:
        """A fact Claude suggested is pinned (as the user edited it, if they did)."""
        edited = fact.edited(text.strip()) if text and text.strip() else fact
        accepted = replace(edited, pending=False)
        return self._core.change(lambda s: s.update_fact(accepted))

    # -- what the next request holds ----------------------------------------------------------

    def is_excluded(self, message: Message) -> bool:
        return message.id in self._core.state.excluded_messages

    def set_excluded(
        self, message: Message, excluded: bool, *, history: Sequence[Message] | None = None
    ) -> Changes:
        """Leave a message out of what is sent (or put it back). Given the `history` shown,
        the change's cost to the next turn comes with it (`Changes.cost`)."""
        return self._priced(lambda s: s.exclude_message(message.id, excluded), history)

    def _priced(self, edit: StateChange, history: Sequence[Message] | None) -> Changes:
        """`edit` made, with what it does to the next turn's input cost, worked out before
        it is made, when `history` is given (not during a turn: the edit waits for it)."""
        cost = None
        if history is not None and not self._core.answering:
            with contextlib.suppress(ContextDeskError):  # refused: `change` says so below
                cost = self._costs.of_state(history, edit(self._core.state))
        return replace(self._core.change(edit), cost=cost)

    def old_tool_results(self, messages: Sequence[Message]) -> set[str]:
        """The tool results "Clear old tool results" would clear (all but the latest)."""
        from desktop_app.context.policies import old_tool_result_ids

        return old_tool_result_ids(messages, KEEP_RESULTS_OF_LAST_TURNS)

    def clear_tool_results(self, tool_use_ids: set[str]) -> Changes:
        """Send these results as a short placeholder (the transcript keeps them)."""
        return self._core.change(lambda s: s.clear_results(tool_use_ids))

    def resume_auto_compaction(self) -> Changes:
        return self._core.change(lambda s: s.resume_auto_compaction())

    # -- compaction ---------------------------------------------------------------------------

    def preview_compaction(self, instructions: str = "") -> CompactionPreview:
        """Ask the model for a summary of the older turns; nothing changes until
        `apply_compaction`."""
        from desktop_app.chats.slow import run_here

        previewing = self.previewing_compaction(instructions, self._core.messages())
        run_here(previewing)
        assert previewing.preview is not None  # (it ends with one, or raises)
        return previewing.preview

    def previewing_compaction(
        self, instructions: str, history: Sequence[Message]
    ) -> CompactionPreviewing:
        """`preview_compaction` as a slow action (chats/slow.py), for a worker thread."""
        planner, state, settings = self._plans.planner(), self._core.state, self._core.settings
        messages = list(history)

        def ask(cancel: CancelToken) -> CompactionPreview:
            return planner.compactor.preview(
                repaired(messages),
                state,
                settings,
                model=planner.model,
                cancel=cancel,
                instructions=instructions.strip(),
            )

        return CompactionPreviewing(ask, self._plans, self._core.host.connection.release_thread)

    def apply_compaction(self, preview: CompactionPreview, text: str | None = None) -> Changes:
        """The preview's summary (as the user edited it) replaces the turns it covers in
        what is sent; the transcript keeps them, and `undo_compaction` brings them back."""
        from desktop_app.context.compaction import apply_preview

        self._plans.record_compaction_requests()
        return self._core.change(lambda s: apply_preview(s, preview, text))

    def summary_size(self, summary: Summary, messages: Sequence[Message]) -> SummarySize:
        """The turns `summary` covers in `messages` (the branch shown), their tokens and
        its own as it is sent."""
        from desktop_app.context.compaction import summary_size

        core = self._core
        return summary_size(messages, summary, core.host.counter, core.model)

    def undo_compaction(self, *, history: Sequence[Message] | None = None) -> Changes:
        """The latest summary stands no more: the turns it covered are sent again (with
        its cost to the next turn, given the `history` shown: `set_excluded`)."""
        return self._priced(lambda s: s.undo_summary(), history)


@dataclass
class CompactionPreviewing:
    """Asking the model for a summary (a slow action: chats/slow.py). Its one event is
    the preview; once it ends, the requests it sent go to the ledger, whatever came of
    them."""

    ask: Callable[[CancelToken], CompactionPreview]
    plans: Planning
    release: Callable[[], None]
    preview: CompactionPreview | None = None

    def events(self, cancel: CancelToken) -> Iterator[CompactionPreview]:
        yield self.ask(cancel)

    def release_thread(self) -> None:
        self.release()

    def record(self, event: CompactionPreview) -> None:
        self.preview = event

    def finish(self) -> Changes:
        self.plans.record_compaction_requests()
        return Changes()
