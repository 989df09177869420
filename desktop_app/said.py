"""Words for values, shared by the window and the terminal: what crosses the layers is a
value (`config/prices.ReplyCost`, `InputCostChange`), and its sentence is made here,
once, for both faces. Nothing here reaches the engine or imports Qt: value modules only
(the layering test reads it as a face)."""

from __future__ import annotations

from desktop_app.config.prices import InputCostChange, ReplyCost, Spend, format_money


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
    return f"Its request: {tokens} tokens (exact) · {money}"


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
