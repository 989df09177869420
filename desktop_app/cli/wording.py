"""Values worded for the terminal: the JSON the commands print with --json, and the
lines they print without it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from desktop_app.config.prices import Price
from desktop_app.config.settings import SETTINGS, Settings
from desktop_app.core.blocks import block_type
from desktop_app.storage.search import MARK_END, MARK_START

if TYPE_CHECKING:
    from desktop_app.config.prices import Spend
    from desktop_app.context.plan import Plan
    from desktop_app.storage.chat_info import ChatInfo
    from desktop_app.storage.search import SearchHit


def chat_json(chat: ChatInfo) -> dict[str, Any]:
    return {
        "id": chat.id,
        "title": chat.title,
        "model": chat.model,
        "messages": chat.message_count,
        "created_at": chat.created_at,
        "updated_at": chat.updated_at,
        "settings": asdict(chat.settings),
    }


def settings_json(settings: Settings) -> dict[str, Any]:
    values = asdict(settings)
    return {spec.key: values[spec.attr] for spec in SETTINGS}


def price_line(price: Price) -> str:
    line = (
        f"in {price.input:g} · out {price.output:g} · cache write {price.cache_write_5m:g} (5 min) "
        f"/ {price.cache_write_1h:g} (1 h) · cache read {price.cache_read:g}"
    )
    if price.above is not None:
        line += f" · over {price.above[0]:,} prompt tokens: in {price.above[1].input:g} · out {price.above[1].output:g}"
    return line


def spend_json(spend: Spend) -> dict[str, Any]:
    return {
        "amount": round(spend.cost, 6),
        "currency": spend.currency,
        "requests": spend.requests,
        "priced_requests": spend.priced,
        "models_without_a_price": list(spend.unpriced_models),
    }


def context_json(plan: Plan, messages: Sequence[Any]) -> dict[str, Any]:
    return {
        "window": plan.context_window,
        "estimated_input": plan.estimated_input,
        "calibration": plan.calibration,  # scales the totals; block tokens are unscaled
        "calibration_by_kind": plan.counter.calibration.factors(plan.request.model),
        "compaction_due": plan.compaction_due,
        "forecast": plan.forecast,
        "sections": {s.value: v for s, v in plan.sections.items()},
        "stand_in": plan.stand_in,  # the words standing for an empty draft ("": none)
        "retries": plan.retries,  # the unfinished reply Retry answers again ("": none)
        "messages": [
            {
                "id": m.id,
                "role": m.role,
                "blocks": [
                    {
                        "type": block_type(b),
                        "tokens": st.tokens,
                        "sent_tokens": st.sent_tokens,
                        "state": st.label,
                    }
                    for b, st in ((b, plan.block_status(m, j)) for j, b in enumerate(m.blocks))
                ],
            }
            for m in messages
        ],
    }


def which_request(plan: Plan) -> str:
    if plan.retries:
        return "The last reply did not finish: this is the request `retry` would send."
    return (
        f'No --draft: a one-word message ("{plan.stand_in}") stands for it, so that the '
        "request ends as a sent one does."
    )


def hit_json(hit: SearchHit) -> dict[str, Any]:
    return {
        "chat_id": hit.chat_id,
        "chat_title": hit.chat_title,
        "message_id": hit.message_id,
        "message_number": hit.position + 1 if hit.message_id else None,
        "snippet": one_line(hit.snippet, bold=False),
    }


def one_line(snippet: str, *, bold: bool) -> str:
    """The snippet on one line, its match in bold on a terminal (plain for a pipe)."""
    start, end = ("\033[1m", "\033[0m") if bold else ("", "")
    text = " ".join(snippet.split())
    return text.replace(MARK_START, start).replace(MARK_END, end)
