"""The prompt cache as the API keeps it, and whether a chat's prefix is still in it.

Facts from platform.claude.com/docs/en/build-with-claude/prompt-caching (read
2026-12-03) and the SDK's `CacheControlEphemeralParam`: a marker's `ttl` is "5m" (the
default) or "1h"; an entry lives that long from the start of the last request that wrote
or read it (a read refreshes it at no charge); a prefix shorter than the model's minimum
is silently not cached. Nothing here knows money: prices are `config/prices.py`'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

TTLS = ("5m", "1h")
TTL_SECONDS = {"5m": 5 * 60, "1h": 60 * 60}

# The shortest prefix each model caches, in tokens (the prompt-caching page and the
# models' pages; docs/anthropic-api-2026.md, *Models*). Matched on the id without a
# date suffix; a model not listed is taken at the common 1,024.
_MIN_CACHEABLE = {
    "claude-opus-5-5": 512,
    "claude-sonnet-5-5": 512,
    "claude-haiku-5-5": 512,
    "claude-opus-5": 512,
    "claude-fable-5": 512,
    "claude-mythos-5": 512,
    "claude-fable-5-1": 512,
    "claude-mythos-5-1": 512,
    "claude-fable-5-2": 512,
    "claude-mythos-5-2": 512,
    "claude-opus-4-7": 2048,
    "claude-mythos-preview": 2048,
    "claude-opus-4-6": 4096,
    "claude-opus-4-5": 4096,
    "claude-haiku-4-5": 4096,
}
_DEFAULT_MIN = 1024
_DATE_SUFFIX = re.compile(r"-\d{8}$")


def min_cacheable(model: str) -> int:
    """The fewest prompt tokens the model caches: a shorter prefix is not cached."""
    return _MIN_CACHEABLE.get(_DATE_SUFFIX.sub("", model), _DEFAULT_MIN)


def ttl_marker(ttl: str) -> dict[str, str]:
    """The `cache_control` object for a breakpoint kept `ttl` ("5m" is the default and
    is left out, so the body stays as it always was)."""
    return {"type": "ephemeral"} if ttl == "5m" else {"type": "ephemeral", "ttl": ttl}


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """A chat's prefix as its last request left it in the cache: `tokens` read or written
    by a request that started at `started`, kept `ttl`."""

    started: float
    ttl: str
    tokens: int

    @property
    def expires_at(self) -> float:
        return self.started + TTL_SECONDS.get(self.ttl, TTL_SECONDS["5m"])


CacheWord = Literal["warm", "cold", "none", "off"]


@dataclass(frozen=True, slots=True)
class CacheState:
    """Whether the next request can read the chat's prefix from the cache: `warm` (until
    `expires_at`), `cold` (it expired), `none` (nothing of this chat was ever cached) or
    `off` (the server takes no cache markers)."""

    state: CacheWord
    ttl: str = "5m"
    tokens: int = 0  # what the cache holds of the prefix (0 unless warm or cold)
    expires_at: float | None = None

    def seconds_left(self, now: float) -> float:
        """How long the prefix stays warm (0 once cold)."""
        if self.state != "warm" or self.expires_at is None:
            return 0.0
        return max(0.0, self.expires_at - now)


def cache_state(entry: CacheEntry | None, now: float, *, caching: bool = True) -> CacheState:
    """The cache as it stands at `now` for a chat whose last request left `entry`."""
    if not caching:
        return CacheState("off")
    if entry is None or entry.tokens <= 0:
        return CacheState("none", entry.ttl if entry else "5m")
    word: CacheWord = "warm" if now < entry.expires_at else "cold"
    return CacheState(word, entry.ttl, entry.tokens, entry.expires_at)
