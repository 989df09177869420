"""What the API's reported usage costs: a dated price table, as data.

The table ships in `resources/prices.json`; a `prices.json` in the config folder (same
shape) wins for the models it lists, so a user can correct a price or add a model
without waiting for a release. A model the table does not know shows tokens only: a
cost is never guessed.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop_app.bundled import bundled
from desktop_app.core.messages import Usage
from desktop_app.core.prompt_cache import CacheState

FILE_NAME = "prices.json"
_DATE_SUFFIX = re.compile(r"-\d{8}$")
FIELDS = ("input", "output", "cache_write_5m", "cache_write_1h", "cache_read")
BATCH_FIELDS = ("batch_input", "batch_output")
COST_KINDS = ("input", "cache_write", "cache_read", "output", "web_search")  # `cost_parts`
MOST = 100_000.0  # per million tokens: anything above is a typing slip, not a price
# The API's cache rates as multiples of the input price (about-claude/pricing): what a
# price entered without them gets.
CACHE_MULTIPLIERS = {"cache_write_5m": 1.25, "cache_write_1h": 2.0, "cache_read": 0.1}


@dataclass(frozen=True, slots=True)
class Price:
    """Per `per_tokens` tokens, in the table's currency. `above`: a higher tier for
    prompts longer than its threshold (Haiku 5.5 over 100,000 tokens)."""

    input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float
    batch_input: float | None = None
    batch_output: float | None = None
    above: tuple[int, Price] | None = None

    def for_prompt(self, prompt_tokens: int) -> Price:
        """The tier a request with this many prompt tokens is billed at."""
        if self.above is not None and prompt_tokens > self.above[0]:
            return self.above[1]
        return self

    def parts(
        self,
        per_tokens: int,
        input: int,
        write: int,
        write_1h: int,
        read: int,
        output: int,
        *,
        above: bool | None = None,
    ) -> tuple[float, float, float, float]:
        """What one request's tokens cost, by kind — input, cache write (those kept an
        hour at the 1-hour rate, the rest at the 5-minute one), cache read, output — in
        the tier the prompt's length falls in; or, for tokens summed over requests of
        one tier, in the tier given (`above` its threshold or not)."""
        if above is None:
            tier = self.for_prompt(input + write + read)
        else:
            tier = self.above[1] if above and self.above is not None else self
        hour = min(write_1h, write)
        return (
            input * tier.input / per_tokens,
            ((write - hour) * tier.cache_write_5m + hour * tier.cache_write_1h) / per_tokens,
            read * tier.cache_read / per_tokens,
            output * tier.output / per_tokens,
        )

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {name: getattr(self, name) for name in FIELDS}
        out.update({n: getattr(self, n) for n in BATCH_FIELDS if getattr(self, n) is not None})
        if self.above is not None:
            out["above"] = {"prompt_tokens": self.above[0], **self.above[1].to_json()}
        return out


@dataclass(frozen=True, slots=True)
class Spend:
    """What a set of requests cost: the total of those with a known price, and which
    models had none (their requests are counted, not priced)."""

    cost: float
    currency: str
    requests: int
    priced: int
    unpriced_models: tuple[str, ...] = ()

    def text(self) -> str:
        if not self.requests:
            return "nothing sent yet"
        money = format_money(self.cost, self.currency)
        if not self.unpriced_models:
            return f"{money} over {self.requests} request(s)"
        names = ", ".join(self.unpriced_models)
        first = self.unpriced_models[0]
        how = f"add one in Settings → Prices, or `contextdesk prices set {first} input=… output=…`"
        if not self.priced:
            return f"{self.requests} request(s); no price for {names}, so tokens only — {how}"
        return (
            f"{money} over {self.priced} of {self.requests} request(s) (no price for {names} — "
            f"{how})"
        )


@dataclass(frozen=True, slots=True)
class ReplyCost:
    """What the request a reply answered cost: its tokens as the API counted them (exact)
    and the money by the price table, in `currency` — None when `model` has no price
    (tokens only: a cost is never guessed). Said by `desktop_app.said.reply_cost`."""

    model: str
    input_tokens: int
    cache_creation_input_tokens: int  # written to the prompt cache
    cache_read_input_tokens: int
    output_tokens: int
    cost: float | None
    currency: str
    web_searches: int = 0  # run by the API within the reply, priced apiece
    web_fetches: int = 0  # cost only the tokens they brought


@dataclass(frozen=True, slots=True)
class InputCostChange:
    """What a change does to the next turn's input cost, in `currency`: `as_is` as the
    request stands, `with_change` once it is made. With `prompt_caching`, the request as
    it stands is read from the prompt cache, and the change writes `rewritten_tokens`
    (everything after the first changed position) to the cache again at the write price;
    without it every input token is at the input price and nothing is written (0).
    `estimated`: from token estimates, not the API's count. Said by
    `desktop_app.said.input_cost`."""

    currency: str
    as_is: float
    with_change: float
    rewritten_tokens: int
    prompt_caching: bool
    estimated: bool = True


@dataclass(frozen=True, slots=True)
class CacheOutlook:
    """The prompt cache before a chat's next turn: its `cache` state, and what the next
    request's input (`input_tokens`, estimated) costs `now` and once the cache is `cold`,
    in `currency` by the table of `prices_of` — both None when the model has no price.
    Estimates unless `exact` (the server counted the tokens): they assume the prefix the
    cache holds is still the request's (a change above breaks it; the Request tab's diff
    names where). Said by `said.cache_line` and `said.draft_price`."""

    cache: CacheState
    input_tokens: int
    now: float | None
    cold: float | None
    currency: str
    prices_of: str
    exact: bool = False  # `input_tokens` counted by the server for this very request
    reply_at_most: float | None = None  # the reply, were it as long as max_tokens lets it

    def to_json(self, at: float) -> dict[str, object]:
        """As `context --json` carries it: the state, when it expires, the two prices."""
        return {
            "state": self.cache.state,
            "ttl": self.cache.ttl,
            "cached_tokens": self.cache.tokens,
            "expires_at": self.cache.expires_at,
            "seconds_left": round(self.cache.seconds_left(at), 1),
            "next_input_tokens": self.input_tokens,
            "next_turn_now": self.now,
            "next_turn_cold": self.cold,
            "reply_at_most": self.reply_at_most,
            "currency": self.currency,
            "prices_of": self.prices_of,
            "estimated": not self.exact,
        }


@dataclass(frozen=True, slots=True)
class PriceTable:
    models: Mapping[str, Price]
    updated: str = ""
    currency: str = "USD"
    per_tokens: int = 1_000_000
    problems: tuple[str, ...] = field(default=(), compare=False)  # a user file we could not use
    # One web search the API runs, in the table's currency (web fetch costs only the
    # tokens it brings): the table's `web_search.per_1000_searches` / 1,000.
    search_price: float = 0.0

    @classmethod
    def load(cls, config_dir: Path | None = None) -> PriceTable:
        """The bundled table, with the user's `prices.json` (if any) over it."""
        base = _read(bundled(FILE_NAME))
        models = _models(base.get("models"), [])
        problems: list[str] = []
        updated = str(base.get("updated", ""))
        user_file = config_dir / FILE_NAME if config_dir else None
        if user_file is not None and user_file.exists():
            try:
                mine = _read(user_file)
            except (OSError, ValueError) as exc:
                problems.append(f"{user_file} was not used: {exc}")
            else:
                units = (mine.get("currency", "USD"), mine.get("per_tokens", 1_000_000))
                if units != (base.get("currency", "USD"), base.get("per_tokens", 1_000_000)):
                    problems.append(
                        f"{user_file} was not used: its prices must be in "
                        f"{base.get('currency', 'USD')} per {base.get('per_tokens', 1_000_000):,}"
                        " tokens, like the bundled table"
                    )
                else:
                    models.update(_models(mine.get("models"), problems))
                    updated = str(mine.get("updated", updated))
        return cls(
            models,
            updated,
            str(base.get("currency", "USD")),
            int(base.get("per_tokens", 1_000_000)),
            tuple(problems),
            _search_price(base.get("web_search")),
        )

    def price(self, model: str) -> Price | None:
        """The model's price: its own entry, or its id's without the date suffix."""
        return self.models.get(model) or self.models.get(_DATE_SUFFIX.sub("", model))

    def cost(self, model: str, usage: Usage) -> float | None:
        """What one request cost, or None when the model has no price: each kind of
        token at its rate (cache writes kept an hour at the 1-hour rate, the rest at the
        5-minute one), in the tier the prompt's length falls in."""
        parts = self.cost_parts(model, usage)
        return None if parts is None else sum(parts.values())

    def cost_parts(self, model: str, usage: Usage | None) -> dict[str, float] | None:
        """`cost`, by kind: input, cache_write, cache_read, output tokens, and web_search
        (the searches the API ran, priced apiece) — None: the model has no price; all 0
        when the request had no reply to report usage."""
        price = self.price(model)
        if price is None:
            return None
        if usage is None:
            return dict.fromkeys(
                ("input", "cache_write", "cache_read", "output", "web_search"), 0.0
            )
        money = price.parts(
            self.per_tokens,
            usage.input_tokens,
            usage.cache_creation_input_tokens,
            usage.cache_write_1h_tokens,
            usage.cache_read_input_tokens,
            usage.output_tokens,
        )
        parts = dict(zip(COST_KINDS[:4], money, strict=True))
        parts["web_search"] = usage.web_search_requests * self.search_price
        return parts


