"""A deterministic encoder for context tests: one token per whitespace-separated word."""

from __future__ import annotations

from desktop_app.tokens.counter import TokenCounter
from desktop_app.tokens.encoding import TextEncoder

WORDS = TextEncoder("words", lambda text: len(text.split()), False)


def word_counter() -> TokenCounter:
    return TokenCounter(WORDS)
