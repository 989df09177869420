"""`contextdesk check`: is a Messages-API history valid, and what would its repair change?
No chat and no database are involved: the file is read, checked and (on request) written
back repaired."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop_app.chats.given_files import read_given_file
from desktop_app.config.files import write_json_atomically
from desktop_app.core.body_repair import repair_body
from desktop_app.core.errors import ContextDeskError, ErrorKind, Problem, file_error
from desktop_app.core.repair import Repair
from desktop_app.core.request_rules import body_problems

MAX_CHECK_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class CheckReport:
    messages: int
    problems: tuple[Problem, ...]
    repairs: tuple[Repair, ...]  # what the repair changes (empty when nothing is wrong)
    remaining: tuple[Problem, ...] = ()  # what the repair cannot fix (then nothing is written)
    written: bool = False


def check_file(path: Path, fix: Path | None = None) -> CheckReport:
    """Check the `messages` array (or whole request body) in `path`; with `fix`, write the
    repaired JSON there when anything was wrong and the repair makes it valid."""
    data = _read_json(path)
    bare = not isinstance(data, dict)
    body: dict[str, Any] = {"messages": data} if bare else data
    raw = body.get("messages")
    try:
        problems = tuple(body_problems(body, settings_known=not bare))
        if not problems:
            return CheckReport(len(raw) if isinstance(raw, list) else 0, (), ())
        result = repair_body(body)
    except RecursionError as exc:
        raise ContextDeskError(
            "Nested too deeply",
            f"{path} is nested deeper than any conversation needs.",
            kind=ErrorKind.FORMAT,
        ) from exc
    remaining = tuple(p for p in result.remaining if not bare or "thinking" not in p.path)
    written = False
    if fix is not None and not remaining:
        repaired: Any = result.body["messages"] if bare else result.body
        try:
            write_json_atomically(fix, repaired)
        except OSError as exc:
            raise file_error("Cannot write the file", fix, exc) from exc
        written = True
    count = len(raw) if isinstance(raw, list) else 0
    return CheckReport(count, problems, result.repairs, remaining, written)


def _read_json(path: Path) -> Any:
    raw = read_given_file(path, MAX_CHECK_BYTES)
    try:
        return json.loads(raw, parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError is a ValueError
        raise ContextDeskError(
            "Not JSON", f"{path} is not valid JSON: {exc}", kind=ErrorKind.FORMAT
        ) from exc
    except RecursionError as exc:
        raise ContextDeskError(
            "Nested too deeply",
            f"{path} is nested deeper than any conversation needs.",
            kind=ErrorKind.FORMAT,
        ) from exc


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")
