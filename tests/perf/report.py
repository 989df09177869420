"""One way for every benchmark to report: a table, and optionally JSON for a runner."""

from __future__ import annotations

import json
import platform
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Row:
    metric: str
    value: float  # the figure checked against the target (best, worst or ratio: see note)
    unit: str  # "ms", "s" or "×"
    target: float | None  # at most this; None: informational
    note: str = ""  # how `value` was taken, and the spread ("best of 25; median 31.0 ms")

    @property
    def passed(self) -> bool:
        return self.target is None or self.value <= self.target


def machine() -> str:
    return f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}, {platform.node()}"


def report(title: str, rows: list[Row], json_path: Path | None = None) -> int:
    """Print the table (and write JSON); the exit status says whether every target held."""
    print(f"{title} — {machine()}")
    print(f"{'metric':66} {'value':>12} {'target':>12}  result  how")
    for row in rows:
        target = "" if row.target is None else f"≤ {row.target:g} {row.unit}"
        verdict = "" if row.target is None else ("pass" if row.passed else "FAIL")
        print(
            f"{row.metric:66} {row.value:9.2f} {row.unit:<2} {target:>12}  {verdict:<6}  {row.note}"
        )
    if json_path is not None:
        results = [{**asdict(row), "pass": row.passed} for row in rows]
        json_path.write_text(
            json.dumps({"title": title, "machine": machine(), "results": results}, indent=2)
        )
    return 0 if all(row.passed for row in rows) else 1
