"""The usage report sums the ledger in SQLite by day and chat: its money must be each
request's own, even where a model bills long prompts at a higher tier (Haiku 5.5 above
100,000 tokens), and a request to a model without a price is counted, never priced."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from desktop_app.chats import Engine
from desktop_app.core.messages import Usage
from desktop_app.core.wire import usage_from_api
from desktop_app.storage import ledger


def test_sums_by_sqlite_price_each_request_in_its_own_tier(tmp_path: Path) -> None:
    engine = Engine.open(tmp_path / "home")
    try:
        chat = engine.new_chat("Tiers").id
        usages = [
            ("claude-haiku-5-5", {"input_tokens": 120_000, "output_tokens": 900}),  # above
            ("claude-haiku-5-5", {"input_tokens": 2_000, "output_tokens": 300}),  # below
            (
                "claude-haiku-5-5",
                {
                    "input_tokens": 10,
                    "cache_read_input_tokens": 99_000,
                    "cache_creation_input_tokens": 5_000,
                    "cache_creation": {"ephemeral_1h_input_tokens": 5_000},
                    "output_tokens": 50,
                },
            ),  # above, by its reads and writes, a one-hour write
            ("a-model-without-a-price", {"input_tokens": 500, "output_tokens": 10}),
        ]
        db = engine.store.db
        first = ledger.record(db, chat, {"model": "x", "messages": []}, server="test")
        head = db.execute("SELECT head FROM requests WHERE id = ?", (first,)).fetchone()[0]
        db.execute("DELETE FROM requests")
        with db:
            for n, (model, usage) in enumerate(usages, 1):
                db.execute(
                    "INSERT INTO requests (chat_id, number, sent_at, model, server, head, shared, "
                    "added, marks, usage, status, purpose) VALUES (?, ?, ?, ?, 't', ?, 0, '[]', "
                    "'[]', ?, 'complete', 'chat')",
                    (chat, n, time.time(), model, head, json.dumps(usage)),
                )
        prices = engine.prices()
        read = [usage_from_api(usage) for _, usage in usages]
        assert all(isinstance(u, Usage) for u in read)
        expected = [prices.cost(m, u) for (m, _), u in zip(usages, read, strict=True) if u]
        assert expected[0] is not None
        assert expected[0] > 120_000 * 0.10 / 1e6  # billed at the higher tier
        report = engine.usage_reports()
        for by in ("day", "model", "chat", "project"):
            assert report[by].total.cost == pytest.approx(sum(e for e in expected if e))
            assert report[by].total.requests == 4
            assert report[by].total.unpriced == 1
        (row,) = [r for r in report["model"].rows if r.key == "claude-haiku-5-5"]
        assert row.tokens["cache_write"] == 5_000
        assert row.cost == pytest.approx(sum(e for e in expected[:3] if e))
        assert engine.spend().cost == pytest.approx(report["day"].total.cost)
    finally:
        engine.close()


def test_failed_requests_are_counted_and_a_model_without_a_price_is_named(tmp_path: Path) -> None:
    engine = Engine.open(tmp_path / "home")
    try:
        chat = engine.new_chat("Failures").id
        db = engine.store.db
        first = ledger.record(db, chat, {"model": "x", "messages": []}, server="test")
        head = db.execute("SELECT head FROM requests WHERE id = ?", (first,)).fetchone()[0]
        db.execute("DELETE FROM requests")
        with db:
            for n, model in enumerate(("my-local-model", "claude-haiku-4-5"), 1):
                db.execute(
                    "INSERT INTO requests (chat_id, number, sent_at, model, server, head, shared, "
                    "added, marks, usage, status, purpose) VALUES (?, ?, ?, ?, 't', ?, 0, '[]', "
                    "'[]', NULL, 'error', 'chat')",  # no reply: no usage
                    (chat, n, time.time(), model, head),
                )
        spend = engine.spend()
        assert (spend.requests, spend.priced, spend.unpriced_models) == (2, 1, ("my-local-model",))
        assert spend.cost == 0
    finally:
        engine.close()
