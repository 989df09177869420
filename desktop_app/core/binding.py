"""Thinking blocks are tied to the model and the conversation that wrote them.

The API checks each `thinking` / `redacted_thinking` block it is sent
(platform.claude.com, build-with-claude/preserved-thinking, read 2026-12-03):
- **model**: a block the request's model cannot read is dropped silently;
- **prefix**: on Fable 5.1/5.2, Opus 5.5, Sonnet 5.5 and Haiku 5.5, a block is refused
  (400, "bound to a different conversation") once anything before it — `system`, `tools`,
  an earlier message — differs from what was sent when it was written, and so is every
  later thinking block. What is *not* part of the prefix: `thinking`, `output_config`,
  `max_tokens`, `tool_choice`, `cache_control`; JSON key order and formatting.

So every reply is stamped with the model that wrote it and a digest of the prefix it
followed (`PrefixDigest`, over exactly what the request carried), and the projection
sends a thinking block only where both still hold (`sendable_thinking`). A block not
sent says why, in its state.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from desktop_app.core.blocks import JSONObject
from desktop_app.core.messages import Message
from desktop_app.core.model_facts import ModelFacts, reads_thinking_of


def _canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


class DigestCache:
    """Each message's digest, kept while the same message object is in use (a plan of an
    unchanged chat hashes only what is new)."""

    def __init__(self) -> None:
        self._digests: dict[int, tuple[Message, bytes]] = {}

    def of(self, message: Message) -> bytes:
        found = self._digests.get(id(message))
        if found is not None and found[0] is message:
            return found[1]
        digest = hashlib.sha256(_canonical(message.to_api())).digest()
        if len(self._digests) > 20_000:  # messages of chats no longer planned
            self._digests.clear()
        self._digests[id(message)] = (message, digest)  # (holding it keeps its id unique)
        return digest


SHARED = DigestCache()  # a request repeats the last one's messages: their digests are known


class PrefixDigest:
    """The digest of a request's prefix, message by message: `value` after `extend`
    covers `system`, `tools` and every message given so far."""

    def __init__(
        self,
        system: Iterable[str],
        tools: Iterable[JSONObject],
        cache: DigestCache | None = None,
    ) -> None:
        head = {"system": [t for t in system if t], "tools": list(tools)}
        self._value = hashlib.sha256(_canonical(head)).digest()
        self._cache = cache or SHARED

    @property
    def value(self) -> str:
        return self._value.hex()

    def extend(self, messages: Iterable[Message]) -> PrefixDigest:
        for message in messages:
            self._value = hashlib.sha256(self._value + self._cache.of(message)).digest()
        return self


def request_prefix(
    system: Iterable[str], tools: Iterable[JSONObject], messages: Sequence[Message]
) -> str:
    """The prefix a reply to a request with these parts follows: what it is stamped with."""
    return PrefixDigest(system, tools).extend(messages).value


@dataclass(frozen=True, slots=True)
class Unsent:
    """Why a thinking block is not sent."""

    reason: str  # "written by claude-opus-5-5", "the conversation before it changed", …


def sendable_thinking(message: Message, prefix: str, facts: ModelFacts) -> Unsent | None:
    """None when `message`'s thinking may be sent to the model `facts` describes, after
    the prefix `prefix` (the digest of what the request holds before it, as sent — so a
    block left out earlier changes it, and the later ones fail with it, as the API's own
    check does); else why not."""
    if message.model and not reads_thinking_of(facts, message.model):
        return Unsent(f"written by {message.model}, which {facts.id} cannot read")
    if not facts.prefix_binding:
        return None
    if not message.bound_to:
        return Unsent("its conversation cannot be checked (imported, or from before 2026-12)")
    if message.bound_to != prefix:
        return Unsent("the conversation before it changed (system, tools or an earlier message)")
    return None
