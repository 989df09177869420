"""Giving freed memory back to the system (`chats/heap.py`), measured on this process."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from desktop_app.chats import give_back_freed_memory


def resident_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_freed_memory_the_allocator_kept_goes_back_to_the_system() -> None:
    # 4 KB strings come from malloc (not Python's small-object pools); one in four kept
    # alive, the rest freed leave holes glibc keeps resident: a read chat's temporaries.
    strings = [bytes([n % 251]) * 4096 for n in range(20_000)]
    kept = strings[::4]
    del strings
    held = resident_kb()
    assert give_back_freed_memory()
    given = held - resident_kb()
    assert given > 20_000, f"only {given} KB of ~60 MB freed went back"
    assert len(kept) == 5_000


def test_the_source_lines_the_qt_import_hook_read_are_let_go() -> None:
    """Importing a module with PySide loaded makes shiboken read its source (to look for
    `from __feature__ import …`); `linecache` keeps it: ~14 MB once the app is up."""
    import linecache

    import PySide6.QtCore  # noqa: F401  (the hook is installed with it)

    sys.modules.pop("colorsys", None)  # (a small module of the standard library)
    module = __import__("colorsys")  # as an `import` statement does: through the hook
    assert module.__file__ in linecache.cache
    give_back_freed_memory()
    assert module.__file__ not in linecache.cache
