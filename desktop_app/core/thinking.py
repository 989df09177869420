"""A chat's thinking choice, and what it becomes in a request for one model.

The user chooses once per chat — *adaptive* (Claude decides how much to think, at an
effort level), *off* (the model's lowest setting) or a *budget* (older models' extended
thinking) — and `setup` turns that into the `thinking` and `output_config.effort` fields
the chat's model accepts (core/model_facts.py). Where the model cannot do what was
chosen, the nearest thing it can is sent and `ThinkingSetup.note` says so: a request
never carries a setting its model refuses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from desktop_app.core.blocks import JSONObject
from desktop_app.core.model_facts import ModelFacts, clamp_effort

ThinkingMode: TypeAlias = Literal["adaptive", "off", "budget"]
DISPLAYS = ("summarized", "omitted")
MIN_BUDGET = 1024  # the API's minimum `budget_tokens`


@dataclass(frozen=True, slots=True)
class ThinkingChoice:
    mode: ThinkingMode = "adaptive"
    effort: str = ""  # "" = the model's default
    budget: int = 0  # for "budget"
    display: str = "summarized"  # show thinking's text, or only that it happened


@dataclass(frozen=True, slots=True)
class ThinkingSetup:
    """The fields one request carries for a choice, on one model."""

    thinking: JSONObject | None  # the `thinking` field; None: left out
    effort: str  # `output_config.effort`; "": left out (the model's default)
    thinks: bool | None  # on (a budget), off, or None: the model decides per turn
    note: str = ""  # why this differs from what was chosen ("" when it does not)


@dataclass(frozen=True, slots=True)
class ThinkingOptions:
    """What the choice can be on one model, for a face to offer (words are the face's)."""

    model: str  # its display name
    modes: tuple[ThinkingMode, ...]  # the modes that differ on this model
    efforts: tuple[str, ...]  # the effort levels it takes ("" = its default, always offered)
    default_effort: str
    off: str  # what "off" sends: "left out", "disabled", "between_tools", "lowest effort"
    budgets: bool  # it takes a thinking budget


def options(facts: ModelFacts) -> ThinkingOptions:
    if not facts.omitted_thinks:
        off = "left out"
    elif "between_tools" in facts.thinking_types and "disabled" not in facts.thinking_types:
        off = "between_tools"
    elif "disabled" in facts.thinking_types:
        off = "disabled"
    else:
        off = "lowest effort"
    budgets = "enabled" in facts.thinking_types
    adaptive = "adaptive" in facts.thinking_types or facts.omitted_thinks
    modes: tuple[ThinkingMode, ...] = (
        *(("adaptive",) if adaptive else ()),
        "off",
        *(("budget",) if budgets else ()),
    )
    return ThinkingOptions(
        facts.display_name, modes, facts.efforts, facts.default_effort, off, budgets
    )


def setup(facts: ModelFacts, choice: ThinkingChoice, max_tokens: int) -> ThinkingSetup:
    """What a request to the model `facts` describes carries for `choice`."""
    if choice.mode == "budget":
        return _budget(facts, choice, max_tokens)
    if choice.mode == "off":
        return _off(facts, choice)
    return _adaptive(facts, choice)


def _display(facts: ModelFacts, choice: ThinkingChoice) -> JSONObject:
    """`display`, only when it differs from the model's default (servers that are not
    Anthropic's may not know the field)."""
    if choice.display in DISPLAYS and choice.display != facts.display_default:
        return {"display": choice.display}
    return {}


def _adaptive(facts: ModelFacts, choice: ThinkingChoice, note: str = "") -> ThinkingSetup:
    effort = clamp_effort(facts, choice.effort)
    if "adaptive" in facts.thinking_types:
        thinking = {"type": "adaptive", **_display(facts, choice)}
        return ThinkingSetup(thinking, effort, None, note or _effort_note(facts, choice, effort))
    if facts.omitted_thinks:
        return ThinkingSetup(None, effort, None, note)
    if "enabled" in facts.thinking_types:
        return ThinkingSetup(
            None,
            effort,
            False,
            note
            or f"{facts.display_name} has no adaptive thinking: it is off (set a budget "
            "to turn it on)",
        )
    return ThinkingSetup(None, effort, False, note)


def _off(facts: ModelFacts, choice: ThinkingChoice) -> ThinkingSetup:
    effort = clamp_effort(facts, choice.effort, thinking_off=True)
    if not facts.omitted_thinks:
        return ThinkingSetup(None, effort, False)  # leaving the field out is off
    if "between_tools" in facts.thinking_types and "disabled" not in facts.thinking_types:
        # Sonnet 5.5's "off": no thinking before answering; the short notes it writes
        # between tool calls still come back as thinking blocks (migration guide).
        return ThinkingSetup({"type": "between_tools"}, effort, None)
    if "disabled" in facts.thinking_types:
        return ThinkingSetup({"type": "disabled"}, effort, False)
    lowest = clamp_effort(facts, "low")
    return _adaptive(
        facts,
        ThinkingChoice("adaptive", lowest, display=choice.display),
        f"{facts.display_name} always thinks: adaptive at its lowest effort "
        f"({lowest or 'its default'})",
    )


def _budget(facts: ModelFacts, choice: ThinkingChoice, max_tokens: int) -> ThinkingSetup:
    if "enabled" in facts.thinking_types:
        if MIN_BUDGET <= choice.budget < max_tokens:
            thinking = {
                "type": "enabled",
                "budget_tokens": choice.budget,
                **_display(facts, choice),
            }
            return ThinkingSetup(thinking, clamp_effort(facts, choice.effort), True)
        return ThinkingSetup(
            None,
            "",
            False,
            f"a thinking budget must be from {MIN_BUDGET:,} up to below the maximum reply "
            f"({max_tokens:,}): thinking is off",
        )
    if "adaptive" in facts.thinking_types or facts.omitted_thinks:
        return _adaptive(
            facts,
            choice,
            f"{facts.display_name} takes no thinking budget: adaptive thinking instead",
        )
    return ThinkingSetup(None, "", False)


def _effort_note(facts: ModelFacts, choice: ThinkingChoice, effort: str) -> str:
    if choice.effort and effort != choice.effort:
        if not facts.efforts:
            return f"{facts.display_name} takes no effort level"
        return f"{facts.display_name} has no {choice.effort!r} effort: {effort!r} instead"
    return ""


def fitted(facts: ModelFacts, choice: ThinkingChoice) -> tuple[ThinkingChoice, str]:
    """`choice` moved to what the model takes, and what was changed, said ("" when
    nothing was): a budget on a model that takes none becomes adaptive thinking at the
    nearest effort. (`setup` would send that anyway; this makes the chat's setting say it.)"""
    if choice.mode == "budget" and "enabled" not in facts.thinking_types and facts.can_think:
        effort = clamp_effort(facts, budget_to_effort(choice.budget)) or choice.effort
        moved = ThinkingChoice("adaptive", effort, choice.budget, choice.display)
        return moved, (
            f"{facts.display_name} takes no thinking budget: this chat's thinking "
            f"({choice.budget:,} tokens) is now adaptive"
            + (f" at {effort} effort" if effort else "")
            + "."
        )
    return choice, ""


def budget_to_effort(budget: int) -> str:
    """The effort nearest an old extended-thinking budget (for chats moved to adaptive)."""
    if budget <= 4_000:
        return "low"
    if budget <= 16_000:
        return "medium"
    return "high"


def allowed_tool_choice(
    facts: ModelFacts, tool_choice: JSONObject | None, thinks: bool | None
) -> JSONObject | None:
    """`tool_choice` as the model takes it: a forced choice (any / tool) is dropped where
    the model refuses it, or while a thinking budget is on (thinking page, "Limits")."""
    if not tool_choice or tool_choice.get("type") not in ("any", "tool"):
        return tool_choice
    if not facts.forced_tool_choice or thinks is True:
        return None
    return tool_choice
