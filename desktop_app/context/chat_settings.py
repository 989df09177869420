"""A chat's context settings: the user's choices for what its requests hold. (Its own
module, light, because the chat list's rows carry them and the list is in the window's
first frame: `storage/chat_info.py`.)"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_WINDOW = 200_000


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
    drop_old_thinking: bool = True  # earlier turns' thinking: the API ignores it anyway
    thinking_budget: int = 0  # extended thinking's budget; 0: off (from Settings at creation)
    # An imported request's own `tools`, `tool_choice` and `metadata` (JSON), sent with
    # every turn so the chat goes on as its author's requests did; "" for most chats.
    request_extras: str = ""
    # Tools this chat does not offer the model: MCP servers ("git") or single tools
    # ("git.git_log"), comma-separated. "" offers every tool there is.
    tools_off: str = ""
    # Layers of the chat's project it does not send: "instructions", "facts",
    # "knowledge", comma-separated. "" sends them all.
    project_layers_off: str = ""

    def problems(self) -> list[str]:
        """Values a chat cannot work with, one line each, named as `chat set` names them."""
        found = []
        if not 1_000 <= self.context_window <= 10_000_000:
            found.append("context_window must be between 1,000 and 10,000,000 tokens")
        if not 0.1 <= self.compaction_threshold <= 1.0:
            found.append("threshold must be between 0.1 and 1.0")
        if not 1 <= self.max_tokens < self.context_window:
            found.append("max_tokens must be at least 1 and below the context window")
        if self.thinking_budget and not 1024 <= self.thinking_budget < self.max_tokens:
            found.append("thinking must be 0 (off), or from 1,024 up to below max_tokens")
        counts = {
            "keep_recent": self.keep_recent_turns,
            "max_messages": self.max_context_messages,
            "tool_result_cap": self.tool_result_cap,
        }
        found += [f"{key} cannot be negative" for key, value in counts.items() if value < 0]
        if self.request_extras and not _extras_readable(self.request_extras):
            found.append("request_extras must be a JSON object of tools, tool_choice, metadata")
        return found


def _extras_readable(text: str) -> bool:
    from desktop_app.core.request import RequestExtras  # (not on the way to the first paint)

    return RequestExtras.read(text) is not None
