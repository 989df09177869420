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
from desktop_app.core.model_facts import EFFORTS, ModelFacts, facts_for
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

# The API's own words for the settings a model refuses (api/errors and
# build-with-claude/thinking-troubleshooting on platform.claude.com, read 2026-12-03).
USE_ADAPTIVE = (
    'Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'
)
NOT_FOR_MODEL = '"thinking.type.{kind}" is not supported for this model.'
ADAPTIVE_REFUSED = "adaptive thinking is not supported on this model"
DISABLED_ON_BETWEEN_TOOLS = (
    'To turn thinking off on this model, send "thinking": {"type": "between_tools"} instead of '
    '{"type": "disabled"}. The model does not think before responding. The short updates it '
    "writes between tool calls come back as thinking blocks."
)
EFFORT_WHEN_OFF = (
    "output_config.effort '{effort}' is not supported when thinking is disabled on this "
    "model. Use effort '{cap}' or below, or enable thinking."
)
NO_EFFORT = "This model does not support the effort parameter."
SAMPLING_REFUSED = "`{name}` is deprecated for this model."
SAMPLING_WITH_THINKING = "`{name}` is not supported when thinking is enabled."
FORCED_TOOL_CHOICE = 'tool_choice: type "tool" and "any" are not supported for this model.'
FORCED_WITH_THINKING = "Thinking may not be enabled when tool_choice forces tool use."
EXTRA_INPUT = "Extra inputs are not permitted"
MAX_OUTPUT = (
    "max_tokens: {asked} > {limit}, which is the maximum allowed number of output tokens "
    "for {model}"
)
SAMPLING_NAMES = ("temperature", "top_p", "top_k")


def accepts_prefill(model: str) -> bool:
    """May a request for `model` end with an assistant message (a prefill)?"""
    return facts_for(model).prefill


def thinking_mode(thinking: Any, facts: ModelFacts | None = None) -> bool | None:
    """True (a budget: thinking on), False (off), or None when the model decides per
    turn (adaptive, or left out where leaving it out means adaptive)."""
    if not isinstance(thinking, dict):
        return None if facts is not None and facts.omitted_thinks else False
    kind = thinking.get("type")
    if kind == "enabled":
        return True
    if kind == "disabled":
        return False
    return None


def request_problems(
    messages: Sequence[Message], settings: dict[str, Any], *, cache_breakpoints: int
) -> list[Problem]:
    """Every rule a request with these settings (`ChatRequest.settings()`) breaks."""
    facts = facts_for(str(settings.get("model", "")))
    thinks = thinking_mode(settings.get("thinking"), facts)
    out = validate(messages, thinking=thinks, prefill=facts.prefill and thinks is not True)
    out += settings_problems(settings, facts, cache_breakpoints)
    return out


def settings_problems(
    body: dict[str, Any], facts: ModelFacts, cache_breakpoints: int
) -> list[Problem]:
    """The rules a body's settings break for its model: `max_tokens`, `thinking`,
    `output_config.effort`, sampling parameters, `tool_choice`, cache breakpoints."""
    out: list[Problem] = []
    max_tokens = body["max_tokens"] if _is_int(body.get("max_tokens")) else None  # count_tokens
    if max_tokens is not None:
        if max_tokens < 1:
            out.append(Problem("max_tokens", "Input should be greater than or equal to 1"))
        elif facts.source != "guess" and max_tokens > facts.max_output:
            out.append(
                Problem(
                    "max_tokens",
                    MAX_OUTPUT.format(asked=max_tokens, limit=facts.max_output, model=facts.id),
                )
            )
    thinking = body.get("thinking")
    out += _thinking_problems(thinking, facts, max_tokens)
    out += _effort_problems(body.get("output_config"), thinking, facts)
    thinks = thinking_mode(thinking, facts)
    for name in SAMPLING_NAMES:
        if name in body and body[name] is not None:
            out += _sampling_problem(name, body[name], body, facts, thinks)
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        if not facts.forced_tool_choice:
            out.append(Problem("tool_choice", FORCED_TOOL_CHOICE))
        elif thinks is True:
            out.append(Problem("tool_choice", FORCED_WITH_THINKING))
    if cache_breakpoints > MAX_CACHE_BREAKPOINTS:
        out.append(Problem("messages", TOO_MANY_BREAKPOINTS.format(found=cache_breakpoints)))
    return out


