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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop_app.bundled import bundled
from desktop_app.core.messages import Usage

FILE_NAME = "prices.json"
_DATE_SUFFIX = re.compile(r"-\d{8}$")
_FIELDS = ("input", "output", "cache_write_5m", "cache_write_1h", "cache_read")


@dataclass(frozen=True, slots=True)
class Price:
    """Per `per_tokens` tokens, in the table's currency."""

    input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float


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
        if not self.priced:
            return f"{self.requests} request(s); no price for {names}, so tokens only"
        return f"{money} over {self.priced} of {self.requests} request(s) (no price for {names})"


@dataclass(frozen=True, slots=True)
class PriceTable:
    models: Mapping[str, Price]
    updated: str = ""
    currency: str = "USD"
    per_tokens: int = 1_000_000
    problems: tuple[str, ...] = field(default=(), compare=False)  # a user file we could not use

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
        )

    def price(self, model: str) -> Price | None:
        """The model's price: its own entry, or its id's without the date suffix."""
        return self.models.get(model) or self.models.get(_DATE_SUFFIX.sub("", model))

    def cost(self, model: str, usage: Usage) -> float | None:
        """What one request cost, or None when the model has no price. Cache writes are
        priced at the 5-minute rate: ContextDesk's breakpoints are all 5-minute ones."""
        price = self.price(model)
        if price is None:
            return None
        return (
            usage.input_tokens * price.input
            + usage.cache_creation_input_tokens * price.cache_write_5m
            + usage.cache_read_input_tokens * price.cache_read
            + usage.output_tokens * price.output
        ) / self.per_tokens

    def spend(self, requests: Iterable[tuple[str, Usage | None]]) -> Spend:
        total, count, priced = 0.0, 0, 0
        unpriced: dict[str, None] = {}  # (ordered, unique)
        for model, usage in requests:
            count += 1
            if self.price(model) is None:
                unpriced[model] = None
                continue
            total += self.cost(model, usage) or 0.0 if usage else 0.0  # (no reply: no usage)
            priced += 1
        return Spend(total, self.currency, count, priced, tuple(unpriced))


def format_money(amount: float, currency: str = "USD") -> str:
    """$0.0042 for small amounts (a turn), $12.34 for larger ones."""
    sign = "$" if currency == "USD" else f"{currency} "
    if amount and abs(amount) < 1:
        return f"{sign}{amount:.4f}"
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
        values = [entry.get(f) if isinstance(entry, dict) else None for f in _FIELDS]
        if all(isinstance(v, int | float) and math.isfinite(v) and v >= 0 for v in values):
            out[str(name)] = Price(*(float(v) for v in values))  # type: ignore[arg-type]
        else:
            problems.append(f"{name}: needs {', '.join(_FIELDS)} as non-negative numbers")
    return out
