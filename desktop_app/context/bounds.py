"""Every number a person sets, with the values it may take — declared once. The app's
settings (`config/settings.py`), a chat's (`ContextSettings.problems`, `chat set`), a
project's defaults and each spin box that edits one (the Settings dialog, the context
panel, the project dialog) take their range from here, so no two places disagree.
(Light: the chat list's rows carry chat settings into the first frame; a named tuple,
not a dataclass, as a first start's first frame makes none: `config/window_state.py`.)"""

from __future__ import annotations

from typing import NamedTuple


class Bounds(NamedTuple):
    low: int | float
    high: int | float
    unit: str = ""  # said after a number: "tokens", "seconds"
    zero: str = ""  # what 0 means, where 0 is allowed below `low` ("as the model list says")

    @property
    def whole_range(self) -> tuple[int, int]:
        """The range of a whole-number setting, as a spin box takes it."""
        return int(self.low), int(self.high)

    def why_not(self, value: float) -> str:
        """ "" when `value` is allowed, else what is (for a message after the setting's name)."""
        if (self.zero and value == 0) or self.low <= value <= self.high:
            return ""
        unit = f" {self.unit}" if self.unit else ""
        span = f"between {self.low:,} and {self.high:,}{unit}"
        return f"0 ({self.zero}) or {span}" if self.zero else f"must be {span}"


# The API's ceiling for max_tokens is 128K on every current model (64K on the 4.5s: a
# model's own limit is applied when a chat switches to it, chats/setup.py). Thinking's
# budget is at least 1,024 and below max_tokens: docs.claude.com, "Building with extended
# thinking" and the models overview (read 2026-12-02; docs/anthropic-api-2026.md rows
# T3, W3).
MAX_TOKENS = Bounds(1, 128_000, "tokens")
THINKING_BUDGET = Bounds(1_024, 127_999, "tokens")
CONTEXT_WINDOW = Bounds(1_000, 10_000_000, "tokens")
COMPACTION_THRESHOLD = Bounds(0.1, 1.0)  # of the window (the panel shows it in percent)
KEEP_RECENT_TURNS = Bounds(0, 1_000, "turns")
MAX_CONTEXT_MESSAGES = Bounds(0, 1_000_000, "messages")  # 0: no limit
TOOL_RESULT_CAP = Bounds(0, 1_000_000, "tokens")
TIMEOUT = Bounds(5, 3_600, "seconds")
WEB_MAX_USES = Bounds(1, 50, "uses")  # searches or fetches per request, for each tool
TEXT_SIZE = Bounds(8, 24, "points", zero="the system's")
READING_WIDTH = Bounds(560, 1_600, "pixels")

# A chat's numbers by `ContextSettings` field (and `chat set` key, for the message).
CHAT_BOUNDS: dict[str, tuple[str, Bounds]] = {
    "context_window": ("context_window", CONTEXT_WINDOW),
    "max_tokens": ("max_tokens", MAX_TOKENS),
    "compaction_threshold": ("threshold", COMPACTION_THRESHOLD),
    "keep_recent_turns": ("keep_recent", KEEP_RECENT_TURNS),
    "max_context_messages": ("max_messages", MAX_CONTEXT_MESSAGES),
    "tool_result_cap": ("tool_result_cap", TOOL_RESULT_CAP),
    "web_max_uses": ("web_max_uses", WEB_MAX_USES),
}
