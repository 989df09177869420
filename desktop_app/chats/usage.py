"""What was spent, grouped: by day, model, chat or project — the usage view's figures and
`contextdesk spend --by …`. Read from the ledger (every request sent, compaction's and
retries' too) and priced by the price table: each kind of token — input, cache write,
cache read, output — at its own rate; requests to a model without a price are counted,
never priced."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from desktop_app.chats.host import ChatHost
    from desktop_app.config.prices import PriceTable
    from desktop_app.core.messages import Usage

GROUPINGS = ("day", "model", "chat", "project")
KINDS = ("input", "cache_write", "cache_read", "output")


@dataclass(frozen=True, slots=True)
class UsageRow:
    """One group's requests: tokens and money by kind (money only where priced)."""

    key: str  # the day (2026-12-03), the model's id, the chat's id, the project's id
    label: str  # as people read it: the chat's title, the project's name
    requests: int = 0
    unpriced: int = 0  # of them, to a model without a price
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    money: dict[str, float] = field(default_factory=lambda: dict.fromkeys(KINDS, 0.0))
    by_model: dict[str, float] = field(default_factory=dict)  # money, per model

    @property
    def cost(self) -> float:
        return sum(self.money.values())

    @property
    def cache_read_share(self) -> float:
        """Of the input side's tokens, the share read from the prompt cache."""
        read = self.tokens["cache_read"]
        side = read + self.tokens["input"] + self.tokens["cache_write"]
        return read / side if side else 0.0

    def to_json(self) -> dict[str, object]:
        return {
            "key": self.key,
            "label": self.label,
            "requests": self.requests,
            "unpriced_requests": self.unpriced,
            "tokens": dict(self.tokens),
            "cost": round(self.cost, 6),
            "cost_by_kind": {k: round(v, 6) for k, v in self.money.items()},
            "cache_read_share": round(self.cache_read_share, 4),
        }


@dataclass(frozen=True, slots=True)
class UsageReport:
    by: str
    rows: tuple[UsageRow, ...]  # days in order; the rest by cost, highest first
    total: UsageRow
    currency: str
    prices_of: str  # the price table's date
    since: float | None

    def to_json(self) -> dict[str, object]:
        return {
            "by": self.by,
            "since": self.since,
            "currency": self.currency,
            "prices_of": self.prices_of,
            "total": self.total.to_json(),
            "rows": [r.to_json() for r in self.rows],
        }

    def csv(self) -> str:
        """The rows as CSV (the usage view's Export): one line per group, tokens and money
        by kind."""
        import csv
        import io

        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(
            [
                self.by,
                "label",
                "requests",
                *(f"{k}_tokens" for k in KINDS),
                *(f"{k}_{self.currency}" for k in KINDS),
                f"total_{self.currency}",
            ]
        )
        for row in (*self.rows, replace(self.total, key="total", label="")):
            writer.writerow(
                [
                    row.key,
                    row.label,
                    row.requests,
                    *(row.tokens[k] for k in KINDS),
                    *(f"{row.money[k]:.6f}" for k in KINDS),
                    f"{row.cost:.6f}",
                ]
            )
        return out.getvalue()


def day_of(sent_at: float) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(sent_at))


def report(host: ChatHost, by: str, since: float | None = None) -> UsageReport:
    """The ledger's requests since `since` (all when None), grouped `by` one of
    GROUPINGS."""
    from desktop_app.storage import ledger

    if by not in GROUPINGS:
        raise ValueError(f"by must be one of {', '.join(GROUPINGS)}")
    db = host.store.db
    prices = host.prices()
    labels: dict[str, str] = {}
    projects: dict[str, str] = {}
    if by in ("chat", "project"):
        for chat_id, title, project_id, name in db.execute(
            "SELECT c.id, c.title, c.project_id, p.name FROM chats c "
            "LEFT JOIN projects p ON p.id = c.project_id"
        ):
            labels[chat_id] = title
            projects[chat_id] = project_id or ""
            if project_id:
                labels[project_id] = name
        labels[""] = "No project"
    groups: dict[str, _Sums] = {}
    total = _Sums()
    for sent_at, chat_id, model, usage in ledger.usage_detail(db, since=since):
        if by == "day":
            key = day_of(sent_at)
        elif by == "model":
            key = model
        else:
            key = chat_id if by == "chat" else projects.get(chat_id, "")
        parts = _parts(prices, model, usage)
        groups.setdefault(key, _Sums()).add(model, parts)
        total.add(model, parts)
    rows = [s.row(k, labels.get(k, k)) for k, s in groups.items()]
    rows.sort(key=(lambda r: r.key) if by == "day" else (lambda r: -r.cost))
    return UsageReport(
        by, tuple(rows), total.row("total", ""), prices.currency, prices.updated, since
    )


def _parts(
    prices: PriceTable, model: str, usage: Usage | None
) -> tuple[dict[str, int], dict[str, float] | None]:
    """One request's tokens by kind, and its money by kind (None: no price)."""
    if usage is None:
        return dict.fromkeys(KINDS, 0), prices.cost_parts(model, None)
    tokens = {
        "input": usage.input_tokens,
        "cache_write": usage.cache_creation_input_tokens,
        "cache_read": usage.cache_read_input_tokens,
        "output": usage.output_tokens,
    }
    return tokens, prices.cost_parts(model, usage)


class _Sums:
    __slots__ = ("by_model", "money", "requests", "tokens", "unpriced")

    def __init__(self) -> None:
        self.requests = 0
        self.unpriced = 0
        self.tokens = dict.fromkeys(KINDS, 0)
        self.money = dict.fromkeys(KINDS, 0.0)
        self.by_model: dict[str, float] = {}

    def add(self, model: str, parts: tuple[dict[str, int], dict[str, float] | None]) -> None:
        tokens, money = parts
        self.requests += 1
        _accumulate(self.tokens, tokens.items())
        if money is None:
            self.unpriced += 1
        else:
            _accumulate(self.money, money.items())
            self.by_model[model] = self.by_model.get(model, 0.0) + sum(money.values())

    def row(self, key: str, label: str) -> UsageRow:
        return UsageRow(
            key, label, self.requests, self.unpriced, self.tokens, self.money, self.by_model
        )


def _accumulate(into: dict, items: Iterable[tuple[str, float]]) -> None:  # type: ignore[type-arg]
    for kind, value in items:
        into[kind] += value
