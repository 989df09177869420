"""What a chat's requests cost (`chat.costs`): the ledger of what it sent, each reply's
request, what a change would do to the next turn's input, the chat's spend, and two
requests side by side. Costs are values (`config/prices.ReplyCost`, `InputCostChange`):
the faces say them, with `desktop_app.said`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from desktop_app.chats.chat_core import ChatCore
from desktop_app.chats.planning import Planning
from desktop_app.context.facts import Fact
from desktop_app.context.state import ContextState
from desktop_app.core.errors import ContextDeskError, ErrorKind
from desktop_app.core.messages import Message

if TYPE_CHECKING:
    from desktop_app.chats.budgets import Budget
    from desktop_app.chats.tracing import Trace
    from desktop_app.config.prices import CacheOutlook, InputCostChange, ReplyCost, Spend
    from desktop_app.context.compaction import CompactionPreview
    from desktop_app.context.plan import Plan
    from desktop_app.core.request_diff import RequestDiff
    from desktop_app.storage.ledger import SentRequest


class Costs:
    def __init__(self, core: ChatCore, plans: Planning) -> None:
        self._core = core
        self._plans = plans

    # -- the request ledger ------------------------------------------------------------------

    def sent_requests(self) -> list[SentRequest]:
        """Every request this chat sent, oldest first, with the usage the API reported."""
        from desktop_app.storage import ledger

        return ledger.requests(self._core.host.store.db, self._core.id)

    def sent_body(self, number: int) -> dict[str, Any]:
        """The body of the chat's request `number` (1 = its first), as it was sent."""
        from desktop_app.storage import ledger

        sent = self.sent_requests()
        found = next((r for r in sent if r.number == number), None)
        if found is None:
            raise ContextDeskError(
                "No such request",
                f"This chat has sent {len(sent)} request(s); there is no #{number}.",
                kind=ErrorKind.USAGE,
            )
        return ledger.body(self._core.host.store.db, found.id)

    def ledger_export(self) -> list[dict[str, Any]]:
        """Every request the chat sent, with its body: for an export."""
        from desktop_app.storage import ledger

        db = self._core.host.store.db
        return [{**r.to_json(), "body": ledger.body(db, r.id)} for r in self.sent_requests()]

    def trace(self, text: str, plan: Plan | None = None) -> Trace:
        """Which requests carried `text`, and whether the next one (`plan`'s, else planned
        now) does — or what stopped it (chats/tracing.py)."""
        from desktop_app.chats.tracing import trace

        return trace(self._core, self._plans, text, plan)

    def facts_last_sent(self, facts: Sequence[Fact]) -> dict[str, tuple[int, float]]:
        """Fact id → (request number, time) of the last request that carried it, from the
        ledger (a fact never sent is not in it)."""
        from desktop_app.storage import ledger

        rendered = {f.id: f.render() for f in facts}
        db = self._core.host.store.db
        sent = ledger.last_sent_with(db, self._core.id, list(rendered.values()))
        return {fid: sent[text] for fid, text in rendered.items() if text in sent}

    def reply_cost(self, reply_id: str) -> ReplyCost | None:
        """What the request answered by this reply cost: its tokens as the API counted them,
        and money by the price table (None when the model has no price). None when there
        is no record of the request, or no usage in it."""
        from desktop_app.config.prices import ReplyCost
        from desktop_app.storage import ledger

        found = ledger.reply_request(self._core.host.store.db, reply_id)
        if found is None:
            return None
        model, usage = found
        if usage is None:
            return None
        prices = self._core.host.prices()
        return ReplyCost(
            model,
            usage.input_tokens,
            usage.cache_creation_input_tokens,
            usage.cache_read_input_tokens,
            usage.output_tokens,
            prices.cost(model, usage),
            prices.currency,
            usage.web_search_requests,
            usage.web_fetch_requests,
        )

    def cache_outlook(self, plan: Plan) -> CacheOutlook:
        """The prompt cache before the next turn (`plan`'s request): warm, with its time
        left, or cold, and what the next request's input costs now and once cold."""
        return cache_outlook(self._core, plan)

    def budgets(self) -> list[Budget]:
        """Every spending cap this chat's sends count against, with what is spent."""
        from desktop_app.chats.budgets import budgets

        return budgets(self._core)

    def spend(self) -> Spend:
        """What this chat's requests cost, by the price table (tokens only where a model
        has no price)."""
        return self._core.host.spend(chat_id=self._core.id)

    def diff_requests(self, before: str, after: str) -> RequestDiff:
        """Two requests side by side — each a number from the ledger, or `next` (what a send
        would make now) — and where the prompt cache breaks between them."""
        from desktop_app.core.request_diff import diff_bodies

        names = (f"request {before}", f"request {after}")
        return diff_bodies(self._body_of(before), self._body_of(after), names)

    def _body_of(self, which: str) -> dict[str, Any]:
        if which == "next":  # as it would go: the recorded ones say "stream" too
            return {**self._plans.plan().request.body(), "stream": True}
        if not which.isdigit():
            raise ContextDeskError(
                "Not a request",
                f"{which!r}: give a request number or `next`.",
                kind=ErrorKind.USAGE,
            )
        return self.sent_body(int(which))

    # -- what a change costs ------------------------------------------------------------------

    def of_change(self, before: Plan, after: Plan) -> InputCostChange | None:
        """What a change does to the next turn's input cost (from token estimates), with
        the cache write it causes: everything after the first changed position is written
        to the prompt cache again. None when the model has no price."""
        from desktop_app.config.prices import InputCostChange
        from desktop_app.context.plan import Section
        from desktop_app.core.request_diff import diff_bodies

        prices = self._core.host.prices()
        price = prices.price(self._core.model)
        if price is None:
            return None
        per = prices.per_tokens
        old, new = before.estimated_input, after.estimated_input
        if not after.request.prompt_caching:  # no cache: every input token at the input price
            return InputCostChange(
                prices.currency,
                as_is=old * price.input / per,
                with_change=new * price.input / per,
                rewritten_tokens=0,
                prompt_caching=False,
            )
        first = diff_bodies(before.request.body(), after.request.body()).first_change
        kept = new
        if first is not None:
            sections = after.sections
            kept = sections[Section.TOOLS] if first != "tools" else 0
            if first.startswith("messages."):
                head = sections[Section.SYSTEM] + sections[Section.FACTS]
                upto = after.request.messages[: int(first.split(".")[1])]
                kept += head + round(after.counter.messages(upto) * after.calibration)
        kept = min(kept, new)
        rewritten = new - kept
        unchanged = old * price.cache_read / per  # as it stands: read from the cache
        write = price.cache_write_1h if after.request.cache_ttl == "1h" else price.cache_write_5m
        changed = (kept * price.cache_read + rewritten * write) / per
        return InputCostChange(
            prices.currency,
            as_is=unchanged,
            with_change=changed,
            rewritten_tokens=rewritten,
            prompt_caching=True,
        )

    def of_compaction(
        self, preview: CompactionPreview, messages: Sequence[Message]
    ) -> InputCostChange | None:
        """What applying `preview` does to the next turn's input cost (see `of_change`)."""
        from desktop_app.context.compaction import apply_preview

        return self.of_state(messages, apply_preview(self._core.state, preview))

    def of_state(self, messages: Sequence[Message], state: ContextState) -> InputCostChange | None:
        """What changing the context state to `state` (an exclusion, an undo…) does to the
        next turn's input cost; None when the model has no price (then nothing is planned:
        this runs on the GUI thread, on a click)."""
        if self._core.host.prices().price(self._core.model) is None:
            return None
        before = self._plans.plan(history=messages)
        return self.of_change(before, self._plans.plan_if(messages, state=state))


def cache_outlook(core: ChatCore, plan: Plan) -> CacheOutlook:
    """The prompt cache before `plan`'s request, and its input priced now and once cold."""
    from desktop_app.config.prices import CacheOutlook, next_input_costs
    from desktop_app.core.prompt_cache import cache_state, min_cacheable
    from desktop_app.storage import ledger

    caching = plan.request.prompt_caching
    entry = ledger.cache_entry(core.host.store.db, core.id) if caching else None
    state = cache_state(entry, core.host.clock(), caching=caching)
    if state.state == "none":  # (the TTL the next request's markers ask for)
        state = replace(state, ttl=core.settings.cache_ttl)
    figure = plan.input_figure  # the server's count of this very request, once it counted
    tokens = figure.value
    prices = core.host.prices()
    price = prices.price(core.model)
    now = cold = reply = None
    if price is not None:
        cacheable = tokens >= min_cacheable(core.model)
        now, cold = next_input_costs(price, prices.per_tokens, tokens, state, cacheable=cacheable)
        reply = plan.request.max_tokens * price.for_prompt(tokens).output / prices.per_tokens
    return CacheOutlook(
        state, tokens, now, cold, prices.currency, prices.updated, figure.exact, reply
    )
