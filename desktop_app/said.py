"""Words for values, shared by the window and the terminal: what crosses the layers is a
value (`config/prices.ReplyCost`, `InputCostChange`), and its sentence is made here,
once, for both faces. Nothing here reaches the engine or imports Qt: value modules only
(the layering test reads it as a face)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from desktop_app.config.prices import (
    CacheOutlook,
    InputCostChange,
    PriceTable,
    ReplyCost,
    Spend,
    format_money,
)
from desktop_app.context.facts import Fact, FactSource

if TYPE_CHECKING:
    from desktop_app.storage.ledger import Carrier

# Who a fact came from, as the fact list and `contextdesk facts` say it.
FACT_AUTHORS = {FactSource.USER: "you", FactSource.MODEL: "Claude", FactSource.IMPORT: "an import"}


def fact_author(fact: Fact) -> str:
    return FACT_AUTHORS[fact.source]


def suggested_by(facts: list[Fact]) -> str:
    """Who suggested these waiting facts: "Claude", "an import" or both."""
    return " and ".join(dict.fromkeys(fact_author(f) for f in facts)) or "Claude"


def reply_cost(cost: ReplyCost) -> str:
    """What a reply's request cost: its tokens as the API counted them, then the money —
    or, when the model has no price, that it has none."""
    tokens = (
        f"in {cost.input_tokens:,} · cache write {cost.cache_creation_input_tokens:,} · "
        f"cache read {cost.cache_read_input_tokens:,} · out {cost.output_tokens:,}"
    )
    money = (
        format_money(cost.cost, cost.currency)
        if cost.cost is not None
        else f"no price for {cost.model}"
    )
    web = ", ".join(
        f"{n} web {kind}{'es' if n > 1 else ''}"
        for n, kind in ((cost.web_searches, "search"), (cost.web_fetches, "fetch"))
        if n
    )
    ran = f" · {web}" if web else ""
    return f"Its request: {tokens} tokens (exact){ran} · {money}"


def input_cost(change: InputCostChange) -> str:
    """What a change does to the next turn's input cost (≈: from estimates), with the
    tokens it writes to the prompt cache again when the request is cached."""
    about = "≈" if change.estimated else ""
    as_is = about + format_money(change.as_is, change.currency)
    changed = about + format_money(change.with_change, change.currency)
    if not change.prompt_caching:
        return f"Next turn's input: {as_is} → {changed}."
    return (
        f"Next turn's input: {as_is} as it stands (read from the prompt cache) → {changed} "
        f"with the change ({about}{change.rewritten_tokens:,} tokens written to the cache again)."
    )


def spend_in_window(spend: Spend) -> str:
    """What a chat's requests cost, in one short line for the context panel: where a model
    has no price, the requests are counted and the window's way to add one is named."""
    if not spend.requests:
        return "nothing sent yet"
    requests = f"{spend.requests:,} request{'s' if spend.requests != 1 else ''}"
    money = format_money(spend.cost, spend.currency)
    if not spend.unpriced_models:
        return f"{money} over {requests}"
    names = ", ".join(spend.unpriced_models)
    if not spend.priced:
        return f"{requests}, tokens only: no price for {names} (add one in Settings → Prices)"
    return f"{money} over {spend.priced:,} of {requests}; no price for {names}"


def per_million(rate: float, table: PriceTable) -> str:
    """A rate of the price table as people read it: "$2.50/M" (per million tokens)."""
    unit = "M" if table.per_tokens == 1_000_000 else f"{table.per_tokens:,}"
    digits = f"{rate:.4f}".rstrip("0")
    digits += "0" * (2 - len(digits.split(".")[1]))  # $2.50, $0.125
    sign = "$" if table.currency == "USD" else f"{table.currency} "
    return f"{sign}{digits}/{unit}"


