"""One window per data folder: the window holds a lock on `contextdesk.lock` in the data
folder for as long as it runs.

The operating system drops the lock when the process ends, however it ends, so a crash
never leaves a stale lock behind. The file also holds the owner's pid, for people and
for error messages. The command line does not take the lock; it asks whether a window
holds it, and then leaves start-up repairs (interrupted replies) to that window.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path
from typing import IO

LOCK_NAME = "contextdesk.lock"


def _try_lock(handle: IO[bytes]) -> bool:
    if sys.platform == "win32":
        import msvcrt

        handle.seek(0)  # msvcrt locks bytes from the current position
        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _open_private(path: Path) -> IO[bytes]:
    return os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT, 0o600), "r+b")


def process_alive(pid: int) -> bool:
    """Is a process with this pid running (on this machine)?"""
    if pid == os.getpid():
        return True
    if sys.platform == "win32":  # os.kill would terminate it there
        import ctypes

        handle = ctypes.windll.kernel32.OpenProcess(0x1000, False, pid)  # QUERY_LIMITED_INFO
        if not handle:
            return False
        ctypes.windll.kernel32.CloseHandle(handle)
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


class InstanceLock:
    def __init__(self, data_folder: Path) -> None:
        self.path = data_folder / LOCK_NAME
        self._handle: IO[bytes] | None = None

    def acquire(self, wait_s: float = 0.0) -> bool:
        """True if this process now holds the folder; False if another one does (after
        trying for `wait_s`: a command-line probe holds the lock for an instant)."""
        if self._handle is not None:
            return True
        handle = _open_private(self.path)
        deadline = time.monotonic() + wait_s
        while not _try_lock(handle):
            if time.monotonic() >= deadline:
                handle.close()
                return False
            time.sleep(0.05)
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()).encode("ascii"))
        handle.flush()
        self._handle = handle
        return True

    def release(self) -> None:
        if self._handle is not None:
            self._handle.close()  # closing drops the lock
            self._handle = None

    def owner(self) -> int | None:
        """The pid written by whoever holds (or last held) the lock."""
        with contextlib.suppress(OSError, ValueError):
            return int(self.path.read_text(encoding="ascii").strip() or "x")
        return None

    def held_elsewhere(self) -> bool:
        """Does another process hold the folder right now? (Takes and drops the lock.)"""
        if self._handle is not None:
            return False
        try:
            probe = _open_private(self.path)
        except OSError:
            return False  # a read-only folder: nobody can be writing there either
        try:
            return not _try_lock(probe)
        finally:
            probe.close()
