"""The hand-off's digest: decisions, hard facts and the user's questions, in their own
words, without asking a model."""

from __future__ import annotations

from desktop_app.context.digest import digest
from desktop_app.core.blocks import TextBlock
from desktop_app.core.messages import Message


def said(role: str, text: str) -> Message:
    return Message(role, (TextBlock(text),))  # type: ignore[arg-type]


def test_a_digest_keeps_facts_decisions_and_questions_in_their_words() -> None:
    text = digest(
        [
            said("user", "Can we refund order 88213? The customer is upset."),
            said("assistant", "Here is what I found:\n- Amount promised: 847.20 EUR\n- Nice day."),
            said("user", "Let's go with the refund. Thanks."),
        ]
    )
    assert text.splitlines() == [
        "Decisions and facts:",
        "- Claude: Amount promised: 847.20 EUR",  # (the list's own mark dropped)
        "- You: Let's go with the refund.",
        "",
        "Your latest questions:",
        "- Can we refund order 88213?",
    ]
    assert digest([said("user", "Hello there.")]) == ""  # nothing to keep
