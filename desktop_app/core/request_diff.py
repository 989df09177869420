"""Two request bodies side by side: what changed, and where the prompt cache breaks.

The API caches a request's prefix in the order tools → system → messages; a change at
any point means everything after it is written to the cache again. So the first changed
position in that order is what a user needs to know ("the cache breaks here").
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class RequestDiff:
    first_change: str | None  # "tools", "system", "messages.12", or None when the prefix holds
    why: str  # the first change, in words
    lines: tuple[str, ...]  # a unified diff of the two bodies as pretty JSON


def diff_bodies(
    before: dict[str, Any], after: dict[str, Any], names: tuple[str, str] = ("before", "after")
) -> RequestDiff:
    """What changed from `before` to `after`. Long histories share most messages, so
    only the messages between their common start and common end are compared line by
    line (two 5,000-message requests diff in milliseconds, not minutes)."""
    first, why = _first_change(before, after)
    old, new = before.get("messages") or [], after.get("messages") or []
    start = _shared(old, new)
    end = _shared(old[start:][::-1], new[start:][::-1])
    head_old = {k: v for k, v in before.items() if k != "messages"}
    head_new = {k: v for k, v in after.items() if k != "messages"}
    lines = list(
        difflib.unified_diff(
            _pretty(head_old).splitlines(), _pretty(head_new).splitlines(), *names, lineterm="", n=2
        )
    )
    middle_old, middle_new = old[start : len(old) - end], new[start : len(new) - end]
    if middle_old != middle_new:
        if not lines:
            lines += [f"--- {names[0]}", f"+++ {names[1]}"]
        lines.append(f"@@ messages from {start} ({start} before them unchanged, {end} after) @@")
        lines += list(
            difflib.unified_diff(
                _message_lines(middle_old), _message_lines(middle_new), lineterm="", n=2
            )
        )[2:]  # (its own ---/+++ lines: said above)
    return RequestDiff(first, why, tuple(lines))


def _shared(a: list[Any], b: list[Any]) -> int:
    """How many leading items `a` and `b` share, markers aside."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y and _plain(x) != _plain(y):
            break
        n += 1
    return n


def _first_change(before: dict[str, Any], after: dict[str, Any]) -> tuple[str | None, str]:
    if before.get("model") != after.get("model"):
        return "model", "nothing is read from the cache: the model changed (a cache is per model)"
    for key, what in (("tools", "the tools changed"), ("system", "the system prompt changed")):
        if _plain(before.get(key)) != _plain(after.get(key)):
            return key, f"the cache breaks at `{key}`: {what}"
    for key in ("thinking", "tool_choice"):  # these settings invalidate the messages' cache
        if _plain(before.get(key)) != _plain(after.get(key)):
            return "messages.0", f"the cache breaks at messages.0: `{key}` changed"
    old, new = before.get("messages") or [], after.get("messages") or []
    for i, (a, b) in enumerate(zip(old, new, strict=False)):
        if _plain(a) != _plain(b):
            return f"messages.{i}", f"the cache breaks at messages.{i}: {_what_changed(a, b)}"
    if len(new) < len(old):
        return f"messages.{len(new)}", "the later request has fewer messages"
    return None, "the earlier request is a prefix of the later one: the cache holds"


def _what_changed(a: Any, b: Any) -> str:
    text = json.dumps(b, ensure_ascii=False)
    if "[Summary #" in text and "written by ContextDesk" in text:  # request_notes.summary_text
        return "the summary changed"
    if isinstance(a, dict) and isinstance(b, dict) and a.get("role") != b.get("role"):
        return "a different message is there (earlier ones were left out or summarized)"
    return "that message changed"


def _plain(value: Any) -> Any:
    """The value without `cache_control` markers (they move every turn; they are not content)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _message_lines(messages: list[Any]) -> list[str]:
    """Each message as pretty JSON, one after another (no enclosing list to diff)."""
    return [line for m in messages for line in _pretty(m).splitlines()]


def _pretty(body: Any) -> str:
    return json.dumps(body, ensure_ascii=False, indent=2)
