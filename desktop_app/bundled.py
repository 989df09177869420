"""Where the files in `resources/` are: inside the installed package (a wheel, the
PyInstaller build), or beside it in a source checkout (an editable install)."""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent
_PLACES = (_HERE / "resources", _HERE.parent / "resources")


def bundled(*parts: str) -> Path:
    """The path of a bundled file, e.g. `bundled("icons", "contextdesk.svg")`."""
    for base in _PLACES:
        candidate = base.joinpath(*parts)
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"{'/'.join(parts)} is not in {' or '.join(map(str, _PLACES))}")
