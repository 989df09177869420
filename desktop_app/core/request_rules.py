"""The rules a request body must follow beyond its messages' shape: the settings it
carries (`max_tokens`, `thinking`, cache breakpoints, the model) and the message rules
those settings switch on.

`request_problems` checks a request we build; `body_problems` checks any JSON body — an
import, a file given to `contextdesk check`, what the simulator receives — so all three
apply the same rules with the same words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from desktop_app.core.errors import HistoryFormatError, Problem
from desktop_app.core.messages import Message
from desktop_app.core.protocol import validate
from desktop_app.core.wire import messages_from_api

MAX_CACHE_BREAKPOINTS = 4
MIN_THINKING_BUDGET = 1024
BUDGET_BELOW_MAX = (
    "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
    "documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
    "#max-tokens-and-context-window-size"
)
TOO_MANY_BREAKPOINTS = "A maximum of 4 blocks with cache_control may be provided. Found {found}."
# Mid-conversation `system` messages (the API accepts them) carry instructions and tool changes.
SYSTEM_MESSAGE_BLOCKS = frozenset(("text", "tool_addition", "tool_removal"))

# Claude models from the 4.6 generation on refuse an assistant prefill; older ones and
# other servers' models accept it.
_CLAUDE_VERSION = re.compile(r"claude-(?:[a-z]+-)?(\d+)(?:[-.](\d{1,2}))?(?:$|[-@])")


def accepts_prefill(model: str) -> bool:
    """May a request for `model` end with an assistant message (a prefill)?"""
    match = _CLAUDE_VERSION.match(model)
    if match is None or model.startswith("claude-3"):
        return True
    major, minor = int(match.group(1)), int(match.group(2) or 0)
    return (major, minor) < (4, 6)


def thinking_mode(thinking: Any) -> bool | None:
    """True (enabled), False (absent or disabled), or None when the rules are not known
    (adaptive thinking decides per turn)."""
    if not isinstance(thinking, dict) or thinking.get("type") == "disabled":
        return False
    return True if thinking.get("type") == "enabled" else None


def request_problems(
    messages: Sequence[Message],
    *,
    model: str,
    max_tokens: int,
    thinking_budget: int | None,
    cache_breakpoints: int,
) -> list[Problem]:
    """Every rule a request with these settings breaks."""
    out = validate(messages, thinking=bool(thinking_budget), prefill=accepts_prefill(model))
    out += _settings_problems(max_tokens, thinking_budget, cache_breakpoints)
    return out


def _settings_problems(
    max_tokens: int | None, thinking_budget: int | None, cache_breakpoints: int
) -> list[Problem]:
    out = []
    if max_tokens is not None and max_tokens < 1:
        out.append(Problem("max_tokens", "Input should be greater than or equal to 1"))
    if thinking_budget is not None:
        if thinking_budget < MIN_THINKING_BUDGET:
            out.append(
                Problem(
                    "thinking.enabled.budget_tokens",
                    f"Input should be greater than or equal to {MIN_THINKING_BUDGET}",
                )
            )
        if max_tokens is not None and max_tokens <= thinking_budget:
            out.append(Problem("max_tokens", BUDGET_BELOW_MAX))
    if cache_breakpoints > MAX_CACHE_BREAKPOINTS:
        out.append(Problem("messages", TOO_MANY_BREAKPOINTS.format(found=cache_breakpoints)))
    return out


def body_problems(body: Any, *, settings_known: bool = True) -> list[Problem]:
    """Every rule a Messages-API request body breaks (shape first: when the shape is wrong,
    the shape problems are what the API would answer). `settings_known=False`: only the
    `messages` of a request are at hand, so the rules that depend on its settings wait."""
    if not isinstance(body, dict):
        return [Problem("body", "Input should be a valid dictionary")]
    raw = body.get("messages")
    kept, origins = without_system_messages(raw) if isinstance(raw, list) else (raw, [])
    try:
        messages = messages_from_api(kept)
    except HistoryFormatError as exc:
        return [_at_origin(p, origins) for p in exc.problems]
    if not settings_known:
        return [_at_origin(p, origins) for p in validate(messages)]
    return [_at_origin(p, origins) for p in messages_problems(messages, body)]


def messages_problems(messages: Sequence[Message], body: dict[str, Any]) -> list[Problem]:
    """The rules `messages` (already read) break, sent with the settings in `body`."""
    model = body["model"] if isinstance(body.get("model"), str) else ""
    max_tokens = body["max_tokens"] if _is_int(body.get("max_tokens")) else None  # count_tokens
    thinking = body.get("thinking")
    enabled = thinking_mode(thinking)
    budget = thinking.get("budget_tokens") if enabled and isinstance(thinking, dict) else None
    out = validate(messages, thinking=enabled, prefill=accepts_prefill(model))
    out += _settings_problems(
        max_tokens, budget if _is_int(budget) else None, count_breakpoints(body)
    )
    return out


def without_system_messages(raw: list[Any]) -> tuple[list[Any], list[int]]:
    """The `messages` array without the mid-conversation `system` messages the API
    accepts, and each kept message's index in the original (for problem paths)."""
    kept: list[Any] = []
    origins: list[int] = []
    for i, item in enumerate(raw):
        if is_system_message(item):
            continue
        kept.append(item)
        origins.append(i)
    return kept, origins


def is_system_message(item: Any) -> bool:
    """A `system` message the API accepts inside `messages`: blocks of instructions and
    tool changes (`tool_addition`, `tool_removal`)."""
    if not isinstance(item, dict) or item.get("role") != "system":
        return False
    content = item.get("content")
    return isinstance(content, list) and all(
        isinstance(b, dict) and str(b.get("type")) in SYSTEM_MESSAGE_BLOCKS for b in content
    )


def count_breakpoints(body: dict[str, Any]) -> int:
    """Blocks with `cache_control` anywhere in the body: system, tools, messages (and the
    content of tool results). Plain loops: this runs over every block of a long history."""
    count = _marked(body.get("system")) + _marked(body.get("tools"))
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else ():
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        count += _marked(content)
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                count += _marked(block.get("content"))
    return count


def _marked(blocks: Any) -> int:
    if not isinstance(blocks, list):
        return 0
    return sum(1 for b in blocks if isinstance(b, dict) and "cache_control" in b)


_MESSAGE_PATH = re.compile(r"messages\.(\d+)")


def _at_origin(problem: Problem, origins: list[int]) -> Problem:
    """The problem with its message index as in the original array (system messages were
    set aside before checking)."""
    path = origin_path(problem.path, origins)
    return problem if path == problem.path else Problem(path, problem.message)


def origin_path(path: str, origins: list[int]) -> str:
    """`path` ("messages.N…") with N mapped back to the index in the array as it was given
    (`origins[N]`), when entries were set aside or added before checking."""
    if not origins or origins == list(range(len(origins))):
        return path
    match = _MESSAGE_PATH.match(path)
    if match is None or int(match.group(1)) >= len(origins):
        return path
    return f"messages.{origins[int(match.group(1))]}{path[match.end() :]}"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
