"""Budgets that hold, from the terminal: a chat's hard cap refuses the send that would
cross it — with the amount, nothing stored, nothing sent — unless --over-budget; a
project's cap counts all its chats; a month's soft budget only warns."""

from __future__ import annotations

import json
from typing import Any

from desktop_app.api.simulator import SimulatorServer
from desktop_app.chats import Engine

MODEL = "claude-sonnet-5-5"
SYSTEM = "You answer questions about the refund policy, precisely and briefly. " * 60


def priced_chat(cli: Any, *pairs: str) -> str:
    """A chat on a model priced so one ~1,500-token request costs about $0.03."""
    cli("prices", "set", MODEL, "input=20", "output=100")
    chat = str(cli("chat", "new", "--model", MODEL)).strip()
    cli("chat", "set", chat, f"system={SYSTEM}", *pairs)
    return chat


def test_a_chat_s_hard_cap_refuses_the_send_that_would_cross_it(
    cli: Any, sim: SimulatorServer
) -> None:
    chat = priced_chat(cli, "spend_cap=0.05")
    cli("send", chat, "What is the refund window?")  # ≈ $0.035: under the cap
    sent = len(sim.message_requests())
    stored = len(json.loads(cli("chat", "show", chat, "--json"))["messages"])

    refusal = cli("send", chat, "And for opened items?", status=1)
    assert "Over budget" in refusal
    assert "this chat: $0.0" in refusal  # what is spent, of the cap
    assert "of $0.05" in refusal
    assert "its input alone is ≈$0.0" in refusal  # what the send adds
    # where the cap is raised, in the window's words and the command line's
    assert f"the context panel's Budget; `contextdesk chat set {chat} spend_cap=…`" in refusal
    assert len(sim.message_requests()) == sent  # nothing sent
    assert len(json.loads(cli("chat", "show", chat, "--json"))["messages"]) == stored

    cli("send", chat, "And for opened items?", "--over-budget")  # this once
    assert len(sim.message_requests()) == sent + 1
    spend = json.loads(cli("spend", "--json"))
    assert spend["amount"] > 0.05  # the cap was crossed, as asked


def test_a_project_s_cap_counts_every_chat_in_it(cli: Any, sim: SimulatorServer) -> None:
    first = priced_chat(cli)
    second = priced_chat(cli)
    cli("project", "new", "Refunds")
    cli("project", "set", "Refunds", "spend_cap=0.05")
    for chat in (first, second):
        cli("chat", "move", chat, "Refunds")
    cli("send", first, "What is the refund window?")
    sent = len(sim.message_requests())
    refusal = cli("send", second, "And for opened items?", status=1)
    assert "project Refunds: $0.0" in refusal
    assert len(sim.message_requests()) == sent


def test_a_soft_monthly_budget_warns_and_never_refuses(cli: Any, sim: SimulatorServer) -> None:
    chat = priced_chat(cli)
    cli("settings", "monthly_spend_cap=0.01", "monthly_cap=soft")
    cli("send", chat, "What is the refund window?")
    cli("send", chat, "And for opened items?")  # past the budget: sent all the same
    assert len(sim.message_requests()) == 2
    engine = Engine.open(cli.home)
    try:
        (month,) = engine.find(chat).costs.budgets()
        assert month.name == "this month"
        assert not month.hard
        assert month.warned
        assert month.spent > 0.01
    finally:
        engine.close()