def _thinking_problems(thinking: Any, facts: ModelFacts, max_tokens: int | None) -> list[Problem]:
    if thinking is None:
        return []
    if not isinstance(thinking, dict) or not isinstance(thinking.get("type"), str):
        return [Problem("thinking", "Input should be a valid dictionary")]
    kind = thinking["type"]
    known = facts.source != "guess" or bool(facts.thinking_types)
    if known and kind not in facts.thinking_types:
        return [Problem(f"thinking.type.{kind}", _refused_thinking(kind, facts))]
    extra = set(thinking) - _THINKING_FIELDS.get(kind, {"type"})
    if extra:
        return [Problem(f"thinking.{kind}.{sorted(extra)[0]}", EXTRA_INPUT)]
    if kind != "enabled":
        return []
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or isinstance(budget, bool):
        return [Problem("thinking.enabled.budget_tokens", "Field required")]
    if budget < MIN_THINKING_BUDGET:
        return [
            Problem(
                "thinking.enabled.budget_tokens",
                f"Input should be greater than or equal to {MIN_THINKING_BUDGET}",
            )
        ]
    if max_tokens is not None and max_tokens <= budget:
        return [Problem("max_tokens", BUDGET_BELOW_MAX)]
    return []


_THINKING_FIELDS = {
    "enabled": {"type", "budget_tokens", "display"},
    "adaptive": {"type", "display"},
    "disabled": {"type"},
    "between_tools": {"type"},
}


def _refused_thinking(kind: str, facts: ModelFacts) -> str:
    if kind == "disabled" and "between_tools" in facts.thinking_types:
        return DISABLED_ON_BETWEEN_TOOLS
    if kind == "adaptive":
        return ADAPTIVE_REFUSED
    if kind in ("enabled", "disabled") and "adaptive" in facts.thinking_types:
        return f"{NOT_FOR_MODEL.format(kind=kind)} {USE_ADAPTIVE}"
    return NOT_FOR_MODEL.format(kind=kind)


def _effort_problems(config: Any, thinking: Any, facts: ModelFacts) -> list[Problem]:
    if config is None:
        return []
    if not isinstance(config, dict):
        return [Problem("output_config", "Input should be a valid dictionary")]
    effort = config.get("effort")
    if effort is None:
        return []
    if effort not in EFFORTS:
        return [
            Problem(
                "output_config.effort",
                "Input should be 'low', 'medium', 'high', 'xhigh' or 'max'",
            )
        ]
    known = facts.source != "guess" or bool(facts.efforts)
    if known and not facts.efforts:
        return [Problem("output_config.effort", NO_EFFORT)]
    if known and effort not in facts.efforts:
        return [
            Problem("output_config.effort", f"effort '{effort}' is not supported by {facts.id}")
        ]
    off = isinstance(thinking, dict) and thinking.get("type") in ("disabled", "between_tools")
    cap = facts.off_effort_cap
    if off and cap and EFFORTS.index(effort) > EFFORTS.index(cap):
        return [Problem("output_config.effort", EFFORT_WHEN_OFF.format(effort=effort, cap=cap))]
    return []


def _sampling_problem(
    name: str, value: Any, body: dict[str, Any], facts: ModelFacts, thinks: bool | None
) -> list[Problem]:
    """Sampling parameters: refused outright on today's models (Haiku 5.5 takes only
    temperature 1 or top_p 0.99, never both); on older ones, temperature and top_k not
    with thinking, top_p only from 0.95 (thinking page, "Sampling parameters")."""
    if not facts.sampling:
        haiku_ok = facts.id.startswith("claude-haiku-5-5") and (
            (name == "temperature" and value == 1 and "top_p" not in body)
            or (name == "top_p" and value == 0.99 and "temperature" not in body)
        )
        return [] if haiku_ok else [Problem(name, SAMPLING_REFUSED.format(name=name))]
    thinking_on = thinks is not False and facts.can_think  # (adaptive may think: on)
    if thinking_on and (name in ("temperature", "top_k") or not 0.95 <= float(value) <= 1):
        return [Problem(name, SAMPLING_WITH_THINKING.format(name=name))]
    return []


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
    facts = facts_for(model)
    thinks = thinking_mode(body.get("thinking"), facts)
    out = validate(messages, thinking=thinks, prefill=facts.prefill and thinks is not True)
    out += settings_problems(body, facts, count_breakpoints(body))
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
