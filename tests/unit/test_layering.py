"""The layer rules, proven in fresh interpreters: only `ui` imports Qt; `core` imports
nothing outside the standard library."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import desktop_app

NON_UI = sorted(
    m.name
    for m in pkgutil.walk_packages(desktop_app.__path__, "desktop_app.")
    if not m.name.startswith("desktop_app.ui") and m.name != "desktop_app.__main__"
)
CORE = [name for name in NON_UI if name.startswith("desktop_app.core")]


def loaded_after_importing(modules: list[str], watch: list[str]) -> list[str]:
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        f"print(','.join(w for w in {watch!r} if w in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [w for w in out.stdout.strip().split(",") if w]


def test_the_module_list_is_real() -> None:
    assert "desktop_app.core.loop" in NON_UI
    assert "desktop_app.cli" in NON_UI
    assert "desktop_app.core.loop" in CORE


def test_no_non_ui_module_loads_qt() -> None:
    assert loaded_after_importing(NON_UI, ["PySide6", "shiboken6"]) == []


def test_core_loads_only_the_standard_library() -> None:
    heavy = [
        "PySide6",
        "anthropic",
        "sqlite3",
        "keyring",
        "tiktoken",
        "httpx",
        "httpx2",
        "platformdirs",
    ]
    assert loaded_after_importing(CORE, heavy) == []


def test_the_watch_really_sees_imports() -> None:
    assert loaded_after_importing(["json", "sqlite3"], ["sqlite3"]) == ["sqlite3"]


def test_the_backend_defers_the_slow_anthropic_import() -> None:
    """`import anthropic` takes ~2.5 s: it must happen on first use, on the worker thread."""
    modules = [
        "desktop_app.api.backend",
        "desktop_app.api.simulator",
        "desktop_app.app",
        "desktop_app.cli",
    ]
    assert loaded_after_importing(modules, ["anthropic", "httpx2"]) == []


def test_the_window_starts_without_the_engine_the_sdk_or_the_encoding() -> None:
    """The first paint must come within 1 s: what a chat needs loads after it."""
    deferred = [
        "anthropic",
        "tiktoken",
        "desktop_app.api.backend",
        "desktop_app.context.projection",
        "desktop_app.context.compaction",
        "desktop_app.core.loop",
        "desktop_app.tools.builtin",
    ]
    assert loaded_after_importing(["desktop_app.ui.gui"], deferred) == []
