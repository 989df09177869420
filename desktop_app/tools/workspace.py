"""Keeping file tools inside the chat's workspace folder, by resolved real path.

Refused with a clear error: absolute paths, any `..`, a symlink (at any depth) that
leads out, and a new file whose parent is a symlink out (DesktopCommanderMCP#219). Paths
are checked after resolving every symlink, so a link inside the workspace that points
outside is caught however it is reached.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath, PureWindowsPath

from desktop_app.tools.errors import OutsideWorkspace


def check_request(path: str) -> None:
    """The model's path itself: relative, without `..`, without NUL."""
    if not path or "\x00" in path:
        raise OutsideWorkspace(path, "the path is empty or holds a NUL character")
    if (
        PurePosixPath(path).is_absolute()
        or PureWindowsPath(path).is_absolute()
        or path.startswith("~")
    ):
        raise OutsideWorkspace(
            path, "absolute paths are not allowed; use a path relative to the workspace"
        )
    if ".." in PurePosixPath(path.replace("\\", "/")).parts:
        raise OutsideWorkspace(path, "'..' is not allowed")


def confine(workspace: Path, path: str) -> Path:
    """The real path for `path` (relative to `workspace`), or `OutsideWorkspace`. For
    showing a path (and on systems without `dir_fd`): reading and writing go through
    `tools.confined`, which has no race between the check and the use."""
    check_request(path)
    try:
        root = Path(os.path.realpath(workspace))
        real = Path(os.path.realpath(root / path))  # follows every symlink, existing or not
    except OSError as exc:  # a link changing under our feet (EINVAL): refuse, don't crash
        raise OutsideWorkspace(path, exc.strerror or str(exc)) from exc
    if real != root and root not in real.parents:
        raise OutsideWorkspace(path, f"it resolves to {real}, outside the workspace {root}")
    return real


def display(workspace: Path, real: Path) -> str:
    """A path as the model should see it: relative to the workspace."""
    root = Path(os.path.realpath(workspace))
    return "." if real == root else str(real.relative_to(root))
