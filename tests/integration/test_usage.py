"""`contextdesk spend --by day|model|chat|project`: the usage view's figures from the
terminal — tokens and money by kind, per group — adding up to `spend`'s total."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from desktop_app.api.simulator import SimulatorServer

SYSTEM = "You answer questions about the refund policy, precisely and briefly. " * 60


def test_spend_by_each_grouping_adds_up_to_the_total(cli: Any, sim: SimulatorServer) -> None:
    cli("settings", "prompt_cache=on")
    cli("prices", "set", "claude-sonnet-5-5", "input=2", "output=10")
    first = str(cli("chat", "new", "--model", "claude-sonnet-5-5", "--title", "Refunds")).strip()
    second = str(cli("chat", "new", "--model", "claude-haiku-5-5", "--title", "Other")).strip()
    for chat in (first, second):
        cli("chat", "set", chat, f"system={SYSTEM}")
    cli("project", "new", "Shop")
    cli("chat", "move", first, "Shop")
    cli("send", first, "What is the refund window?")
    cli("send", first, "And for opened items?")
    cli("send", second, "Hello?")
    total = json.loads(cli("spend", "all", "--json"))

    by_day = json.loads(cli("spend", "all", "--by", "day", "--json"))
    (today,) = by_day["rows"]
    assert today["key"] == time.strftime("%Y-%m-%d")
    assert today["requests"] == 3
    assert by_day["total"]["cost"] == pytest.approx(total["amount"], abs=1e-6)
    kinds = today["cost_by_kind"]
    assert sum(kinds.values()) == pytest.approx(today["cost"], abs=1e-5)
    assert today["tokens"]["cache_read"] > 0  # the second turn read the first one's prefix
    assert 0 < today["cache_read_share"] < 1

    by_model = {
        r["key"]: r for r in json.loads(cli("spend", "all", "--by", "model", "--json"))["rows"]
    }
    assert by_model["claude-sonnet-5-5"]["requests"] == 2
    assert by_model["claude-haiku-5-5"]["requests"] == 1

    by_chat = json.loads(cli("spend", "all", "--by", "chat", "--json"))["rows"]
    assert by_chat[0]["label"] == "Refunds"  # the costlier first
    by_project = {
        r["label"]: r for r in json.loads(cli("spend", "--by", "project", "--json"))["rows"]
    }
    assert by_project["Shop"]["requests"] == 2
    assert by_project["No project"]["requests"] == 1
    shop = json.loads(cli("project", "show", "Shop", "--json"))  # what its shared prefix earns
    assert shop["cache_read_tokens"] == by_project["Shop"]["tokens"]["cache_read"] > 0

    table = cli("spend", "all", "--by", "chat")
    assert "Refunds" in table
    assert "total" in table
