"""What a thinking choice does on a model, said before it is saved (the Settings dialog)."""

from __future__ import annotations

from desktop_app.config.settings import Settings
from desktop_app.context.chat_settings import ContextSettings
from desktop_app.core.model_facts import facts_for
from desktop_app.core.thinking import options, setup


def thinking_meaning(model: str, settings: Settings) -> str:
    """One line: what new chats on `model` send for Settings' thinking choice."""
    facts = facts_for(model or settings.model)
    choice = ContextSettings(
        max_tokens=settings.max_tokens,
        thinking=settings.thinking,
        thinking_budget=settings.thinking_budget,
        effort=settings.effort,
        thinking_display=settings.thinking_display,
    ).thinking_choice
    if facts.source == "guess" and not facts.thinking_types:
        return (
            f"ContextDesk does not know {facts.id}: it sends no thinking settings and no "
            "effort (safe on any server); give its window above if it is not 200,000 tokens."
        )
    done = setup(facts, choice, settings.max_tokens)
    can = options(facts)
    if done.note:
        return f"On {facts.display_name}: {done.note}."
    if choice.mode == "off":
        what = {
            "left out": "it does not think",
            "disabled": "it does not think (thinking: disabled)",
            "between_tools": "no thinking before it answers; the notes it writes between tool "
            "calls still come back (thinking: between_tools)",
            "lowest effort": "it always thinks; the lowest effort is used",
        }[can.off]
        return f"On {facts.display_name}: {what}."
    if choice.mode == "budget":
        return f"On {facts.display_name}: it thinks for up to {choice.budget:,} tokens."
    effort = done.effort or can.default_effort
    level = f" at {effort} effort" if effort else ""
    return f"On {facts.display_name}: Claude decides when and how much to think{level}."
