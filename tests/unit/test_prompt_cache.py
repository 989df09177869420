"""The prompt cache as the simulator keeps it (the API's rules: markers, lookback, TTL
from the last read or write, the model's minimum) and what a chat makes of it: warm with
its time left, cold at the TTL, and the next turn's price now and once cold."""

from __future__ import annotations

from typing import Any

import pytest

from desktop_app.api.simulator.caching import SimulatedCache
from desktop_app.config.prices import PriceTable, next_input_costs
from desktop_app.core.prompt_cache import CacheEntry, cache_state, min_cacheable, ttl_marker
from desktop_app.said import cache_line, countdown
from desktop_app.said import cache_state as said_state
from tests.fakes.clock import Clock

SYSTEM = "You answer questions about the refund policy. " * 120  # ≈ 1,400 tokens


def body(turns: int, *, ttl: str = "5m", model: str = "claude-sonnet-5-5") -> dict[str, Any]:
    """A chat's request as ContextDesk sends it: the system prompt and the last message
    each carry a marker."""
    messages: list[dict[str, Any]] = []
    for n in range(turns):
        messages.append({"role": "user", "content": [{"type": "text", "text": f"question {n}"}]})
        if n < turns - 1:
            reply = [{"type": "text", "text": f"answer {n} " * 40}]
            messages.append({"role": "assistant", "content": reply})
    messages[-1]["content"][-1]["cache_control"] = ttl_marker(ttl)
    system = [{"type": "text", "text": SYSTEM, "cache_control": ttl_marker(ttl)}]
    return {"model": model, "max_tokens": 100, "system": system, "messages": messages}


def test_each_turn_reads_what_the_last_one_wrote_until_the_ttl_runs_out() -> None:
    clock = Clock(1_000_000.0)
    cache = SimulatedCache(clock)
    first = cache.use(body(1))
    assert first.read == 0
    assert first.written > 1_000
    assert first.written_1h == 0
    clock.now += 60
    second = cache.use(body(2))  # its marker moved on: the old one is found looking back
    assert second.read == first.written
    assert second.written > 0
    clock.now += 299  # 299 s after the second request: still warm
    third = cache.use(body(3))
    assert third.read == second.read + second.written
    clock.now += 301  # past five minutes since the last read
    cold = cache.use(body(4))
    assert cold.read == 0
    assert cold.written > third.read + third.written  # the whole prefix, written again


def test_a_long_chat_s_prompt_is_cached_whole_up_to_its_last_marker() -> None:
    """The API caches the prompt up to a marker, its messages' structure too: what stays
    uncached is the same few tokens at 1 turn and at 500 (the simulator once left ~7
    tokens a message out of every cache entry: 7,379 "uncached" at 500 turns, 74,000 a
    turn in a 10,000-message demo chat)."""
    from desktop_app.api.simulator.server import _estimate

    uncached = []
    for turns in (1, 50, 500):
        request = body(turns)
        used = SimulatedCache(Clock(1_000_000.0)).use(request)
        uncached.append(_estimate(request) - used.read - used.written)
    assert uncached[0] == uncached[1] == uncached[2]
    assert 0 <= uncached[0] <= 40


def test_a_one_hour_marker_lives_an_hour_and_is_reported_as_such() -> None:
    clock = Clock(1_000_000.0)
    cache = SimulatedCache(clock)
    written = cache.use(body(1, ttl="1h"))
    assert written.written_1h == written.written > 0
    assert written.written_5m == 0
    clock.now += 59 * 60
    assert cache.use(body(2, ttl="1h")).read == written.written


def test_a_short_prefix_or_another_model_is_not_read() -> None:
    clock = Clock(1_000_000.0)
    cache = SimulatedCache(clock)
    short = {
        "model": "claude-opus-4-6",
        "max_tokens": 5,
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "hi", "cache_control": ttl_marker("5m")}],
            }
        ],
    }
    assert cache.use(short).written == 0  # below Opus 4.6's 4,096
    cache.use(body(1))
    assert cache.use(body(1, model="claude-opus-5-5")).read == 0
    assert min_cacheable("claude-sonnet-5-5-20261001") == 512


def test_warm_until_the_ttl_from_the_request_s_start_then_cold() -> None:
    entry = CacheEntry(started=100.0, ttl="5m", tokens=2_000)
    assert cache_state(entry, 399.0).state == "warm"
    assert cache_state(entry, 399.0).seconds_left(399.0) == pytest.approx(1.0)
    assert cache_state(entry, 400.0).state == "cold"
    assert cache_state(CacheEntry(100.0, "1h", 2_000), 3_699.0).state == "warm"
    assert cache_state(None, 0.0).state == "none"
    assert cache_state(entry, 0.0, caching=False).state == "off"


def test_the_next_turn_costs_reads_while_warm_and_writes_once_cold() -> None:
    price = PriceTable.load().price("claude-sonnet-5-5")
    assert price is not None  # $2 input, $2.50 5-minute write, $4 1-hour, $0.10 read
    warm = cache_state(CacheEntry(0.0, "5m", 10_000), 10.0)
    now, cold = next_input_costs(price, 1_000_000, 12_000, warm, cacheable=True)
    assert now == pytest.approx((10_000 * 0.10 + 2_000 * 2.50) / 1e6)
    assert cold == pytest.approx(12_000 * 2.50 / 1e6)
    hour = cache_state(CacheEntry(0.0, "1h", 10_000), 10.0)
    assert next_input_costs(price, 1_000_000, 12_000, hour, cacheable=True)[1] == pytest.approx(
        12_000 * 4.0 / 1e6
    )
    off = cache_state(None, 0.0, caching=False)
    plain = next_input_costs(price, 1_000_000, 12_000, off, cacheable=True)
    assert plain == pytest.approx((0.024, 0.024))  # no cache: input price, now or later


def test_the_words_say_the_time_left_and_both_prices() -> None:
    from desktop_app.config.prices import CacheOutlook

    warm = cache_state(CacheEntry(0.0, "5m", 10_000), 55.0)
    outlook = CacheOutlook(warm, 12_000, 0.006, 0.03, "USD", "2026-11-10")
    assert said_state(outlook, 55.0) == "Cache 4:05"
    assert cache_line(outlook, 55.0) == (
        "Prompt cache warm for 4:05 (10,000 tokens, 5-minute) · next turn's input "
        "≈$0.0060 now · ≈$0.0300 once cold"
    )
    assert countdown(3_600) == "1:00:00"
    counted = CacheOutlook(warm, 12_000, 0.006, 0.03, "USD", "2026-11-10", exact=True)
    assert cache_line(counted, 55.0).endswith("input $0.0060 now · $0.0300 once cold")
    unpriced = CacheOutlook(warm, 12_000, None, None, "USD", "2026-11-10")
    assert cache_line(unpriced, 55.0).endswith("no price for this model, so tokens only")
