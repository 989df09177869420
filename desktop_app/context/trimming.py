"""Trimming a tool result before it enters the context.

A tool may declare the fields that matter (an order lookup needs 5 of its 45): JSON
results keep only those. Anything still over the token cap keeps its head and tail with a
marker between. The full original always stays in the transcript; only the view changes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

HEAD_SHARE, TAIL_SHARE = 0.6, 0.3  # of the cap; the rest is room for the marker


@dataclass(frozen=True, slots=True)
class TrimPolicy:
    fields: tuple[str, ...] = ()  # keep only these keys of a JSON object (or list of them)
    cap_tokens: int = 8000


def keep_fields(text: str, fields: tuple[str, ...]) -> str | None:
    """The JSON result with only `fields` kept, or None when it is not such JSON."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None

    def pick(obj: Any) -> Any:
        return {k: obj[k] for k in fields if k in obj} if isinstance(obj, dict) else obj

    if isinstance(data, dict):
        return json.dumps(pick(data), ensure_ascii=False)
    if isinstance(data, list) and all(isinstance(item, dict) for item in data):
        return json.dumps([pick(item) for item in data], ensure_ascii=False)
    return None


def head_and_tail(text: str, tokens: int, cap: int) -> str:
    """`text` cut to about `cap` tokens: its head and tail, and a marker saying how much
    went. Cut by characters in proportion, so no re-tokenising is needed."""
    per_token = len(text) / max(tokens, 1)
    head = text[: int(cap * HEAD_SHARE * per_token)]
    tail = text[len(text) - int(cap * TAIL_SHARE * per_token) :]
    omitted = tokens - int(cap * (HEAD_SHARE + TAIL_SHARE))
    marker = (
        f"\n\n[… about {omitted:,} tokens of this result were trimmed by ContextDesk to save "
        "context; the full result is kept in the chat …]\n\n"
    )
    return head + marker + tail


def trim_text(text: str, policy: TrimPolicy, count: Callable[[str], int]) -> str:
    """The text as it should enter the context (`text` itself when nothing is trimmed)."""
    if policy.fields:
        picked = keep_fields(text, policy.fields)
        if picked is not None:
            text = picked
    tokens = count(text)
    if tokens > policy.cap_tokens:
        return head_and_tail(text, tokens, policy.cap_tokens)
    return text
