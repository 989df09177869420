"""Packaging facts that break silently: a package left out of the wheel, a resource the
app cannot find, a desktop entry that points at the wrong icon."""

from __future__ import annotations

import configparser
import tomllib
from pathlib import Path

from desktop_app.bundled import bundled

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_is_listed_for_the_wheel() -> None:
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "desktop_app").rglob("__init__.py")
    }
    assert found | {"desktop_app.resources", "desktop_app.resources.icons"} == listed


def test_bundled_files_are_found() -> None:
    assert bundled("icons", "contextdesk.svg").read_text().startswith("<svg")
    assert bundled("contextdesk.chat.schema.json").stat().st_size > 0
    for size in (16, 32, 48, 64, 128, 256, 512):
        assert bundled("icons", f"contextdesk-{size}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_desktop_entry_starts_the_app_with_its_icon() -> None:
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]
    entry.read(ROOT / "packaging" / "org.contextdesk.ContextDesk.desktop")
    main = entry["Desktop Entry"]
    assert main["Exec"].split()[0] == "contextdesk"
    assert main["Icon"] == "org.contextdesk.ContextDesk"
    metainfo = (ROOT / "packaging" / "org.contextdesk.ContextDesk.metainfo.xml").read_text()
    assert (
        '<launchable type="desktop-id">org.contextdesk.ContextDesk.desktop</launchable>' in metainfo
    )