def next_input_costs(
    price: Price, per_tokens: int, tokens: int, cache: CacheState, *, cacheable: bool
) -> tuple[float, float]:
    """What a request of `tokens` input tokens costs now and once the cache is cold: the
    part the warm cache holds at the read price, the rest written to the cache at the
    write price of its TTL (the last message carries a breakpoint). A request the server
    will not cache (no markers, or shorter than the model's minimum) pays input price."""
    tier = price.for_prompt(tokens)
    if cache.state == "off" or not cacheable:
        plain = tokens * tier.input / per_tokens
        return plain, plain
    write = tier.cache_write_1h if cache.ttl == "1h" else tier.cache_write_5m
    held = min(cache.tokens, tokens) if cache.state == "warm" else 0
    now = (held * tier.cache_read + (tokens - held) * write) / per_tokens
    return now, tokens * write / per_tokens


def _search_price(entry: object) -> float:
    """One search's price from the bundled table's `web_search` entry (0 if it has none)."""
    per_1000 = entry.get("per_1000_searches") if isinstance(entry, dict) else None
    ok = isinstance(per_1000, int | float) and 0 <= per_1000 <= MOST
    return float(per_1000) / 1000 if ok else 0.0  # type: ignore[arg-type]


def format_money(amount: float, currency: str = "USD") -> str:
    """$0.0042 for small amounts (a turn), $12.34 for larger ones."""
    sign = "$" if currency == "USD" else f"{currency} "
    if amount and abs(amount) < 1:
        return f"{sign}{amount:.4f}"
    return f"{sign}{amount:,.2f}"


