"""The prompt cache, live, on a stand-in server that keeps one as the API does: a chat
knows whether its prefix is warm (and for how long) or cold, and what the next turn's
input costs now and once cold — and the ledger's own figures agree."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from desktop_app.api.simulator import SimulatorServer
from desktop_app.chats import Engine
from desktop_app.chats.chat import Chat
from tests.fakes.clock import Clock
from tests.fakes.tools import ScriptedApprover
from tests.integration.conftest import TEST_KEY

MODEL = "claude-sonnet-5-5"  # $2 input, $2.50 5-minute write, $4 1-hour, $0.10 read
SYSTEM = "You answer questions about the refund policy, precisely and briefly. " * 60


@pytest.fixture
def cached(sim: SimulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """An engine whose settings send cache markers to the simulator, both on one clock."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", sim.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    engine = Engine.open(tmp_path / "home")
    engine.change_settings({"prompt_cache": "on"})
    clock = Clock()
    engine.clock = clock
    sim.state.clock = clock
    yield engine, clock
    engine.close()


def new_chat(engine: Engine, **settings: str) -> Chat:
    chat = engine.new_chat(model=MODEL)
    chat.setup.change({"system": SYSTEM, **settings})
    return chat


def test_warm_after_a_turn_cold_at_its_ttl_and_the_next_turn_priced_both_ways(
    cached: Any, sim: SimulatorServer
) -> None:
    engine, clock = cached
    chat = new_chat(engine)
    assert chat.costs.cache_outlook(chat.plans.plan()).cache.state == "none"
    chat.turns.send("What is the refund window?", ScriptedApprover())
    clock.now += 30
    chat.turns.send("And for opened items?", ScriptedApprover())
    second = chat.costs.sent_requests()[-1]
    assert second.usage is not None
    assert second.usage.cache_read_input_tokens > 0  # the first turn's prefix, read back
    plan = chat.plans.plan()
    outlook = chat.costs.cache_outlook(plan)
    held = second.usage.cache_read_input_tokens + second.usage.cache_creation_input_tokens
    assert outlook.cache.state == "warm"
    assert outlook.cache.tokens == held
    assert outlook.cache.seconds_left(clock.now) == pytest.approx(300.0)
    n = outlook.input_tokens
    assert outlook.now is not None
    assert outlook.cold is not None
    assert outlook.now == pytest.approx((min(held, n) * 0.10 + (n - min(held, n)) * 2.50) / 1e6)
    assert outlook.cold == pytest.approx(n * 2.50 / 1e6)
    assert outlook.now < outlook.cold

    clock.now += 299
    assert chat.costs.cache_outlook(plan).cache.state == "warm"
    clock.now += 2  # five minutes from the last request's start
    cold = chat.costs.cache_outlook(plan)
    assert cold.cache.state == "cold"
    assert cold.now == pytest.approx(cold.cold)
    chat.turns.send("Thanks.", ScriptedApprover())  # and the server agrees: nothing read
    last = chat.costs.sent_requests()[-1].usage
    assert last is not None
    assert last.cache_read_input_tokens == 0
    assert last.cache_creation_input_tokens > 0


def test_a_chat_on_the_one_hour_cache_sends_it_and_stays_warm_for_an_hour(
    cached: Any, sim: SimulatorServer
) -> None:
    engine, clock = cached
    chat = new_chat(engine, cache_ttl="1h")
    chat.turns.send("What is the refund window?", ScriptedApprover())
    body = sim.message_requests()[-1].body
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert body["messages"][-1]["content"][-1]["cache_control"] == {
        "type": "ephemeral",
        "ttl": "1h",
    }
    usage = chat.costs.sent_requests()[-1].usage
    assert usage is not None
    assert usage.cache_write_1h_tokens == usage.cache_creation_input_tokens > 0
    clock.now += 3_000
    outlook = chat.costs.cache_outlook(chat.plans.plan())
    assert outlook.cache.state == "warm"
    assert outlook.cache.ttl == "1h"
    assert outlook.cold == pytest.approx(outlook.input_tokens * 4.0 / 1e6)


def test_context_json_carries_the_cache_on_real_time(
    sim: SimulatorServer, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli("settings", "prompt_cache=on")
    chat = cli("chat", "new", "--model", MODEL).strip()
    cli("chat", "set", chat, f"system={SYSTEM}")
    before = time.time()
    cli("send", chat, "What is the refund window?")
    cache = json.loads(cli("context", chat, "--json"))["cache"]
    assert cache["state"] == "warm"
    assert cache["ttl"] == "5m"
    assert before <= cache["expires_at"] - 300 <= time.time()
    assert 0 < cache["seconds_left"] <= 300
    assert cache["next_turn_now"] < cache["next_turn_cold"]
    assert cache["estimated"] is True
    assert cache["prices_of"]
    shown = cli("context", chat)
    assert "Prompt cache warm for 4:" in shown
