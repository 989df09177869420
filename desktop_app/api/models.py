"""The models ContextDesk knows without asking a server: the list shown before the
server's own list arrives, and the limits used when a server has no models endpoint.
Light on purpose: the window reads it before the SDK is loaded."""

from __future__ import annotations

from desktop_app.core.ports import ModelInfo

# When the server has no models endpoint (or is unreachable): what we know.
BUILTIN_MODELS = (
    # Conservative where unsure: the models endpoint, when the server has one, wins.
    ModelInfo("claude-opus-5-5", "Claude Opus 5.5", 1_000_000, 32_000),
    ModelInfo("claude-sonnet-5-5", "Claude Sonnet 5.5", 1_000_000, 32_000),
    ModelInfo("claude-haiku-5-5", "Claude Haiku 5.5", 200_000, 32_000),
    ModelInfo("claude-haiku-4-5", "Claude Haiku 4.5", 200_000, 64_000),
)
DEFAULT_CONTEXT_WINDOW = 200_000
