"""What was spent, grouped: by day, model, chat or project — the usage view's figures and
`contextdesk spend --by …`. Read from the ledger (every request sent, compaction's and
retries' too) and priced by the price table: each kind of token — input, cache write,
cache read, output — at its own rate; requests to a model without a price are counted,
never priced."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from desktop_app.chats.host import ChatHost
    from desktop_app.config.prices import Price, PriceTable, Spend

GROUPINGS = ("day", "model", "chat", "project")
Money = tuple[float, float, float, float]  # a request's cost by kind, in KINDS' order
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
    searches: int = 0  # web searches the API ran, priced apiece (config/prices.py)
    search_money: float = 0.0

    @property
    def cost(self) -> float:
        return sum(self.money.values()) + self.search_money

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
            "cost_by_kind": {
                **{k: round(v, 6) for k, v in self.money.items()},
                "web_search": round(self.search_money, 6),
            },
            "web_searches": self.searches,
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
                "web_searches",
                f"web_search_{self.currency}",
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
                    row.searches,
                    f"{row.search_money:.6f}",
                    f"{row.cost:.6f}",
                ]
            )
        return out.getvalue()


def day_of(sent_at: float) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(sent_at))


def report(host: ChatHost, by: str, since: float | None = None) -> UsageReport:
    """The ledger's requests since `since` (all when None), grouped `by` one of
    GROUPINGS."""
    return reports(host, since)[by]


def reports(host: ChatHost, since: float | None = None) -> dict[str, UsageReport]:
    """The ledger's requests since `since` grouped every way (GROUPINGS), in one read of
    it: the usage view shows them all at once."""
    from desktop_app.storage import ledger

    db = host.store.db
    prices = host.prices()
    titles: dict[str, str] = {}
    project_of: dict[str, str] = {}
    names = {"": "No project"}
    for chat_id, title, project_id, name in db.execute(
        "SELECT c.id, c.title, c.project_id, p.name FROM chats c "
        "LEFT JOIN projects p ON p.id = c.project_id"
    ):
        titles[chat_id] = title
        project_of[chat_id] = project_id or ""
        if project_id:
            names[project_id] = name
    groups: dict[str, dict[str, _Sums]] = {by: {} for by in GROUPINGS}
    total = _Sums()
    found, tiers = priced_models(prices, ledger.models_used(db, since=since))

    def summed(by: str) -> Iterator[tuple[str, str, int, tuple[int, ...], Money | None, int]]:
        for key, model, above, count, *tokens, searches in ledger.usage_groups(
            db, by, since=since, tiers=tiers
        ):
            price = found[model]
            money = None
            if price is not None:
                money = price.parts(prices.per_tokens, *tokens, above=bool(above))
            yield key, model, count, (tokens[0], tokens[1], tokens[3], tokens[4]), money, searches

    def add(sums: _Sums, model: str, count: int, *rest: Any) -> None:
        sums.add(model, count, *rest, search_price=prices.search_price)

    # Summed twice by SQLite — by day and by chat (each with its models) —, the rest here.
    for day, model, count, *rest in summed("day"):
        for by, key in (("day", day), ("model", model)):
            add(groups[by].setdefault(key, _Sums()), model, count, *rest)
        add(total, model, count, *rest)
    for chat_id, model, count, *rest in summed("chat"):
        for by, key in (("chat", chat_id), ("project", project_of.get(chat_id, ""))):
            add(groups[by].setdefault(key, _Sums()), model, count, *rest)
    labels = {"day": {}, "model": {}, "chat": titles, "project": names}
    out = {}
    for by in GROUPINGS:
        rows = [s.row(k, labels[by].get(k, k)) for k, s in groups[by].items()]
        rows.sort(key=(lambda r: r.key) if by == "day" else (lambda r: -r.cost))
        out[by] = UsageReport(
            by, tuple(rows), total.row("total", ""), prices.currency, prices.updated, since
        )
    return out


def spend(
    host: ChatHost, *, since: float | None = None, chat_ids: Sequence[str] | None = None
) -> Spend:
    """What the requests cost — all, or some chats' — since `since`: summed by SQLite,
    priced by kind and tier here; a model without a price is counted, and named."""
    from desktop_app.config.prices import Spend
    from desktop_app.storage import ledger

    prices = host.prices()
    db = host.store.db
    found, tiers = priced_models(prices, ledger.models_used(db, since=since))
    cost, requests, priced = 0.0, 0, 0
    unpriced: dict[str, None] = {}  # (ordered, unique)
    for _chat, model, above, count, *tokens, searches in ledger.usage_groups(
        db, "chat", since=since, chat_ids=chat_ids, tiers=tiers
    ):
        requests += count
        cost += searches * prices.search_price  # (a search's price is not the model's)
        price = found.get(model)
        if price is None:
            unpriced[model] = None
            continue
        priced += count
        cost += sum(price.parts(prices.per_tokens, *tokens, above=bool(above)))
    return Spend(cost, prices.currency, requests, priced, tuple(unpriced))


def priced_models(
    prices: PriceTable, models: list[str]
) -> tuple[dict[str, Price | None], dict[str, int]]:
    """Each model's price (None: none), and the prompt length above which a model is
    billed at its higher tier, for the models that have one."""
    found = {model: prices.price(model) for model in models}
    tiers = {m: p.above[0] for m, p in found.items() if p is not None and p.above is not None}
    return found, tiers


class _Sums:
    __slots__ = ("by_model", "money", "requests", "search_money", "searches", "tokens", "unpriced")

    def __init__(self) -> None:
        self.requests = 0
        self.unpriced = 0
        self.searches = 0
        self.search_money = 0.0
        self.tokens = [0, 0, 0, 0]  # in KINDS' order
        self.money = [0.0, 0.0, 0.0, 0.0]
        self.by_model: dict[str, float] = {}

    def add(
        self,
        model: str,
        count: int,
        tokens: tuple[int, ...],  # input, cache write, cache read, output
        money: Money | None,
        searches: int = 0,
        *,
        search_price: float = 0.0,
    ) -> None:
        """`count` requests to `model`: their tokens and their money (None: no price)."""
        self.requests += count
        mine = self.tokens
        mine[0] += tokens[0]
        mine[1] += tokens[1]
        mine[2] += tokens[2]
        mine[3] += tokens[3]
        self.searches += searches
        self.search_money += searches * search_price  # (priced apiece, whatever the model)
        if money is None:
            self.unpriced += count
            return
        spent = self.money
        spent[0] += money[0]
        spent[1] += money[1]
        spent[2] += money[2]
        spent[3] += money[3]
        self.by_model[model] = self.by_model.get(model, 0.0) + sum(money) + searches * search_price

    def row(self, key: str, label: str) -> UsageRow:
        return UsageRow(
            key,
            label,
            self.requests,
            self.unpriced,
            dict(zip(KINDS, self.tokens, strict=True)),
            dict(zip(KINDS, self.money, strict=True)),
            self.by_model,
            self.searches,
            self.search_money,
        )
