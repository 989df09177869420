"""`contextdesk check`: is a Messages-API history valid, and what would its repair change?
No chat and no database are involved: the file is read, checked and (on request) written
back repaired."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop_app.config.files import write_json_atomically
from desktop_app.core.errors import ContextDeskError, Problem, file_error
from desktop_app.core.protocol import validate
from desktop_app.core.repair import Repair, repair
from desktop_app.core.wire import messages_from_api

MAX_CHECK_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class CheckReport:
    messages: int
    problems: tuple[Problem, ...]
    repairs: tuple[Repair, ...]  # what the repair changes (empty when nothing is wrong)


def check_file(path: Path, fix: Path | None = None) -> CheckReport:
    """Check the `messages` array (or whole request body) in `path`; with `fix`, write the
    repaired JSON there when anything was wrong."""
    data = _read_json(path)
    body: dict[str, Any] | None = data if isinstance(data, dict) else None
    try:
        messages = messages_from_api(body.get("messages") if body is not None else data)
        problems = tuple(validate(messages))
    except RecursionError as exc:
        raise ContextDeskError(
            "Nested too deeply", f"{path} is nested deeper than any conversation needs."
        ) from exc
    if not problems:
        return CheckReport(len(messages), (), ())
    result = repair(messages)
    if fix is not None:
        repaired: Any = [m.to_api() for m in result.messages]
        if body is not None:
            repaired = {**body, "messages": repaired}
        try:
            write_json_atomically(fix, repaired)
        except OSError as exc:
            raise file_error("Cannot write the file", fix, exc) from exc
    return CheckReport(len(messages), problems, tuple(result.repairs))


def _read_json(path: Path) -> Any:
    try:
        size = path.stat().st_size
        if size > MAX_CHECK_BYTES:
            raise ContextDeskError(
                "File too large", f"{path} is {size / 1e6:.0f} MB; the limit is 256 MB."
            )
        return json.loads(path.read_bytes(), parse_constant=_no_constant)
    except OSError as exc:
        raise file_error("Cannot read the file", path, exc) from exc
    except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError is a ValueError
        raise ContextDeskError("Not JSON", f"{path} is not valid JSON: {exc}") from exc
    except RecursionError as exc:
        raise ContextDeskError(
            "Nested too deeply", f"{path} is nested deeper than any conversation needs."
        ) from exc


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")
