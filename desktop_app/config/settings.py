"""Settings (the user's choices) and state (what the app remembers), as JSON files.

Both load leniently — unknown keys are ignored, missing ones take their defaults — and a
file that cannot be read is set aside (renamed `.bad`, never deleted) with a warning, so
a damaged file can cost the user their preferences but never their ability to start.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

from desktop_app.config.files import write_json_atomically

log = logging.getLogger(__name__)

DEFAULT_MODEL = "claude-sonnet-5-5"


@dataclass(frozen=True, slots=True)
class Settings:
    base_url: str = ""  # empty: ANTHROPIC_BASE_URL, else Anthropic's API
    model: str = DEFAULT_MODEL
    max_tokens: int = 4096
    thinking_budget: int = 0  # 0: extended thinking off
    system_prompt: str = ""  # the default for new chats
    tools_enabled: bool = True
    run_command_enabled: bool = False
    workspace: str = ""
    send_with_enter: bool = True  # else Ctrl+Enter sends
    auto_pin: bool = False
    plaintext_key_opt_in: bool = False  # the user chose, warned, to keep the key in a file


@dataclass(frozen=True, slots=True)
class AppState:
    window_geometry: str = ""  # base64 of QWidget.saveGeometry()
    splitter_sizes: list[int] = field(default_factory=list)
    last_chat_id: str = ""


T = TypeVar("T", Settings, AppState)


def load(path: Path, kind: type[T]) -> T:
    if not path.exists():
        return kind()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        known = {f.name for f in fields(kind)}
        return kind(**{k: v for k, v in data.items() if k in known})
    except (OSError, ValueError, TypeError) as exc:
        aside = path.with_suffix(path.suffix + ".bad")
        path.replace(aside)
        log.warning("%s unreadable (%s); set aside as %s, defaults in use", path, exc, aside.name)
        return kind()


def save(path: Path, value: Settings | AppState) -> None:
    data: dict[str, Any] = asdict(value)
    write_json_atomically(path, data)
