"""Settings (the user's choices) and state (what the app remembers: `window_state.py`),
as JSON files.

Both load leniently (`stored.py`): unknown keys are ignored, missing ones take their
defaults, a value of the wrong type — or, for a setting, out of range — is dropped with a
warning, and a file that cannot be read at all is set aside (renamed `.bad`, never
deleted), so a damaged file can cost the user their preferences but never their ability
to start.

`SETTINGS` describes each setting once — its name on the command line, how a typed value
is read, what values are allowed — for the Settings dialog, `contextdesk settings` and
the loader alike.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlparse

from desktop_app.config.errors import BadSetting
from desktop_app.config.stored import read_record, write_record
from desktop_app.config.window_state import APPEARANCES, AppState
from desktop_app.context import bounds
from desktop_app.context.bounds import Bounds
from desktop_app.context.chat_settings import (
    EFFORT_LEVELS,
    THINKING_DISPLAYS,
    THINKING_MODES,
    thinking_fields,
)

log = logging.getLogger(__name__)

DEFAULT_MODEL = "claude-sonnet-5-5"


@dataclass(frozen=True, slots=True)
class Settings:
    base_url: str = ""  # empty: ANTHROPIC_BASE_URL, else Anthropic's API
    model: str = DEFAULT_MODEL
    context_window: int = 0  # tokens, for a model no list knows; 0: as the model list says
    max_tokens: int = 4096
    # New chats' thinking (context/chat_settings.py): adaptive, off (the model's lowest
    # setting) or budget; the effort ("": the model's default); whether its text is shown.
    thinking: str = "adaptive"
    thinking_budget: int = 0
    effort: str = ""
    thinking_display: str = "summarized"
    system_prompt: str = ""  # the default for new chats
    tools_enabled: bool = True
    run_command_enabled: bool = False
    command_env: str = ""  # names of variables commands may see besides PATH, HOME…
    workspace: str = ""
    first_word_timeout: int = 60  # seconds a reply may take to begin (a local model loading)
    quiet_timeout: int = 90  # seconds a reply may pause between two events
    send_with_enter: bool = True  # else Ctrl+Enter sends
    auto_pin: bool = False
    plaintext_key_opt_in: bool = False  # the user chose, warned, to keep the key in a file
    appearance: str = "system"  # system, light or dark
    text_size: int = 0  # points for the window's text; 0: the system's
    reading_width: int = 780  # the conversation's column at most, in px (lines stay readable)
    # Prompt caching's markers: "auto" sends them to Anthropic's API only; "on" to the
    # server set too (a proxy that passes them on); "off" never.
    prompt_cache: str = "auto"
    # The API's own tools (web search, web fetch: core/server_tools.py): "auto" offers
    # them to Anthropic's API only; "on" to the server set too; "off" never.
    server_tools: str = "auto"
    # The most a calendar month's requests may cost (the price table's currency; 0: no
    # budget); "soft" warns at 80 % and past it, "hard" asks before a send goes over.
    monthly_spend_cap: float = 0.0
    monthly_cap: str = "soft"


@dataclass(frozen=True, slots=True)
class SettingSpec:
    key: str  # the name `contextdesk settings` uses
    attr: str  # the `Settings` field
    help: str
    check: Callable[[Any, Settings], str]  # "" when the value is allowed, else why not
    label: str  # the name the Settings dialog shows

    @property
    def kind(self) -> type:
        return type(getattr(Settings(), self.attr))

    def parse(self, text: str) -> Any:
        """A value typed on the command line, as this setting's type."""
        if self.attr == "system_prompt":
            return text  # its spaces and newlines are the user's
        return typed_value(self.key, text, self.kind)


def typed_value(key: str, text: str, kind: type) -> Any:
    """`text` typed on the command line as a `kind` (bool, int, float or str) value; a
    `BadSetting` that says what was expected otherwise."""
    word = text.strip()
    if kind is bool:
        if word.lower() in ("1", "true", "yes", "on"):
            return True
        if word.lower() in ("0", "false", "no", "off"):
            return False
        raise BadSetting(key, f"say on or off, not {text!r}")
    if kind is int:
        try:
            return int(word.replace("_", "").replace(",", ""))
        except ValueError:
            raise BadSetting(key, f"a whole number is needed, not {text!r}") from None
    if kind is float:
        try:
            value = float(word)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise BadSetting(key, f"a number is needed, not {text!r}")
        return value
    return word


def _server(value: str, _: Settings) -> str:
    if not value:
        return ""
    url = urlparse(value)
    if url.scheme not in ("http", "https") or not url.hostname:
        return f"{value!r} is not an http(s) URL (e.g. http://localhost:11434)"
    return ""


def _model(value: str, _: Settings) -> str:
    if not value or any(c.isspace() for c in value):
        return "a model id without spaces is needed (e.g. claude-sonnet-5-5)"
    return ""