def countdown(seconds: float) -> str:
    """4:05 left of a cache, or 1:02:30 for a 1-hour one just written."""
    whole = max(0, int(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def cache_state(outlook: CacheOutlook, now: float) -> str:
    """The cache in a word or two, for the chat bar: "Cache 4:05" (warm, its time left),
    "Cache cold"."""
    cache = outlook.cache
    if cache.state == "warm":
        return f"Cache {countdown(cache.seconds_left(now))}"
    return {"cold": "Cache cold", "none": "Not cached yet", "off": "No prompt cache"}[cache.state]


def cache_line(outlook: CacheOutlook, now: float) -> str:
    """The cache and what it does to the next turn: "Prompt cache warm for 4:05 (12,400
    tokens, 5-minute) · next turn's input ≈$0.0031 now · ≈$0.0310 once cold"."""
    cache = outlook.cache
    kept = "1-hour" if cache.ttl == "1h" else "5-minute"
    state = {
        "warm": f"Prompt cache warm for {countdown(cache.seconds_left(now))} "
        f"({cache.tokens:,} tokens, {kept})",
        "cold": f"Prompt cache cold (its {kept} lifetime ran out)",
        "none": f"Nothing cached yet ({kept} cache)",
        "off": "This server takes no prompt cache",
    }[cache.state]
    if outlook.now is None or outlook.cold is None:
        return f"{state} · no price for this model, so tokens only"
    about = "" if outlook.exact else "≈"  # (the server counted the request, or we estimated)
    now_cost = about + format_money(outlook.now, outlook.currency)
    if cache.state == "warm":
        cold = about + format_money(outlook.cold, outlook.currency)
        return f"{state} · next turn's input {now_cost} now · {cold} once cold"
    return f"{state} · next turn's input {now_cost}"


def draft_price(outlook: CacheOutlook) -> str:
    """What Send would cost, for the composer: the request's input as the cache stands
    (exact when the server counted it, else ≈), and the most its reply can add."""
    if outlook.now is None or outlook.reply_at_most is None:
        return "no price for this model: tokens only (add one in Settings → Prices)"
    about = "" if outlook.exact else "≈"
    exact = " (exact count)" if outlook.exact else ""
    reply = format_money(outlook.reply_at_most, outlook.currency)
    return (
        f"Send: {about}{format_money(outlook.now, outlook.currency)} input{exact} "
        f"+ up to {reply} for the reply"
    )


def cache_breakers(outlook: CacheOutlook, now: float) -> str:
    """While the cache is warm, what breaks it and what that costs, said before it is
    done ("" when nothing is cached to lose)."""
    cache = outlook.cache
    if cache.state != "warm" or cache.seconds_left(now) <= 0:
        return ""
    what = (
        "Switching the model or its thinking, editing the system prompt or a pinned fact, "
        "or turning a tool on or off now starts the prompt cache over"
    )
    if outlook.now is None or outlook.cold is None:
        return f"{what}: {outlook.input_tokens:,} tokens written to it again."
    now_cost = format_money(outlook.now, outlook.currency)
    cold = format_money(outlook.cold, outlook.currency)
    return f"{what}: the next turn's input ≈{cold} instead of ≈{now_cost}."


def request_numbers(numbers: Sequence[int]) -> str:
    """Request numbers in runs: "#1–#3, #5"."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"#{r[0]}–#{r[-1]}" if len(r) > 1 else f"#{r[0]}" for r in runs)


def carried(text: str, numbers: Sequence[int], total: int, last: Carrier | None) -> str:
    """What the ledger says of a text: which of the chat's requests carried it."""
    if last is None:
        return f"No request of the {total} this chat sent carried “{text}”."
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(last.sent_at))
    return (
        f"“{text}” was in {len(numbers)} of {total} requests: {request_numbers(numbers)} "
        f"(last sent in request #{last.number}, {when})."
    )


def estimated_money(amount: float | None, currency: str) -> str:
    """An estimated amount ("≈$0.0031"), or "no price" for a model the table lacks."""
    return f"≈{format_money(amount, currency)}" if amount is not None else "no price"
