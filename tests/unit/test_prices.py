"""Cost: the API's usage times the dated price table, never a guess."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop_app.config.prices import PriceTable, Spend, format_money
from desktop_app.core.messages import Usage


def test_a_scripted_usage_sequence_costs_what_the_table_says_by_hand(tmp_path: Path) -> None:
    table = PriceTable.load(tmp_path)  # no user file: the bundled table
    usage = Usage(
        input_tokens=1_000,
        output_tokens=500,
        cache_creation_input_tokens=2_000,
        cache_read_input_tokens=30_000,
    )
    # Sonnet 4.5: $3 in, $15 out, $3.75 cache write (5 min), $0.30 cache read, per million.
    by_hand = (1_000 * 3 + 500 * 15 + 2_000 * 3.75 + 30_000 * 0.30) / 1_000_000
    assert table.cost("claude-sonnet-4-5-20250929", usage) == pytest.approx(by_hand)
    assert table.cost("claude-sonnet-4-5", usage) == pytest.approx(0.027)
    assert table.cost("some-local-model", usage) is None  # tokens only: never a guess
    # (a chat's spend sums the ledger: tests/unit/test_usage_report.py; here, its words)
    spend = Spend(0.027 + (10_000 * 1 + 1_000 * 5) / 1_000_000, "USD", 3, 2, ("x",))
    assert spend.text() == (
        "$0.0420 over 2 of 3 request(s) (no price for x — add one in Settings → Prices, or "
        "`contextdesk prices set x input=… output=…`)"
    )


def test_the_users_prices_win_and_a_broken_file_is_said_not_used(tmp_path: Path) -> None:
    (tmp_path / "prices.json").write_text(
        json.dumps(
            {
                "updated": "2026-11-30",
                "models": {
                    "my-model": {
                        "input": 1,
                        "output": 2,
                        "cache_write_5m": 1,
                        "cache_write_1h": 1,
                        "cache_read": 0,
                    },
                    "claude-haiku-4-5": {"input": "free"},
                },
            }
        )
    )
    table = PriceTable.load(tmp_path)
    assert table.updated == "2026-11-30"
    assert table.cost("my-model", Usage(1_000_000, 1_000_000)) == 3.0
    assert table.price("claude-haiku-4-5") is not None  # the bad entry left the bundled one
    assert "claude-haiku-4-5: needs input" in table.problems[0]
    (tmp_path / "prices.json").write_text("{not json")
    broken = PriceTable.load(tmp_path)
    assert "was not used" in broken.problems[0]
    assert broken.price("claude-opus-4-5") is not None


def test_money_is_written_for_its_size() -> None:
    assert format_money(0.004213) == "$0.0042"
    assert format_money(12.3456) == "$12.35"
    assert format_money(0) == "$0.00"


def test_a_users_table_in_other_units_is_not_mixed_in(tmp_path: Path) -> None:
    (tmp_path / "prices.json").write_text(
        json.dumps({"per_tokens": 1000, "models": {"claude-haiku-4-5": {"input": 0.001}}})
    )
    table = PriceTable.load(tmp_path)
    assert "per 1,000,000 tokens" in table.problems[0]
    assert table.cost("claude-haiku-4-5", Usage(1_000_000)) == 1.0  # the bundled price


def test_every_current_model_has_a_dated_sourced_price(tmp_path: Path) -> None:
    from desktop_app.api.models import BUILTIN_MODELS

    table = PriceTable.load(tmp_path)
    assert table.updated >= "2026-12-01"
    missing = [m.id for m in BUILTIN_MODELS if table.price(m.id) is None]
    assert missing == []
    sonnet = table.price("claude-sonnet-5-5")
    assert sonnet is not None
    assert (sonnet.input, sonnet.output, sonnet.cache_read) == (2, 10, 0.1)


def test_long_prompts_and_hour_long_cache_writes_are_priced_at_their_rates(
    tmp_path: Path,
) -> None:
    table = PriceTable.load(tmp_path)
    short = Usage(input_tokens=90_000, output_tokens=1_000)
    long = Usage(input_tokens=150_000, output_tokens=1_000)
    # Haiku 5.5: $0.10 / $0.50 up to 100,000 prompt tokens, $0.50 / $2.50 above.
    assert table.cost("claude-haiku-5-5", short) == pytest.approx(
        (90_000 * 0.1 + 1_000 * 0.5) / 1e6
    )
    assert table.cost("claude-haiku-5-5", long) == pytest.approx(
        (150_000 * 0.5 + 1_000 * 2.5) / 1e6
    )
    hour = Usage(cache_creation_input_tokens=10_000, cache_write_1h_tokens=4_000)
    # Opus 5.5: 6,000 at the 5-minute rate ($5), 4,000 at the hour's ($8).
    assert table.cost("claude-opus-5-5", hour) == pytest.approx((6_000 * 5 + 4_000 * 8) / 1e6)


@pytest.mark.parametrize("bad", [True, 1e308, -1, "3", float("nan")])
def test_a_price_that_is_not_a_plain_number_is_refused(tmp_path: Path, bad: object) -> None:
    entry = {"input": bad, "output": 1, "cache_write_5m": 1, "cache_write_1h": 1, "cache_read": 1}
    (tmp_path / "prices.json").write_text(json.dumps({"models": {"m": entry}}, allow_nan=True))
    table = PriceTable.load(tmp_path)
    assert table.price("m") is None
    assert table.problems
    assert "m: needs" in table.problems[0]
