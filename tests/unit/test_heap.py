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
