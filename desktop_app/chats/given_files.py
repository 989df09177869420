"""Files a person names — to attach, import, add to a project, check: only a regular file
is read (a FIFO would block for ever, /dev/zero never ends), never past a limit, and its
name is shown whatever its bytes."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import BinaryIO

from desktop_app.core.errors import ContextDeskError, ErrorKind, file_error, shown_path

# Opening a FIFO for reading waits for a writer; without blocking it opens at once.
_AT_ONCE = 0 if sys.platform == "win32" else os.O_NONBLOCK


def shown_name(path: Path) -> str:
    """The file's name as text (bytes that are not UTF-8 escaped: "caf\\xe9.md")."""
    return shown_path(path.name)


def read_given_file(path: Path, limit: int, too_large: str = "") -> bytes:
    """The file's bytes, or an error that says why not: not a regular file, over `limit`
    bytes (`too_large` says what to do), or the system's reason."""
    with open_given_file(path) as handle:
        try:
            data = handle.read(limit + 1)  # one byte past the limit says it is over
        except OSError as exc:
            raise file_error("Cannot read the file", path, exc) from exc
    if len(data) > limit:
        raise ContextDeskError(
            "File too large",
            f"{shown_name(path)} is over the limit of {_size(limit)}."
            + (f" {too_large}" if too_large else ""),
            kind=ErrorKind.USAGE,
        )
    return data


def open_given_file(path: Path) -> BinaryIO:
    """The file opened to read (as it goes: a long chat's export, read message by
    message), or an error that says why not: not a regular file, or the system's
    reason."""
    try:
        fd = os.open(path, os.O_RDONLY | _AT_ONCE)
        handle = os.fdopen(fd, "rb")
    except OSError as exc:
        raise file_error("Cannot read the file", path, exc) from exc
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError as exc:
        handle.close()
        raise file_error("Cannot read the file", path, exc) from exc
    if not regular:
        handle.close()
        raise ContextDeskError(
            "Not a file",
            f"{shown_path(path)} is not a regular file (a folder, a pipe or a device): "
            "only a file can be read.",
            kind=ErrorKind.USAGE,
        )
    return handle


def _size(limit: int) -> str:
    for unit in (2**20, 1_000_000):
        if limit % unit == 0:
            return f"{limit // unit:,} MB"
    return f"{limit:,} bytes"
