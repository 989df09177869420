"""A whole request body made into one the API accepts: its messages (shape, then rules)
and the settings it carries, every change reported.

`contextdesk check --fix` writes the result; import builds the chat from it, so the next
turn of an imported chat is the request its author would have sent, made valid.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from desktop_app.core.blocks import THINKING_TYPES
from desktop_app.core.errors import Problem
from desktop_app.core.lenient import normalise_messages
from desktop_app.core.messages import Message
from desktop_app.core.protocol import thinking_problems
from desktop_app.core.repair import Repair, repair
from desktop_app.core.request_rules import (
    MAX_CACHE_BREAKPOINTS,
    MIN_THINKING_BUDGET,
    TOO_MANY_BREAKPOINTS,
    count_breakpoints,
    messages_problems,
    origin_path,
    thinking_mode,
)
from desktop_app.core.wire import messages_from_api


@dataclass(frozen=True, slots=True)
class BodyRepair:
    body: dict[str, Any]  # the repaired body (messages as API JSON)
    messages: tuple[Message, ...]
    repairs: tuple[Repair, ...]
    remaining: tuple[Problem, ...]  # what no repair could fix (empty: the body is valid)
    tool_changes: tuple[dict[str, Any], ...] = ()  # tool_addition/removal from system messages


def repair_body(body: dict[str, Any]) -> BodyRepair:
    """Raises `HistoryFormatError` (with JSON paths) only for what cannot be read at all."""
    shaped = normalise_messages(body.get("messages"))
    messages = messages_from_api(shaped.messages)
    repairs = list(shaped.repairs)
    fixed = repair(messages)
    # Paths name the file as it was given, before shape repairs set messages aside.
    repairs += (replace(r, path=origin_path(r.path, shaped.origins)) for r in fixed.repairs)
    out = {k: v for k, v in body.items() if k != "messages"}
    if shaped.system:
        out["system"] = _with_system_text(out.get("system"), shaped.system)
    repaired_messages = _fit_thinking(out, tuple(fixed.messages), repairs)
    out["messages"] = [m.to_api() for m in repaired_messages]
    _fit_breakpoints(out, count_breakpoints(body), repairs)
    remaining = messages_problems(repaired_messages, out)
    return BodyRepair(
        out, repaired_messages, tuple(repairs), tuple(remaining), tuple(shaped.tool_changes)
    )


def _with_system_text(system: Any, texts: list[str]) -> Any:
    if isinstance(system, list):
        return [*system, *({"type": "text", "text": t} for t in texts)]
    joined = "\n\n".join([system, *texts] if isinstance(system, str) and system else texts)
    return joined


def _fit_thinking(
    body: dict[str, Any], messages: tuple[Message, ...], repairs: list[Repair]
) -> tuple[Message, ...]:
    """The thinking setting and the messages made to agree; returns the messages."""
    thinking = body.get("thinking")
    if thinking_mode(thinking) is False and messages and thinking_problems(messages, enabled=False):
        return _without_final_thinking(messages, repairs)
    if thinking_mode(thinking) is not True or not isinstance(thinking, dict):
        return messages
    budget = thinking.get("budget_tokens")
    max_tokens = body.get("max_tokens")
    if isinstance(budget, int) and isinstance(max_tokens, int) and max_tokens <= budget:
        if max_tokens - 1 >= MIN_THINKING_BUDGET:
            body["thinking"] = {**thinking, "budget_tokens": max_tokens - 1}
            repairs.append(
                Repair(
                    "thinking.budget_tokens",
                    f"lowered the thinking budget to {max_tokens - 1:,} (was {budget:,})",
                    "`max_tokens` must be greater than `thinking.budget_tokens`",
                )
            )
        else:
            body["max_tokens"] = budget + 1
            repairs.append(
                Repair(
                    "max_tokens",
                    f"raised max_tokens to {budget + 1:,} (was {max_tokens:,})",
                    "`max_tokens` must be greater than `thinking.budget_tokens`",
                )
            )
    if messages and thinking_problems(messages, enabled=True):
        body["thinking"] = {"type": "disabled"}
        repairs.append(
            Repair(
                "thinking",
                "turned extended thinking off for this request",
                "the turn in progress began without thinking, and with thinking on the API "
                "refuses that (a signed thinking block cannot be made up)",
            )
        )
    return messages


def _without_final_thinking(
    messages: tuple[Message, ...], repairs: list[Repair]
) -> tuple[Message, ...]:
    """Thinking is off: the final assistant message (a prefill) may not carry thinking."""
    last = messages[-1]
    kept = tuple(b for b in last.blocks if not isinstance(b, THINKING_TYPES))
    repairs.append(
        Repair(
            f"messages.{len(messages) - 1}",
            f"removed {len(last.blocks) - len(kept)} thinking block(s) from the final "
            "assistant message",
            "with thinking off, an assistant message in the final position cannot contain thinking",
        )
    )
    return (*messages[:-1], replace(last, blocks=kept, revision=last.revision + 1))


def _fit_breakpoints(body: dict[str, Any], before: int, repairs: list[Repair]) -> None:
    """Markers inside messages do not survive the rebuild (ContextDesk places its own);
    in `system` and `tools`, the first 4 are kept (they mark the longest-lived prefix)."""
    after = count_breakpoints(body)
    if before > after:
        repairs.append(
            Repair(
                "messages",
                f"left out the {before - after} `cache_control` marker(s) inside messages",
                "the messages were rebuilt; a sender places its own cache breakpoints",
            )
        )
    budget = MAX_CACHE_BREAKPOINTS
    for key in ("system", "tools"):
        blocks = body.get(key)
        if not isinstance(blocks, list):
            continue
        kept = []
        for i, block in enumerate(blocks):
            if isinstance(block, dict) and isinstance(block.get("cache_control"), dict):
                if budget == 0:
                    block = {k: v for k, v in block.items() if k != "cache_control"}
                    repairs.append(
                        Repair(
                            f"{key}.{i}",
                            "removed a fifth (or later) `cache_control`",
                            TOO_MANY_BREAKPOINTS.format(found=after),
                        )
                    )
                else:
                    budget -= 1
            kept.append(block)
        body[key] = kept
