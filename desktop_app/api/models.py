"""The models ContextDesk knows without asking a server, and a server's list kept between
runs. Light on purpose: the window reads it before the SDK is loaded."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from desktop_app.core.model_facts import BUILTIN, DEFAULT_WINDOW, ModelFacts, facts_for, with_listed
from desktop_app.core.ports import ModelInfo

log = logging.getLogger(__name__)

# When the server has no models endpoint (or is unreachable): the generally available
# current models (Fable and Mythos are for invited or verified organisations only).
OFFERED = (
    "claude-opus-5-5",
    "claude-sonnet-5-5",
    "claude-haiku-5-5",
    "claude-opus-5",
    "claude-sonnet-5",
    "claude-opus-4-8",
    "claude-opus-4-7",
    "claude-opus-4-6",
    "claude-sonnet-4-6",
    "claude-haiku-4-5",
)
BUILTIN_MODELS = tuple(
    ModelInfo(
        f.id,
        f.display_name,
        f.context_window,
        f.max_output,
        f.thinking_types,
        f.efforts,
        f.lifecycle,
    )
    for f in sorted((f for f in BUILTIN if f.id in OFFERED), key=lambda f: OFFERED.index(f.id))
)
DEFAULT_CONTEXT_WINDOW = DEFAULT_WINDOW


def facts_with_listing(model: str, listed: ModelInfo | None) -> ModelFacts:
    """The model's facts: the built-in table (or a guess), with what the server's own
    list said of it over them."""
    facts = facts_for(model)
    if listed is None or listed.source != "server":
        return facts
    return with_listed(
        facts,
        context_window=listed.context_window,
        max_output=listed.max_output,
        display_name=listed.display_name,
        thinking_types=listed.thinking_types,
        efforts=listed.efforts,
        lifecycle=listed.lifecycle,
        web_search=listed.web_search,
    )


def save_listing(path: Path, server: str, models: list[ModelInfo]) -> None:
    """Keep a server's list (a cache: failing to write it costs a later fetch only)."""
    data = {
        "server": server,
        "models": [
            {
                "id": m.id,
                "display_name": m.display_name,
                "context_window": m.context_window,
                "max_output": m.max_output,
                "thinking_types": sorted(m.thinking_types)
                if m.thinking_types is not None
                else None,
                "efforts": list(m.efforts) if m.efforts is not None else None,
                "lifecycle": m.lifecycle,
                "web_search": m.web_search,
            }
            for m in models
            if m.source == "server"
        ],
    }
    try:
        from desktop_app.config.files import write_json_atomically
        from desktop_app.config.privacy import PRIVATE_FILE

        write_json_atomically(path, data, mode=PRIVATE_FILE)
    except OSError:
        log.warning("could not keep the model list in %s", path, exc_info=True)


def load_listing(path: Path, server: str) -> list[ModelInfo]:
    """The list kept for `server` (empty when there is none, it is another server's, or
    it cannot be read)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(data, dict) or data.get("server") != server:
        return []
    out = []
    for item in data.get("models") or ():
        try:
            types, efforts = item.get("thinking_types"), item.get("efforts")
            out.append(
                ModelInfo(
                    str(item["id"]),
                    str(item["display_name"]),
                    int(item["context_window"]),
                    int(item["max_output"]),
                    frozenset(map(str, types)) if isinstance(types, list) else None,
                    tuple(map(str, efforts)) if isinstance(efforts, list) else None,
                    str(item.get("lifecycle") or "active"),
                    "server",
                    item["web_search"] if isinstance(item.get("web_search"), bool) else None,
                )
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    return out
