"""Keeping the user's data and key to the user.

- Data folders are 0700 and data files 0600: made so, and tightened at start if an older
  ContextDesk (or a copy) left them readable by others.
- The process is not dumpable (Linux): its memory and `/proc/PID/environ` — where an
  `ANTHROPIC_API_KEY` given at start stays for the life of the process — cannot be read
  by other processes of the user, such as a command the model runs.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Iterable
from pathlib import Path

PRIVATE_FOLDER = 0o700
PRIVATE_FILE = 0o600
_PR_SET_DUMPABLE = 4


def make_private(folders: Iterable[Path]) -> None:
    """Each folder 0700 and the files directly in it 0600 (on systems with modes)."""
    if sys.platform == "win32":
        return  # the user's profile folders are private there
    for folder in folders:
        with contextlib.suppress(OSError):  # a read-only folder: nothing to tighten there
            folder.chmod(PRIVATE_FOLDER)
            for entry in folder.iterdir():
                mode = entry.lstat().st_mode
                if stat.S_ISREG(mode) and mode & 0o077:
                    entry.chmod(PRIVATE_FILE)


def create_private(path: Path) -> None:
    """Create `path` empty and 0600 if it does not exist (before SQLite creates it with
    the default mode: its journal files copy the database's mode)."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))


def protect_process() -> bool:
    """Make this process not dumpable (Linux); True if that was done."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False