def _within(allowed: Bounds) -> Callable[[float, Settings], str]:
    def check(value: float, _: Settings) -> str:
        return allowed.why_not(value)

    return check


# New chats' window may be 0: "as the model list says" (a chat's own is always a number).
NEW_CHATS_WINDOW = bounds.CONTEXT_WINDOW._replace(zero="as the model list says")


def _thinking(value: str, _: Settings) -> str:
    return "" if value in THINKING_MODES else "say adaptive, off, budget, an effort or a number"


def _thinking_budget(value: int, settings: Settings) -> str:
    if value == 0 and settings.thinking != "budget":
        return ""
    if why := bounds.THINKING_BUDGET.why_not(value):
        return why
    if value >= settings.max_tokens:
        return f"must be below the max output tokens ({settings.max_tokens:,}), as the API requires"
    return ""


def _effort(value: str, _: Settings) -> str:
    if value in ("", *EFFORT_LEVELS):
        return ""
    return f"empty (the model's default) or {', '.join(EFFORT_LEVELS)}"


def _display(value: str, _: Settings) -> str:
    return "" if value in THINKING_DISPLAYS else "say summarized or omitted"


def _workspace(value: str, _: Settings) -> str:
    if value and not Path(value).is_dir():
        return f"{value} is not a folder"
    return ""


def _names(value: str, _: Settings) -> str:
    names = [n.strip() for n in value.split(",") if n.strip()]
    bad = [n for n in names if not n.replace("_", "").isalnum() or n.startswith("ANTHROPIC_")]
    return f"not a variable name commands may see: {', '.join(bad)}" if bad else ""


def _anything(_value: Any, _: Settings) -> str:
    return ""


PROMPT_CACHE = ("auto", "on", "off")  # Anthropic's API only, the server set too, never
SERVER_TOOLS = ("auto", "on", "off")  # the same three, for the API's own tools
CAP_KINDS = ("soft", "hard")


def _one_of(words: tuple[str, ...]) -> Callable[[str, Settings], str]:
    def check(value: str, _: Settings) -> str:
        return "" if value in words else f"say {', '.join(words)}"

    return check


def _money(value: float, _: Settings) -> str:
    return "" if 0 <= value <= 1_000_000 else "from 0 (no budget) to 1,000,000"


def _appearance(value: str, _: Settings) -> str:
    return "" if value in APPEARANCES else f"say {', '.join(APPEARANCES)}"


# What a new chat copies from Settings when it is made (`Engine.new_chat`): a chat keeps
# its own after. Every other setting is the app's, and applies to every chat at once.
CHAT_DEFAULTS = frozenset(
    {
        "model",
        "context_window",
        "system_prompt",
        "max_tokens",
        "thinking",
        "thinking_budget",
        "effort",
        "thinking_display",
    }
)

