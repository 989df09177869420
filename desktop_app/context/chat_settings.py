"""A chat's context settings: the user's choices for what its requests hold. (Its own
module, light, because the chat list's rows carry them and the list is in the window's
first frame: `storage/chat_info.py`.)"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from desktop_app.context.bounds import CHAT_BOUNDS, THINKING_BUDGET

if TYPE_CHECKING:
    from desktop_app.core.server_tools import WebChoice
    from desktop_app.core.thinking import ThinkingChoice

DEFAULT_WINDOW = 200_000


SEARCH_CHATS = ("off", "project", "all")


@dataclass(frozen=True, slots=True)
class ContextSettings:
    context_window: int = DEFAULT_WINDOW
    max_tokens: int = 4096  # reserved for the reply
    compaction_threshold: float = 0.87  # of the window, estimated input
    auto_compact: bool = True
    keep_recent_turns: int = 10  # defaults: docs/architecture.md, *Defaults*
    keep_first_message: bool = True  # the first message carries the intent
    max_context_messages: int = 0  # sliding window by count; 0 = off
    tool_result_cap: int = 8000  # tokens; longer results enter the context head + tail
    # Earlier turns' thinking is not sent: older models ignore it, newer ones would bill it
    # as input on every turn (removing it from the start keeps later blocks valid).
    drop_old_thinking: bool = True
    # Thinking (core/thinking.py), from Settings at creation: "adaptive" (at `effort`),
    # "off" (the model's lowest setting) or "budget" (`thinking_budget` tokens, on models
    # that take one). `effort` "" is the model's default; `thinking_display` says whether
    # thinking's text comes back ("summarized") or only that it happened ("omitted").
    thinking: str = "adaptive"
    thinking_budget: int = 0
    effort: str = ""
    thinking_display: str = "summarized"
    # An imported request's own `tools`, `tool_choice` and `metadata` (JSON), sent with
    # every turn so the chat goes on as its author's requests did; "" for most chats.
    request_extras: str = ""
    # Tools this chat does not offer the model: MCP servers ("git") or single tools
    # ("git.git_log"), sorted. Empty: every tool there is is offered.
    tools_off: tuple[str, ...] = ()
    # Layers of the chat's project it does not send ("instructions", "facts",
    # "knowledge"), sorted. Empty: all are sent.
    project_layers_off: tuple[str, ...] = ()
    # How long the prompt cache keeps this chat's prefix: "5m" or "1h" (a 1-hour write
    # costs 2× input, a 5-minute one 1.25×: core/prompt_cache.py).
    cache_ttl: str = "5m"
    # The most this chat may cost, in the price table's currency; 0: no cap. A hard cap:
    # a send that would cross it is asked about first (chats/budgets.py).
    spend_cap: float = 0.0
    # Whether Claude may look up the user's other chats, by a visible tool that asks
    # first (search_chats, chats/past_chats.py): "off", "project" (its project's chats
    # only) or "all". Never a chat in the trash.
    search_chats: str = "off"
    # The web, as the API searches and fetches it itself (core/server_tools.py): off
    # unless turned on; each use is a step in Claude's reply, its results counted and
    # searches priced. Domains: only these, or never these (the API takes one list).
    web_search: bool = False
    web_fetch: bool = False
    web_max_uses: int = 5
    web_domains: tuple[str, ...] = ()
    web_blocked_domains: tuple[str, ...] = ()

    def problems(self) -> list[str]:
        """Values a chat cannot work with, one line each, named as `chat set` names them."""
        found = [
            f"{key} {why}"
            for name, (key, bounds) in CHAT_BOUNDS.items()
            if (why := bounds.why_not(getattr(self, name)))
        ]
        if self.max_tokens >= self.context_window:
            found.append("max_tokens must be below the context window")
        found += thinking_problems(
            self.thinking, self.thinking_budget, self.effort, self.thinking_display, self.max_tokens
        )
        if self.cache_ttl not in ("5m", "1h"):
            found.append("cache_ttl must be 5m or 1h")
        if self.search_chats not in SEARCH_CHATS:
            found.append("search_chats must be off, project or all")
        for key in ("web_domains", "web_blocked_domains"):
            if any("://" in d or " " in d for d in getattr(self, key)):
                found.append(f"{key} must be domains such as example.com (no https://)")
        if self.web_domains and self.web_blocked_domains:
            found.append(
                "web_domains and web_blocked_domains cannot both be set: the API takes one"
            )
        if not 0 <= self.spend_cap <= 100_000:
            found.append("spend_cap must be from 0 (no cap) to 100,000")
        if self.request_extras and not _extras_readable(self.request_extras):
            found.append("request_extras must be a JSON object of tools, tool_choice, metadata")
        return found

    @property
    def web_choice(self) -> WebChoice:
        from desktop_app.core.server_tools import WebChoice  # (not before the first paint)

        return WebChoice(
            self.web_search,
            self.web_fetch,
            self.web_max_uses,
            self.web_domains,
            self.web_blocked_domains,
            self.tool_result_cap,  # (0: no cap, as for tool results)
        )

    @property
    def thinking_choice(self) -> ThinkingChoice:
        from desktop_app.core.thinking import ThinkingChoice  # (not before the first paint)

        mode = self.thinking if self.thinking in ("adaptive", "off", "budget") else "adaptive"
        return ThinkingChoice(mode, self.effort, self.thinking_budget, self.thinking_display)  # type: ignore[arg-type]

    def with_thinking(self, choice: ThinkingChoice) -> ContextSettings:
        from dataclasses import replace

        return replace(
            self,
            thinking=choice.mode,
            thinking_budget=choice.budget,
            effort=choice.effort,
            thinking_display=choice.display,
        )


# The fields that hold names (tools, layers, web domains).
NAME_LISTS = ("tools_off", "project_layers_off", "web_domains", "web_blocked_domains")


def names(value: object) -> tuple[str, ...] | None:
    """A list of names as stored or given — a JSON list, or the comma-separated text
    older versions stored and `chat set` takes — sorted, without repeats; None when
    `value` is neither."""
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        return None
    return tuple(sorted({v.strip() for v in value if v.strip()}))


THINKING_MODES = ("adaptive", "off", "budget")
EFFORT_LEVELS = ("low", "medium", "high", "xhigh", "max")
THINKING_DISPLAYS = ("summarized", "omitted")


def thinking_problems(
    mode: str, budget: int, effort: str, display: str, max_tokens: int
) -> list[str]:
    """The thinking fields' problems, as `chat set` and `settings` name them."""
    found = []
    if mode not in THINKING_MODES:
        found.append("thinking must be adaptive, off or budget")
    if mode == "budget":
        if why := THINKING_BUDGET.why_not(budget):
            found.append(f"thinking_budget {why}")
        elif budget >= max_tokens:
            found.append("thinking_budget must be below max_tokens, as the API requires")
    if effort and effort not in EFFORT_LEVELS:
        found.append(f"effort must be empty (the model's default) or {', '.join(EFFORT_LEVELS)}")
    if display not in THINKING_DISPLAYS:
        found.append("thinking_display must be summarized or omitted")
    return found


def thinking_fields(text: str) -> dict[str, str | int]:
    """`thinking=…` (the command line, a project's defaults) as settings fields: adaptive,
    off, budget, an effort (adaptive at that effort) or a number (a budget in tokens).
    Raises ValueError with what is accepted."""
    word = text.strip().lower().replace(",", "").replace("_", "")
    if word in ("adaptive", "on"):
        return {"thinking": "adaptive"}
    if word in ("off", "0", "none", "lowest"):
        return {"thinking": "off"}
    if word == "budget":
        return {"thinking": "budget"}
    if word in EFFORT_LEVELS:
        return {"thinking": "adaptive", "effort": word}
    if word.isdigit():
        return {"thinking": "budget", "thinking_budget": int(word)}
    raise ValueError(
        f"say adaptive, off, an effort ({', '.join(EFFORT_LEVELS)}) or a budget in tokens, "
        f"not {text!r}"
    )


def _extras_readable(text: str) -> bool:
    from desktop_app.core.request import RequestExtras  # (not on the way to the first paint)

    return RequestExtras.read(text) is not None
