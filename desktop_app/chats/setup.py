"""A chat's own settings (`chat.setup`): its context settings, its system prompt, its
model — a new model brings its window, its output limit and the thinking it takes."""

from __future__ import annotations

import logging
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

from desktop_app.chats.changes import Changes
from desktop_app.chats.chat_core import ChatCore
from desktop_app.chats.names import CHAT_FIELDS
from desktop_app.chats.planning import Planning
from desktop_app.chats.setting_values import checked, thinking_setting
from desktop_app.config.settings import typed_value
from desktop_app.context.chat_settings import NAME_LISTS, ContextSettings, names
from desktop_app.core.errors import ContextDeskError, ErrorKind

if TYPE_CHECKING:
    from desktop_app.core.thinking import ThinkingOptions

log = logging.getLogger(__name__)


class Setup:
    def __init__(self, core: ChatCore, plans: Planning) -> None:
        self._core = core
        self._plans = plans

    def set_settings(self, settings: ContextSettings) -> Changes:
        core = self._core
        core.info = core.host.store.update_chat(core.id, settings=checked(settings))
        return self._changed()

    def set_system_prompt(self, text: str) -> Changes:
        core = self._core
        core.info = core.host.store.update_chat(core.id, system_prompt=text)
        return self._changed()

    def _changed(self, notes: tuple[str, ...] = ()) -> Changes:
        """The chat's settings changed: its planner is made again for them."""
        self._plans.settings_changed()
        return Changes(info=self._core.info, replan=True, notes=notes)

    def change(self, assignments: dict[str, str]) -> Changes:
        """`contextdesk chat set`: KEY=VALUE pairs (keys in CHAT_FIELDS), checked together.
        A new model brings its window, its output limit and the thinking it takes (as
        `switch_model`); what was adjusted to fit it is said in `Changes.notes`."""
        core = self._core
        fields: dict[str, Any] = {}
        values = asdict(core.settings)
        for key, text in assignments.items():
            name = CHAT_FIELDS.get(key)
            if name is None:
                raise ContextDeskError(
                    "Unknown setting",
                    f"{key!r}: use KEY=VALUE with KEY one of {', '.join(CHAT_FIELDS)}.",
                    kind=ErrorKind.USAGE,
                )
            if name in ("title", "model", "system_prompt"):
                fields[name] = text
                continue
            if name == "thinking":
                values.update(thinking_setting(key, text))
                continue
            if name in NAME_LISTS:  # comma-separated on the command line
                values[name] = names(text)
                continue
            values[name] = typed_value(key, text, type(values[name]))
        settings = checked(ContextSettings(**values))
        notes: list[str] = []
        model = fields.get("model")
        if model and model != core.info.model:
            settings, notes = self._fitted_to(
                model.strip(), settings, window="context_window" not in assignments
            )
        if "title" in fields:
            core.rename(fields.pop("title"))
        core.info = core.host.store.update_chat(core.id, settings=settings, **fields)
        return self._changed(tuple(notes))

    def switch_model(self, model: str) -> Changes:
        """Send this chat's next requests to `model`, with that model's context window,
        output limit and thinking (the transcript stays; the context panel and the meter
        re-plan for it). What had to change to fit the model is in its notes."""
        return self.change({"model": model})

    def _fitted_to(
        self, model: str, settings: ContextSettings, *, window: bool
    ) -> tuple[ContextSettings, list[str]]:
        """`settings` for `model`: its window (unless one was given), a reply no longer
        than it writes, and the thinking it takes (core/thinking.fitted)."""
        from desktop_app.core.thinking import fitted

        host = self._core.host
        facts = host.model_facts(model)
        notes = []
        if window:
            settings = replace(settings, context_window=host.model_window(model))
        if settings.max_tokens > facts.max_output:
            notes.append(
                f"The longest reply is now {facts.max_output:,} tokens (was "
                f"{settings.max_tokens:,}): {facts.display_name} writes no more."
            )
            settings = replace(settings, max_tokens=facts.max_output)
        choice, moved = fitted(facts, settings.thinking_choice)
        if moved:
            notes.append(moved[0].upper() + moved[1:])
        return checked(settings.with_thinking(choice)), notes

    def thinking_options(self) -> ThinkingOptions:
        """What this chat's thinking can be on its model (for the chat bar's menu)."""
        from desktop_app.core.thinking import options

        return options(self._core.host.model_facts(self._core.info.model))

    def fit_to_model(self) -> str:
        """A chat stored with a thinking setting its model does not take (a budget from
        before adaptive thinking) moves to what the model takes, once: said here, and
        saved, so it is not said again."""
        from desktop_app.core.thinking import fitted

        core = self._core
        facts = core.host.model_facts(core.info.model)
        choice, moved = fitted(facts, core.settings.thinking_choice)
        if not moved:
            return ""
        try:
            core.info = core.host.store.update_chat(
                core.id, settings=core.settings.with_thinking(choice)
            )
        except ContextDeskError:  # (a busy or read-only database: the request is right anyway)
            log.warning("could not save chat %s's thinking setting", core.id, exc_info=True)
            return ""
        return f"“{core.title}”: {moved}"
