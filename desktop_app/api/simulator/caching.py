"""The simulator's prompt cache, kept as the API keeps one, so the usage it reports has
real cache reads and writes.

From platform.claude.com/docs/en/build-with-claude/prompt-caching (read 2026-12-03): a
`cache_control` marker caches the prefix up to its block — tools, then system, then
messages, per model; a request reads the longest prefix still cached, found at a marker
or up to 20 blocks before one; what lies between that and the last marker is written; an
entry lives its TTL ("5m", or "1h") from the start of the last request that wrote or read
it; a prefix shorter than the model's minimum is not cached. Tokens are the simulator's
own (about 4 bytes of JSON each), as everywhere in it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop_app.core.prompt_cache import TTL_SECONDS, min_cacheable

LOOKBACK = 20  # blocks before a marker where an earlier cached prefix is found


@dataclass(frozen=True, slots=True)
class CacheUsage:
    read: int
    written_5m: int
    written_1h: int

    @property
    def written(self) -> int:
        return self.written_5m + self.written_1h


class SimulatedCache:
    """`path`: a file the entries are kept in, so the offline demo's command line — a new
    simulator each run — finds what the last run cached, as the API would."""

    def __init__(self, clock: Callable[[], float], path: Path | None = None) -> None:
        self.clock = clock
        self.path = path
        self._expiry: dict[str, tuple[float, str]] = {}  # prefix hash → (expires, ttl)
        self._lock = threading.Lock()
        if path is not None:
            with contextlib.suppress(OSError, ValueError, TypeError):
                kept = json.loads(path.read_text(encoding="utf-8"))
                self._expiry = {k: (float(v[0]), str(v[1])) for k, v in kept.items()}

    def clear(self) -> None:
        with self._lock:
            self._expiry.clear()

    def _keep(self, now: float) -> None:
        """Write the live entries to `path` (the demo's; a failure only forgets them)."""
        if self.path is None:
            return
        live = {k: v for k, v in self._expiry.items() if v[0] > now}
        with contextlib.suppress(OSError):
            partial = self.path.with_suffix(".partial")
            partial.write_text(json.dumps(live), encoding="utf-8")
            partial.replace(self.path)

    def use(self, body: dict[str, Any]) -> CacheUsage:
        """Read what `body`'s markers find cached, write the rest up to its last marker."""
        blocks = _blocks(body)
        if not any(ttl for _, _, ttl in blocks):
            return CacheUsage(0, 0, 0)
        model = str(body.get("model", ""))
        running = hashlib.sha256(model.encode())
        hashes: list[str] = []
        totals: list[int] = []  # the prompt's tokens up to each block
        size = 0
        for text, counted, _ in blocks:
            running.update(text.encode())
            hashes.append(running.copy().hexdigest())
            size += counted
            totals.append(max(1, size // 4))
        marks = [i for i, (_, _, ttl) in enumerate(blocks) if ttl]
        now = self.clock()
        with self._lock:
            hit = -1
            for mark in marks:
                for i in range(mark, max(-1, mark - LOOKBACK - 1), -1):
                    found = self._expiry.get(hashes[i])
                    if found is not None and found[0] > now:
                        hit = max(hit, i)
                        break
            if hit >= 0:  # read: the entry lives its TTL from now
                ttl = self._expiry[hashes[hit]][1]
                self._expiry[hashes[hit]] = (now + TTL_SECONDS[ttl], ttl)
            read = totals[hit] if hit >= 0 else 0
            written = {"5m": 0, "1h": 0}
            start = read
            for mark in marks:
                ttl = str(blocks[mark][2])
                if mark <= hit or totals[mark] < min_cacheable(model):
                    continue
                self._expiry[hashes[mark]] = (now + TTL_SECONDS[ttl], ttl)
                written[ttl] += totals[mark] - start
                start = totals[mark]
            self._keep(now)
        return CacheUsage(read, written["5m"], written["1h"])


def _blocks(body: dict[str, Any]) -> list[tuple[str, int, str]]:
    """Each block of the prompt in cache order — (its JSON without the marker, the bytes
    it adds to the prompt as the simulator counts it (`server._estimate`: its JSON and
    the separator before it, a message's first block its message's braces and role too,
    a PDF by its pages), its marker's TTL or ""). A prefix's tokens are its bytes / 4:
    the whole prompt's, less what follows the last marker, is what a marker caches (the
    per-message JSON left out once made ~7 tokens a message look uncached)."""
    out: list[tuple[str, int, str]] = []

    def add(prefix: str, block: Any, wrapper: int = 0) -> None:
        ttl = ""
        if isinstance(block, dict) and isinstance(block.get("cache_control"), dict):
            ttl = "1h" if block["cache_control"].get("ttl") == "1h" else "5m"
            block = {k: v for k, v in block.items() if k != "cache_control"}
        text = prefix + json.dumps(block, sort_keys=True, ensure_ascii=False)
        out.append((text, wrapper + _bytes_counted(block) + len(", "), ttl))

    for tool in body.get("tools") or ():
        add("tool:", tool)
    system = body.get("system")
    for block in [system] if isinstance(system, str) else system or ():
        add("system:", block)
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        role = str(message.get("role")) if isinstance(message, dict) else ""
        wrapper = len(json.dumps({"role": role, "content": []}).encode())
        for block in [content] if isinstance(content, str) else content or ():
            add(role + ":", block, wrapper)
            wrapper = 0
    if isinstance(body.get("cache_control"), dict) and out:  # automatic: the last block
        text, counted, _ = out[-1]
        out[-1] = (text, counted, "1h" if body["cache_control"].get("ttl") == "1h" else "5m")
    return out


def _bytes_counted(block: Any) -> int:
    """A block's JSON bytes, as `server._estimate` counts them: a PDF document by its
    pages (4 bytes a token), not its base64."""
    if isinstance(block, dict) and block.get("type") == "document":
        source = block.get("source")
        if isinstance(source, dict) and "data" in source:
            from desktop_app.tokens.documents import document_tokens

            pages = document_tokens(block, lambda text: len(text.encode()) // 4) or 0
            bare = {**block, "source": {k: v for k, v in source.items() if k != "data"}}
            return len(json.dumps(bare, ensure_ascii=False).encode()) + 4 * pages
    return len(json.dumps(block, ensure_ascii=False).encode())
