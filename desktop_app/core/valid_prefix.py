"""Where checking a long history may go on from (`protocol.validate_from`)."""

from __future__ import annotations

from dataclasses import dataclass

from desktop_app.core.images import ImageFacts
from desktop_app.core.messages import Message


@dataclass(frozen=True, slots=True)
class ValidPrefix:
    """A history checked without a problem before its last turn: those messages, and the
    check's state where that turn starts. The same history a turn longer — or with
    another last turn (a draft, a stand-in) — is checked on from there
    (`validate_from`), not from its first of 100,000 messages."""

    messages: tuple[Message, ...]
    continued: bool  # the message after them carried the assistant's turn on
    expected: tuple[str, ...]  # the tool calls the turn there must answer
    seen_ids: frozenset[str]
    image_count: int
    wide_images: tuple[tuple[str, ImageFacts], ...]
    server_calls: bool
    documents: tuple[tuple[str, bool], ...]
