"""Web search and web fetch: tools the API runs itself (server tools), as a request
offers them to one model.

From the docs, read 2026-12-03 (platform.claude.com/docs/en/agents-and-tools/tool-use/
web-search-tool, …/web-fetch-tool, …/server-tools) and the SDK's types
(`web_search_tool_20260318_param.py`, `web_fetch_tool_20260318_param.py`):

- Web search comes as `web_search_20250305` (basic), `_20260209` (dynamic filtering,
  Claude 4.6 and later) and `_20260318`; web fetch as `web_fetch_20250910`, `_20260209`,
  `_20260309`, `_20260318`. The newer versions default `allowed_callers` to the code
  execution tool; `["direct"]` calls them as tools of their own, without code execution
  in the reply — what a chat shows step by step, and what models without programmatic
  tool calling need (a 400 otherwise).
- `allowed_domains` and `blocked_domains` together are refused (400).
- Web search always cites; web fetch cites only with `citations.enabled`.
- `max_content_tokens` bounds what one fetched page brings into the context.
- count_tokens refuses server tools (400): a request offering them is not counted
  (chats/planning.ServerCount); the window keeps its estimate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from desktop_app.core.blocks import JSONObject
from desktop_app.core.model_facts import DEMO, ModelFacts
from desktop_app.core.request import ToolSpec

WEB_TOOLS = ("web_search", "web_fetch")
# Claude 4.6 is the first generation with the newer versions (`ModelFacts.generation`
# of Sonnet 4.6); older Claude models get the first ones.
NEWER_FROM_GENERATION = 43
NEWEST = {"web_search": "web_search_20260318", "web_fetch": "web_fetch_20260318"}
FIRST = {"web_search": "web_search_20250305", "web_fetch": "web_fetch_20250910"}


@dataclass(frozen=True, slots=True)
class ServerToolSpec(ToolSpec):
    """A tool the API runs: sent as its own definition (`type`, `name`, its options),
    never as a schema of ours; its calls come back as `server_tool_use` blocks with their
    results in the same reply."""

    definition: JSONObject = field(default_factory=dict)

    def to_api(self) -> JSONObject:
        return dict(self.definition)


@dataclass(frozen=True, slots=True)
class WebChoice:
    """What a chat lets Claude do on the web (its settings, `chat set web_…`)."""

    search: bool = False
    fetch: bool = False
    max_uses: int = 5  # per request, for each tool
    allowed_domains: tuple[str, ...] = ()
    blocked_domains: tuple[str, ...] = ()
    max_page_tokens: int = 8000  # a fetched page's most tokens in the context; 0: no cap


def web_tools(choice: WebChoice, facts: ModelFacts) -> tuple[ServerToolSpec, ...]:
    """The server tools `choice` turns on, in the versions the model takes; none for a
    model we do not know as Claude (another server's)."""
    if facts.generation <= 0:
        return ()
    newer = facts.generation >= NEWER_FROM_GENERATION or facts.id == DEMO.id
    out = []
    search = choice.search and facts.web_search  # (the Models API may say it is not taken)
    for name, on in (("web_search", search), ("web_fetch", choice.fetch)):
        if not on:
            continue
        definition: JSONObject = {
            "type": (NEWEST if newer else FIRST)[name],
            "name": name,
            "max_uses": choice.max_uses,
        }
        if newer:
            definition["allowed_callers"] = ["direct"]
        if choice.allowed_domains:
            definition["allowed_domains"] = list(choice.allowed_domains)
        elif choice.blocked_domains:
            definition["blocked_domains"] = list(choice.blocked_domains)
        if name == "web_fetch":
            definition["citations"] = {"enabled": True}
            if choice.max_page_tokens:
                definition["max_content_tokens"] = choice.max_page_tokens
        out.append(ServerToolSpec(name, "", {}, definition))
    return tuple(out)


def is_server_tool(tool: ToolSpec) -> bool:
    return isinstance(tool, ServerToolSpec)
