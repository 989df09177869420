"""Budgets that hold: the most a calendar month, a chat and a project may cost.

Spend is the ledger's: every request sent — a turn's, compaction's, a retry's — at the
API's reported usage × the price table. A month's budget is soft (a warning from 80 %)
or hard, as Settings say; a chat's and a project's caps are hard. A hard cap refuses a
send whose input alone would take the spend past it (the reply's tokens are not known
before it comes): the refusal names the cap, what is spent and what the send adds, and
the user may send anyway, once (`over_budget=True`; the command line's --over-budget).
The next request's input is the planned estimate priced as the prompt cache stands
(chats/costs.py): an estimate, and said to be one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from desktop_app.config.prices import format_amount, format_money
from desktop_app.core.errors import ContextDeskError, ErrorKind

if TYPE_CHECKING:
    from collections.abc import Sequence

    from desktop_app.chats.chat_core import ChatCore
    from desktop_app.chats.host import ChatHost

WARN_AT = 0.8  # of a cap: said from here on


@dataclass(frozen=True, slots=True)
class Budget:
    """One cap and what is spent against it, in the price table's `currency`. `unpriced`:
    requests to models without a price, counted but not in `spent`."""

    name: str  # "this month", "this chat", "project Refunds"
    how_set: str  # where the cap is changed: in the window, and on the command line
    cap: float
    spent: float
    hard: bool
    currency: str
    unpriced: int = 0

    @property
    def share(self) -> float:
        return self.spent / self.cap if self.cap else 0.0

    @property
    def warned(self) -> bool:
        return self.share >= WARN_AT

    def crossed_by(self, cost: float) -> bool:
        """Would a request costing `cost` take the spend past the cap?"""
        return self.spent + cost > self.cap

    def text(self) -> str:
        """The budget in a line: "this chat: $0.0420 of $0.05 (84%, hard cap)"."""
        kind = "hard cap" if self.hard else "soft: a warning"
        return (
            f"{self.name}: {format_money(self.spent, self.currency)} of "
            f"{format_amount(self.cap, self.currency)} ({self.share:.0%}, {kind})"
        )


def over_budget(crossed: list[Budget], cost: float, currency: str) -> ContextDeskError:
    """The refusal of a send that would cross `crossed` (its kind OVER_BUDGET: the window
    asks whether to go over once; the command line exits 1 and says how)."""
    first = crossed[0]
    adds = format_money(cost, currency)
    after = format_money(first.spent + cost, currency)
    return ContextDeskError(
        "Over budget",
        f"This send would take {first.text()} to ≈{after}: its input alone is ≈{adds} "
        f"(an estimate; the reply adds its own). Send it anyway to go over this once "
        f"(on the command line: --over-budget), or raise the cap ({first.how_set}).",
        kind=ErrorKind.OVER_BUDGET,
    )


def month_start(now: float) -> float:
    """Midnight, local time, on the first of `now`'s month."""
    day = time.localtime(now)
    return time.mktime((day.tm_year, day.tm_mon, 1, 0, 0, 0, 0, 0, -1))


def budgets(core: ChatCore) -> list[Budget]:
    """Every cap set for this chat's sends: the month's, the chat's, its project's."""
    from desktop_app.storage import projects

    host = core.host
    out = _monthly(host)
    if core.settings.spend_cap:
        out.append(_chat(host, core.id, core.settings.spend_cap))
    found = projects.chat_project_cap(host.store.db, core.id)
    if found is not None:
        out += _project(host, *found)
    return out


def all_budgets(host: ChatHost) -> list[Budget]:
    """Every cap set anywhere: the month's, each chat's, each project's."""
    from desktop_app.storage import projects

    out = _monthly(host)
    for info in host.store.list_chats():
        if info.settings.spend_cap:
            out.append(_chat(host, info.id, info.settings.spend_cap, info.title))
    for project in projects.all_projects(host.store.db):
        out += _project(host, project.id, project.name, project.spend_cap)
    return out


def _budget(
    host: ChatHost,
    name: str,
    how: str,
    cap: float,
    hard: bool,
    *,
    since: float | None = None,
    chat_ids: Sequence[str] | None = None,
) -> Budget:
    """A cap and what the requests it counts — since a time, of some chats — cost."""
    from desktop_app.chats.usage import spend

    spent = spend(host, since=since, chat_ids=chat_ids)
    unpriced = spent.requests - spent.priced
    return Budget(name, how, cap, spent.cost, hard, spent.currency, unpriced)


def _monthly(host: ChatHost) -> list[Budget]:
    settings = host.settings
    if not settings.monthly_spend_cap:
        return []
    since = month_start(host.clock())
    hard = settings.monthly_cap == "hard"
    how = "Settings → Monthly budget; `contextdesk settings monthly_spend_cap=…`"
    return [_budget(host, "this month", how, settings.monthly_spend_cap, hard, since=since)]


def _chat(host: ChatHost, chat_id: str, cap: float, title: str = "") -> Budget:
    name = f"chat {title}" if title else "this chat"
    how = f"the context panel's Budget; `contextdesk chat set {chat_id} spend_cap=…`"
    return _budget(host, name, how, cap, True, chat_ids=[chat_id])


def _project(host: ChatHost, project_id: str, name: str, cap: float) -> list[Budget]:
    from desktop_app.storage import projects

    if not cap:
        return []
    chats = projects.chats_of(host.store.db, project_id)
    how = f"the project's Spending cap; `contextdesk project set {name} spend_cap=…`"
    return [_budget(host, f"project {name}", how, cap, True, chat_ids=chats)]


def any_hard_cap(core: ChatCore) -> bool:
    """Is a hard cap set for this chat's sends? (Cheap: nothing is summed.)"""
    from desktop_app.storage import projects

    settings = core.host.settings
    if core.settings.spend_cap or (settings.monthly_spend_cap and settings.monthly_cap == "hard"):
        return True
    db = core.host.store.db
    found = projects.chat_project_cap(db, core.id)
    return bool(found and found[2])


def check_send(core: ChatCore, cost: float | None) -> None:
    """Refuse (kind OVER_BUDGET) a send whose input, costing `cost`, would cross a hard cap —
    or any send once a hard cap is reached. A model without a price crosses nothing
    (its cost is not known: it is never guessed)."""
    hard = [b for b in budgets(core) if b.hard]
    if not hard:
        return
    currency = hard[0].currency
    if cost is None:
        crossed = [b for b in hard if b.spent >= b.cap]
        cost = 0.0
    else:
        crossed = [b for b in hard if b.crossed_by(cost)]
    if crossed:
        raise over_budget(crossed, cost, currency)
