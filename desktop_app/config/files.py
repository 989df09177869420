"""Writing files so that a crash or a full disk never leaves half of one."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO


def write_atomically(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write beside `path`, fsync, then rename over it: the old file or the new one,
    never a mix. `mode` sets permissions before any byte is written."""
    with atomic_file(path, mode) as handle:
        handle.write(data)


@contextlib.contextmanager
def atomic_file(path: Path, mode: int | None = None) -> Iterator[BinaryIO]:
    """A file to write `path` through, bit by bit (a long chat's export is never one
    string in memory): it becomes `path` — fsynced, renamed over it — when the block
    ends, and is removed if it raises. `mode` sets permissions before any byte."""
    path.parent.mkdir(parents=True, exist_ok=True)
    import tempfile  # (it loads `random`: not on the way to the first paint)

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_json_atomically(path: Path, data: Any, mode: int | None = None) -> None:
    import json  # (not on the way to a first start's first paint: there is nothing to read)

    text = json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False)  # NaN is not JSON
    write_atomically(path, text.encode("utf-8"), mode)
