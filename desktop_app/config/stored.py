"""The app's small JSON files, read into records (frozen dataclasses, or named tuples
where the first frame reads them) and written back.

Read leniently — unknown keys are ignored, missing ones take their defaults, a value of
the wrong type is dropped with a warning — and a file that cannot be read at all is set
aside (renamed `.bad`, never deleted), so a damaged file can cost the user a preference
but never their ability to start. Light: the window's first frame reads its state here
(`window_state.py`) before the settings' checks load.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from desktop_app.config.files import write_json_atomically
from desktop_app.config.privacy import PRIVATE_FILE

log = logging.getLogger(__name__)

T = TypeVar("T")


def read_record(
    path: Path, kind: type[T], upgrade: Callable[[dict[str, Any]], None] | None = None
) -> T:
    """`kind` as `path` holds it (its defaults when there is no file). `upgrade` mends,
    in place, what an older version wrote."""
    if not path.exists():
        return kind()
    import json  # (not on the way to a first start's first paint: there is nothing to read)

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        if upgrade is not None:
            upgrade(data)
        defaults = kind()
        known = _field_names(kind)
        values = {k: _from_json(v, getattr(defaults, k)) for k, v in data.items() if k in known}
        return kind(**{k: v for k, v in values.items() if _typed(getattr(defaults, k), k, v, path)})
    except (OSError, ValueError, TypeError) as exc:
        aside = _free_name(path.with_suffix(path.suffix + ".bad"))
        path.replace(aside)
        log.warning("%s unreadable (%s); set aside as %s, defaults in use", path, exc, aside.name)
        return kind()


def write_record(path: Path, value: Any) -> None:
    """`value` (a dataclass or a named tuple) as JSON, atomically, readable by the user
    alone."""
    from dataclasses import asdict

    data = value._asdict() if hasattr(value, "_fields") else asdict(value)
    write_json_atomically(path, data, mode=PRIVATE_FILE)


def _field_names(kind: type) -> set[str]:
    named = getattr(kind, "_fields", None)  # a named tuple's
    if named is not None:
        return set(named)
    from dataclasses import fields

    return {f.name for f in fields(kind)}


def _from_json(value: Any, default: Any) -> Any:
    """JSON has no tuples: a list, where the field holds a tuple, is one."""
    return tuple(value) if isinstance(default, tuple) and isinstance(value, list) else value


def _typed(default: Any, name: str, value: Any, path: Path) -> bool:
    """Keep a stored value only if it has the field's type: "false" is not False."""
    ok = same_type(value, default)
    if not ok:
        log.warning(
            "%s: %s=%r is not a %s; the default is used", path, name, value, type(default).__name__
        )
    return ok


def same_type(value: Any, default: Any) -> bool:
    """Is `value` (read from JSON) of `default`'s type? A bool is not an int here, an int
    is a float, and a float must be finite (NaN and Infinity are not numbers to use)."""
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if isinstance(default, float):
        return isinstance(value, int | float) and math.isfinite(value)
    return isinstance(value, type(default))


def _free_name(path: Path) -> Path:
    """`path`, or `path.1`, `path.2`…: the first that does not exist (never overwrite an
    earlier copy set aside)."""
    candidate, n = path, 0
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.{n}")
    return candidate
