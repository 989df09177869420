"""Costs are values (`config/prices`); `desktop_app.said` words them, once, for the window
and the terminal. One test per sentence shape: the exact text people read."""

from __future__ import annotations

from desktop_app import said
from desktop_app.config.prices import InputCostChange, ReplyCost, Spend


def test_a_priced_replys_request_is_said_with_its_tokens_and_money() -> None:
    cost = ReplyCost("claude-haiku-4-5", 1_234, 5_678, 90_123, 456, 0.01234, "USD")
    assert said.reply_cost(cost) == (
        "Its request: in 1,234 · cache write 5,678 · cache read 90,123 · out 456 tokens "
        "(exact) · $0.0123"
    )


def test_a_replys_request_without_a_price_is_said_in_tokens_only() -> None:
    cost = ReplyCost("contextdesk-demo", 278, 0, 0, 44, None, "USD")
    assert said.reply_cost(cost) == (
        "Its request: in 278 · cache write 0 · cache read 0 · out 44 tokens (exact) · "
        "no price for contextdesk-demo"
    )


def test_a_change_to_a_cached_request_is_said_with_what_it_writes_again() -> None:
    change = InputCostChange("USD", 0.00123, 0.00341, 2_703, prompt_caching=True)
    assert said.input_cost(change) == (
        "Next turn's input: ≈$0.0012 as it stands (read from the prompt cache) → ≈$0.0034 "
        "with the change (≈2,703 tokens written to the cache again)."
    )


def test_a_change_to_an_uncached_request_is_said_before_and_after() -> None:
    change = InputCostChange("USD", 0.0118, 0.00294, 0, prompt_caching=False)
    assert said.input_cost(change) == "Next turn's input: ≈$0.0118 → ≈$0.0029."
    # (an exact figure would drop the ≈; every one today is an estimate)
    exact = InputCostChange("EUR", 12.5, 3.0, 0, prompt_caching=False, estimated=False)
    assert said.input_cost(exact) == "Next turn's input: EUR 12.50 → EUR 3.00."


def test_a_chats_spend_reads_in_one_short_line_in_the_window() -> None:
    def spend(requests: int, priced: int, unpriced: tuple[str, ...] = ()) -> Spend:
        return Spend(0.1203, "USD", requests, priced, unpriced)

    assert said.spend_in_window(spend(0, 0)) == "nothing sent yet"
    assert said.spend_in_window(spend(1, 1)) == "$0.1203 over 1 request"
    assert said.spend_in_window(spend(2, 0, ("m-x",))) == (
        "2 requests, tokens only: no price for m-x (add one in Settings → Prices)"
    )
    assert said.spend_in_window(spend(3, 1, ("m-x",))) == (
        "$0.1203 over 1 of 3 requests; no price for m-x"
    )
