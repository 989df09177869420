"""Giving freed memory back to the system.

glibc's malloc keeps the pages of what Python frees for later use: reading and planning
a 100,000-message chat frees ~20 MB of temporaries (rows, parsed JSON, the plan's
working lists) that would stay resident for as long as the app runs. `malloc_trim`
hands them back (~2 ms). Elsewhere (macOS, Windows, musl) nothing is done.

And everywhere: the source lines of every module imported so far, which PySide's import
hook reads (shiboken calls `inspect.getsource` on each module imported, to look for
`from __feature__ import …`; pyzo#851 traces it) and `linecache` then keeps — ~14 MB
of our and our libraries' source (files on disk: a traceback reads again what it shows).
"""

from __future__ import annotations

import sys


def give_back_freed_memory() -> bool:
    """True if the C library was asked to return its free pages."""
    _forget_source_lines()
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim  # the process's own C library
    except (OSError, AttributeError):  # no such function: not glibc
        return False
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    trim(0)
    return True


def _forget_source_lines() -> None:
    """Drop the cached lines of files on disk (read again when a traceback shows them);
    lines registered for code with no file (`linecache.lazycache`, generated code) stay."""
    import linecache
    import os

    for name in list(linecache.cache):
        entry = linecache.cache.get(name)
        if entry is not None and len(entry) == 4 and os.path.isfile(name):
            linecache.cache.pop(name, None)
