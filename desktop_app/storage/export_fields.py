"""Reading an export's fields: the shape problems found, each with its JSON path, to be
said all at once (`Fields`), and the values read leniently beside them (`when`,
`object_of`). Apart from `exchange.py`, which reads the export with them."""

from __future__ import annotations

import time
from typing import Any

from desktop_app.core.errors import HistoryFormatError, Problem

LATEST_TIME = 32_503_680_000  # the year 3000: a later "time" is damage, not a date


class Fields:
    """Collects shape problems with their JSON paths, to report them all at once."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def problem(self, path: str, message: str) -> None:
        self.problems.append(Problem(path, message))

    def string(self, obj: dict[str, Any], key: str, prefix: str, *, required: bool = True) -> str:
        value = obj.get(key)
        if isinstance(value, str):
            return value
        if value is not None or required:
            self.problem(f"{prefix}.{key}".lstrip("."), "Input should be a valid string")
        return ""

    def array(self, obj: dict[str, Any], key: str, prefix: str = "") -> list[Any]:
        """A list field (missing or null: empty)."""
        value = obj.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            self.problem(f"{prefix}.{key}".lstrip("."), "Input should be a valid list")
            return []
        return value

    def strings(self, obj: dict[str, Any], key: str, prefix: str) -> list[str]:
        items = self.array(obj, key, prefix)
        for j, item in enumerate(items):
            if not isinstance(item, str):
                self.problem(f"{prefix}.{key}.{j}".lstrip("."), "Input should be a valid string")
        return [item for item in items if isinstance(item, str)]

    def flag(self, obj: dict[str, Any], key: str, prefix: str) -> bool:
        value = obj.get(key, False)
        if not isinstance(value, bool):
            self.problem(f"{prefix}.{key}", "Input should be a valid boolean")
            return False
        return value

    def raise_if_any(self) -> None:
        if self.problems:
            raise HistoryFormatError(self.problems)


def when(value: Any, otherwise: float | None = None) -> float:
    """A time as exported (a message's, a fact's…), if it is a plausible one — never
    later than now — else `otherwise` (default: now)."""
    now = time.time()
    plausible = isinstance(value, int | float) and not isinstance(value, bool)
    if plausible and 0 <= value <= LATEST_TIME:
        return min(float(value), now)
    return now if otherwise is None else otherwise


def object_of(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
