"""A chat's settings as a person gives them (`chat set`, a project's defaults, the
settings dialog): checked together, with words that say what is wrong."""

from __future__ import annotations

from typing import Any

from desktop_app.context.chat_settings import ContextSettings
from desktop_app.core.errors import ContextDeskError, ErrorKind

THINKING_FIELDS = ("thinking", "thinking_budget", "effort")  # what `thinking=` sets


def checked(settings: ContextSettings) -> ContextSettings:
    """`settings`, if a chat can work with them; else a usage error that says why."""
    problems = settings.problems()
    if problems:
        raise ContextDeskError("Bad value", "; ".join(problems) + ".", kind=ErrorKind.USAGE)
    return settings


def thinking_setting(key: str, text: str) -> dict[str, Any]:
    """`thinking=…` (`chat set`, a project's defaults) as the settings it changes; a
    usage error that says what is taken otherwise."""
    from desktop_app.context.chat_settings import thinking_fields

    try:
        return dict(thinking_fields(text))
    except ValueError as exc:
        raise ContextDeskError("Bad value", f"{key}: {exc}.", kind=ErrorKind.USAGE) from None
