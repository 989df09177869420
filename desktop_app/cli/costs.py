"""`contextdesk spend` and `prices`: what the requests cost, by the price table."""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from typing import TYPE_CHECKING

from desktop_app.cli.arguments import key_values
from desktop_app.cli.wording import price_line, spend_json
from desktop_app.config.prices import format_money
from desktop_app.core.errors import ContextDeskError, ErrorKind

if TYPE_CHECKING:
    from desktop_app.chats import Engine


def cmd_spend(engine: Engine, args: argparse.Namespace) -> int:
    """What the requests of every chat cost: today, this month, or all time."""
    now = time.localtime()
    starts = {
        "today": time.mktime((now.tm_year, now.tm_mon, now.tm_mday, 0, 0, 0, 0, 0, -1)),
        "month": time.mktime((now.tm_year, now.tm_mon, 1, 0, 0, 0, 0, 0, -1)),
        "all": None,
    }
    if args.by:
        return _spend_by(engine, args.by, starts[args.period], args.json)
    spend = engine.spend(starts[args.period])
    if args.json:
        print(json.dumps({"period": args.period, **spend_json(spend)}, indent=2))
        return 0
    label = {"today": "Today", "month": "This month", "all": "All time"}[args.period]
    print(f"{label}: {spend.text()} (prices of {engine.prices().updated})")
    return 0


def _spend_by(engine: Engine, by: str, since: float | None, as_json: bool) -> int:
    """`spend --by day|model|chat|project`: a row per group, as the usage view shows it."""
    report = engine.usage(by, since)
    if as_json:
        print(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
        return 0
    money = functools.partial(format_money, currency=report.currency)
    print(
        f"{by:<24} {'requests':>9} {'input':>11} {'cache write':>12} {'cache read':>11} "
        f"{'output':>9} {'cost':>10}"
    )
    for row in (*report.rows, report.total):
        name = row.label if by in ("chat", "project") and row is not report.total else row.key
        tokens = row.tokens
        print(
            f"{name[:24]:<24} {row.requests:>9,} {tokens['input']:>11,} "
            f"{tokens['cache_write']:>12,} {tokens['cache_read']:>11,} {tokens['output']:>9,} "
            f"{money(row.cost):>10}"
            + (f"  ({row.unpriced} without a price)" if row.unpriced else "")
        )
    print(f"(tokens as the API reported them; money by the prices of {report.prices_of})")
    return 0


def cmd_prices(engine: Engine, args: argparse.Namespace) -> int:
    """The price table, or one model's price entered."""
    if args.action == "set":
        if not args.model:
            raise ContextDeskError(
                "Which model?", "prices set MODEL input=… output=…", kind=ErrorKind.USAGE
            )
        values = {}
        for key, text in key_values(args.pairs).items():
            try:
                values[key] = float(text)
            except ValueError:
                raise ContextDeskError(
                    "Not a price", f"{key}={text!r}: give a number", kind=ErrorKind.USAGE
                ) from None
        path = engine.set_price(args.model, values)
        price = engine.prices().price(args.model)
        assert price is not None
        print(f"{args.model}: {price_line(price)} (kept in {path})")
        return 0
    table = engine.prices()
    if args.json:
        models = {name: price.to_json() for name, price in table.models.items()}
        print(
            json.dumps(
                {
                    "updated": table.updated,
                    "currency": table.currency,
                    "per_tokens": table.per_tokens,
                    "models": models,
                },
                indent=2,
            )
        )
        return 0
    print(f"Prices in {table.currency} per {table.per_tokens:,} tokens, of {table.updated}:")
    for name, price in table.models.items():
        print(f"  {name:<22} {price_line(price)}")
    for problem in table.problems:
        print(f"  ({problem})", file=sys.stderr)
    return 0
