"""Pinned facts, the context state, tool-result trimming and the fidelity check."""

from __future__ import annotations

import json

from desktop_app.context.facts import FACTS_HEADING, Fact, FactSource, facts_block
from desktop_app.context.fidelity import hard_facts, missing_facts
from desktop_app.context.state import ContextState, Summary
from desktop_app.context.trimming import TrimPolicy, keep_fields, trim_text


def test_facts_render_verbatim_under_a_heading_in_order() -> None:
    facts = [
        Fact("Order #88213: refund of 847.20 USD, due 2026-04-13", (("customer_id", "C-20931"),)),
        Fact("Customer wants it before Friday\nand by bank transfer", source=FactSource.MODEL),
        Fact("not yet accepted", pending=True),
    ]
    block = facts_block(facts)
    assert block.startswith(FACTS_HEADING)
    assert "- Order #88213: refund of 847.20 USD, due 2026-04-13\n  - customer_id: C-20931" in block
    assert "Customer wants it before Friday\nand by bank transfer" in block
    assert block.index("#88213") < block.index("Friday")
    assert "not yet accepted" not in block
    assert facts_block([]) == ""


def test_fact_order_editing_and_removal() -> None:
    a, b, c = Fact("a"), Fact("b"), Fact("c")
    state = ContextState().pin(a).pin(b).pin(c)
    assert [f.text for f in state.move_fact(c.id, 0).facts] == ["c", "a", "b"]
    edited = state.update_fact(b.edited("B!"))
    assert [f.text for f in edited.facts] == ["a", "B!", "c"]
    assert edited.facts[1].id == b.id
    assert [f.text for f in state.unpin(a.id).facts] == ["b", "c"]


def test_the_circuit_breaker_opens_after_three_failures_and_keeps_the_reason() -> None:
    state = ContextState()
    for n in range(1, 3):
        state = state.compaction_failed(f"timeout {n}")
        assert not state.breaker.paused
    state = state.compaction_failed("overloaded")
    assert state.breaker.paused
    assert state.breaker.failures == 3
    assert "paused after 3 failures" in state.breaker.reason
    assert "overloaded" in state.breaker.reason
    assert not state.resume_auto_compaction().breaker.paused


def test_a_success_closes_the_breaker() -> None:
    state = ContextState().compaction_failed("x").compaction_failed("y")
    state = state.with_summary(Summary(1, ("m1",), "sum", "model"))
    assert state.breaker.failures == 0


def test_summaries_undo_restores_the_one_replaced() -> None:
    first = Summary(1, ("m1",), "one", "model")
    second = Summary(2, ("m1", "m2"), "two", "model", replaces=first.id)
    state = ContextState().with_summary(first).with_summary(second)
    assert state.active_summary == second
    assert state.undo_summary().active_summary == first
    assert state.undo_summary().undo_summary().active_summary is None
    edited = state.edit_summary(second.id, "two, edited")
    assert edited.active_summary is not None
    assert edited.active_summary.text == "two, edited"
    assert edited.active_summary.edited


ORDER = {f"internal_field_{i}": "x" * 20 for i in range(40)} | {
    "order_id": "#88213",
    "status": "delivered",
    "total": 847.20,
    "purchase_date": "2026-03-14",
    "return_eligible_until": "2026-04-13",
}
KEEP = ("order_id", "status", "total", "purchase_date", "return_eligible_until")


def test_field_allowlist_keeps_five_of_forty_five_fields() -> None:
    kept = json.loads(keep_fields(json.dumps(ORDER), KEEP) or "{}")
    assert list(kept) == list(KEEP)
    assert kept["total"] == 847.20
    rows = json.loads(keep_fields(json.dumps([ORDER, ORDER]), KEEP) or "[]")
    assert [len(r) for r in rows] == [5, 5]
    assert keep_fields("not json", KEEP) is None


def test_long_results_keep_head_and_tail_with_a_marker() -> None:
    text = " ".join(f"w{i}" for i in range(20_000))
    trimmed = trim_text(text, TrimPolicy(cap_tokens=1000), lambda t: len(t.split()))
    assert trimmed.startswith("w0 w1 w2")
    assert trimmed.endswith("w19999")
    assert "tokens of this result were trimmed by ContextDesk" in trimmed
    assert len(trimmed.split()) < 1100


def test_short_results_are_left_alone() -> None:
    assert trim_text("small", TrimPolicy(cap_tokens=10), lambda t: 1) == "small"


def test_hard_facts_of_every_kind() -> None:
    text = (
        "Order #88213 for $847.20 placed 2026-03-14; refund by 2026-04-13. Ticket ISSUE-1, "
        "commit 3f2a9c1d in src/db/schema.sql, see https://shop.example.com/o/88213 or mail "
        'ann@example.com. Customer "Zhang Wei" ordered 4500 units, total 1,234.50.'
    )
    assert hard_facts(text) == [
        "#88213",
        "847.20",
        "2026-03-14",
        "2026-04-13",
        "ISSUE-1",
        "3f2a9c1d",
        "src/db/schema.sql",
        "https://shop.example.com/o/88213",
        "ann@example.com",
        "Zhang Wei",
        "4500",
        "1,234.50",
    ]


def test_missing_facts_counts_the_pinned_facts_as_kept() -> None:
    span = "Refund 847.20 for order #88213 by 2026-04-13, file at /srv/refunds/88213.json"
    summary = "A refund is pending for order #88213."
    assert missing_facts(span, summary) == ["847.20", "2026-04-13", "/srv/refunds/88213.json"]
    assert missing_facts(span, summary, ["- refund 847.20 due 2026-04-13"]) == [
        "/srv/refunds/88213.json"
    ]