def format_amount(amount: float, currency: str = "USD") -> str:
    """An amount a person typed (a cap): in cents when it is whole cents ($0.05, $20.00),
    else as `format_money` shows it."""
    if round(amount, 2) != amount:
        return format_money(amount, currency)
    sign = "$" if currency == "USD" else f"{currency} "
    return f"{sign}{amount:,.2f}"


def _read(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object with a `models` object")
    return data


def _models(raw: Any, problems: list[str]) -> dict[str, Price]:
    out: dict[str, Price] = {}
    if not isinstance(raw, dict):
        return out
    for name, entry in raw.items():
        price = price_from_json(entry)
        if price is None:
            problems.append(
                f"{name}: needs {', '.join(FIELDS)} as numbers from 0 to {MOST:,.0f} "
                "(per million tokens)"
            )
        else:
            out[str(name)] = price
    return out


def price_from_json(entry: Any, *, tier: bool = True) -> Price | None:
    """A model's entry, or None when any figure is not a plain number in range (a bool is
    not a number here, and 1e308 is not a price)."""
    if not isinstance(entry, dict):
        return None
    values = [entry.get(f) for f in FIELDS]
    batch = [entry.get(f) for f in BATCH_FIELDS]
    if not all(_is_price(v) for v in values) or not all(b is None or _is_price(b) for b in batch):
        return None
    above = None
    if tier and entry.get("above") is not None:
        higher = entry["above"]
        threshold = higher.get("prompt_tokens") if isinstance(higher, dict) else None
        tier_price = price_from_json(higher, tier=False)
        if not isinstance(threshold, int) or isinstance(threshold, bool) or tier_price is None:
            return None
        above = (threshold, tier_price)
    rate = {name: float(entry[name]) for name in FIELDS}
    return Price(
        rate["input"],
        rate["output"],
        rate["cache_write_5m"],
        rate["cache_write_1h"],
        rate["cache_read"],
        batch_input=None if batch[0] is None else float(batch[0]),
        batch_output=None if batch[1] is None else float(batch[1]),
        above=above,
    )


def _is_price(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 <= value <= MOST
    )


def set_user_price(config_dir: Path, model: str, price: Price) -> Path:
    """Write (or correct) one model's price in the user's `prices.json`, which wins over
    the bundled table; returns the file. Raises OSError when it cannot be written."""
    from desktop_app.config.files import write_json_atomically

    path = config_dir / FILE_NAME
    try:
        data = _read(path) if path.exists() else {}
    except ValueError:
        data = {}
    found = data.get("models")
    models: dict[str, Any] = found if isinstance(found, dict) else {}
    models[model] = price.to_json()
    bundled_table = _read(bundled(FILE_NAME))
    data.update(
        {
            "about": "Prices entered in ContextDesk (Settings → Prices or `contextdesk prices "
            "set`); they win over the bundled table for these models.",
            "currency": bundled_table.get("currency", "USD"),
            "per_tokens": bundled_table.get("per_tokens", 1_000_000),
            "models": models,
        }
    )
    write_json_atomically(path, data)
    return path