SETTINGS: tuple[SettingSpec, ...] = (  # in the Settings dialog's order
    SettingSpec(
        "server",
        "base_url",
        "server URL; empty: ANTHROPIC_BASE_URL or Anthropic's",
        _server,
        "Server",
    ),
    SettingSpec("model", "model", "the model new chats use", _model, "Model"),
    SettingSpec(
        "context_window",
        "context_window",
        "the model's context window in tokens, for a model no list knows; 0: as listed",
        _within(NEW_CHATS_WINDOW),
        "Context window",
    ),
    SettingSpec(
        "max_tokens",
        "max_tokens",
        "max output tokens of new chats",
        _within(bounds.MAX_TOKENS),
        "Max output tokens",
    ),
    SettingSpec(
        "thinking",
        "thinking",
        "new chats' thinking: adaptive, off, an effort (low … max) or a budget in tokens",
        _thinking,
        "Thinking",
    ),
    SettingSpec(
        "thinking_budget",
        "thinking_budget",
        "the thinking budget in tokens, for models that take one (thinking=budget)",
        _thinking_budget,
        "Thinking budget",
    ),
    SettingSpec(
        "effort",
        "effort",
        "how much effort new chats ask for: low, medium, high, xhigh, max; empty: the model's",
        _effort,
        "Effort",
    ),
    SettingSpec(
        "thinking_display",
        "thinking_display",
        "summarized (show thinking's text) or omitted (only that Claude thought)",
        _display,
        "Thinking text",
    ),
    SettingSpec(
        "system",
        "system_prompt",
        "the system prompt new chats start with",
        _anything,
        "System prompt",
    ),
    SettingSpec("tools", "tools_enabled", "let Claude use tools", _anything, "Tools"),
    SettingSpec(
        "run_command",
        "run_command_enabled",
        "allow commands (always asks)",
        _anything,
        "Running commands",
    ),
    SettingSpec(
        "command_env",
        "command_env",
        "more environment variables commands may see, by name (e.g. VIRTUAL_ENV,PYTHONPATH)",
        _names,
        "Variables for commands",
    ),
    SettingSpec(
        "workspace",
        "workspace",
        "folder for the file tools; empty: off",
        _workspace,
        "Workspace folder",
    ),
    SettingSpec(
        "first_word_timeout",
        "first_word_timeout",
        "seconds a reply may take to begin before it is an error",
        _within(bounds.TIMEOUT),
        "Wait for a reply to begin",
    ),
    SettingSpec(
        "quiet_timeout",
        "quiet_timeout",
        "seconds a reply may pause mid-way before it is an error",
        _within(bounds.TIMEOUT),
        "Wait while a reply pauses",
    ),
    SettingSpec(
        "send_with_enter", "send_with_enter", "Enter sends (else Ctrl+Enter)", _anything, "Sending"
    ),
    SettingSpec(
        "auto_pin", "auto_pin", "facts Claude proposes are pinned at once", _anything, "Auto-pin"
    ),
    SettingSpec(
        "appearance",
        "appearance",
        "system (follow it), light or dark",
        _appearance,
        "Appearance",
    ),
    SettingSpec(
        "text_size",
        "text_size",
        "the window's text size in points; 0: the system's",
        _within(bounds.TEXT_SIZE),
        "Text size",
    ),
    SettingSpec(
        "reading_width",
        "reading_width",
        "the conversation's column at most, in pixels (centred in a wider window)",
        _within(bounds.READING_WIDTH),
        "Reading width",
    ),
    SettingSpec(
        "prompt_cache",
        "prompt_cache",
        "prompt caching's markers: auto (Anthropic's API only), on (the server set too), off",
        _one_of(PROMPT_CACHE),
        "Prompt cache",
    ),
    SettingSpec(
        "server_tools",
        "server_tools",
        "web search and fetch, run by the API: auto (Anthropic's API only), on (the server "
        "set too), off",
        _one_of(SERVER_TOOLS),
        "Web tools",
    ),
    SettingSpec(
        "monthly_spend_cap",
        "monthly_spend_cap",
        "the most a month's requests may cost, in the price table's currency; 0: no budget",
        _money,
        "Monthly budget",
    ),
    SettingSpec(
        "monthly_cap",
        "monthly_cap",
        "soft (warn at 80 %) or hard (ask before a send goes over the monthly budget)",
        _one_of(CAP_KINDS),
        "Budget kind",
    ),
)
SETTING_BY_KEY = {spec.key: spec for spec in SETTINGS}


def faults(settings: Settings, *, skip: Collection[str] = ()) -> list[tuple[SettingSpec, str]]:
    """Each setting that is not allowed (but those whose field is in `skip`), and why."""
    found = []
    for spec in SETTINGS:
        why = "" if spec.attr in skip else spec.check(getattr(settings, spec.attr), settings)
        if why:
            found.append((spec, why))
    return found


def problems(settings: Settings, *, labels: bool = False, skip: Collection[str] = ()) -> list[str]:
    """What is wrong with these settings, one line each, each named as on the command
    line (or, with `labels`, as in the Settings dialog)."""
    return [
        f"{spec.label if labels else spec.key}: {why}" for spec, why in faults(settings, skip=skip)
    ]


def with_values(settings: Settings, assignments: dict[str, str]) -> Settings:
    """`settings` with typed values (KEY → text) read and applied; raises `BadSetting`
    for an unknown key or a value that cannot be read. (Allowed values are checked by
    `problems`, on the result as a whole.)"""
    values: dict[str, Any] = {}
    for key, text in assignments.items():
        spec = SETTING_BY_KEY.get(key)
        if spec is None:
            raise BadSetting(key, f"no such setting; the settings are {', '.join(SETTING_BY_KEY)}")
        if spec.attr == "thinking":  # adaptive, off, an effort or a number: several fields
            try:
                values.update(thinking_fields(text))
            except ValueError as exc:
                raise BadSetting(key, str(exc)) from None
            continue
        value = spec.parse(text)
        if spec.attr == "workspace" and value:
            value = str(Path(value).expanduser().resolve())
        values[spec.attr] = value
    return replace(settings, **values)


T = TypeVar("T", Settings, AppState)


def load(path: Path, kind: type[T]) -> T:
    loaded = read_record(path, kind, _upgrade if kind is Settings else None)
    if isinstance(loaded, Settings):
        # A workspace on a drive not mounted yet is kept: the file tools say so.
        for spec, why in faults(loaded, skip=("workspace",)):
            log.warning("%s: %s: %s; the default is used", path, spec.key, why)
            loaded = replace(loaded, **{spec.attr: getattr(Settings(), spec.attr)})
    return loaded


def _upgrade(data: dict[str, Any]) -> None:
    if "thinking" not in data and data.get("thinking_budget"):
        data["thinking"] = "budget"  # written when a budget was the only way to think


def save(path: Path, value: Settings | AppState) -> None:
    write_record(path, value)
