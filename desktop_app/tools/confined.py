"""Reading and writing inside the workspace without a race (POSIX).

Checking a path and then using it are two steps another process can slip between: flip
an entry from a file to a symlink that leads out, and a check-then-open reads (or
writes) outside. So nothing here follows a symlink through the kernel. From a directory
descriptor of the workspace, each component is opened with `O_NOFOLLOW`, relative to the
descriptor of the folder before it (`dir_fd`). A symlink met on the way is read
(`readlink`) and its target walked the same way, on a stack of descriptors whose bottom
is the workspace: `..` can never pop it, an absolute target must lie inside it. Files are
then read and written through descriptors opened in their folder; a write goes to a new
temporary file there and is renamed into place there.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from desktop_app.core.errors import ContextDeskError, ErrorKind
from desktop_app.tools.errors import OutsideWorkspace

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
MAX_LINKS = 40  # as the kernel: more symlinks on one path is a loop


def supported() -> bool:
    """Does this system open files relative to a folder's descriptor?"""
    return os.open in os.supports_dir_fd and os.readlink in os.supports_dir_fd


@dataclass(frozen=True, slots=True)
class Entry:
    name: str
    kind: str  # "folder", "file", "link", "other"
    size: int


class _Walk:
    """Descriptors from the workspace down to the current folder, and their names."""

    def __init__(self, root: Path, request: str) -> None:
        self.root = root
        self.request = request
        self.fds = [os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)]
        self.names: list[str] = []
        self.links = 0

    @property
    def fd(self) -> int:
        return self.fds[-1]

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds.clear()

    def up(self) -> None:
        if len(self.fds) == 1:
            raise OutsideWorkspace(self.request, "a link leads above the workspace folder")
        os.close(self.fds.pop())
        self.names.pop()

    def down(self, name: str, *, create: bool) -> bool:
        """Into the folder `name`: True, or False if `name` is a symlink (not followed)."""
        try:
            fd = os.open(name, _DIR, dir_fd=self.fd)
        except FileNotFoundError:
            if not create:
                raise
            os.mkdir(name, 0o777, dir_fd=self.fd)
            fd = os.open(name, _DIR, dir_fd=self.fd)
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            if not _is_link(name, self.fd):
                raise ContextDeskError(
                    "Not a folder", f"{self.shown(name)} is a file, not a folder."
                ) from None
            return False
        self.fds.append(fd)
        self.names.append(name)
        return True

    def link_target(self, name: str) -> list[str]:
        """The components a symlink stands for, from where the walk must go on."""
        self.links += 1
        if self.links > MAX_LINKS:
            raise OutsideWorkspace(self.request, "too many symlinks (a loop?)")
        target = os.readlink(name, dir_fd=self.fd)
        if os.path.isabs(target):
            real_root = os.path.realpath(self.root)
            inside = os.path.relpath(target, real_root)
            if inside == ".." or inside.startswith(".." + os.sep):
                raise OutsideWorkspace(self.request, f"a link leads outside, to {target}")
            while len(self.fds) > 1:
                self.up()
            return _parts(inside)
        return _parts(target)

    def shown(self, name: str = "") -> str:
        """A path as the model sees it: relative to the workspace."""
        return "/".join([*self.names, name] if name else self.names) or "."


def _parts(path: str) -> list[str]:
    return [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


@contextmanager
def _walk(root: Path, path: str, *, last: str, create: bool = False) -> Iterator[tuple[_Walk, str]]:
    """Walk `path`: to its folder (`last="folder"`, the name is ""), or to the folder
    that holds its last component (`last="name"`: that name is not a symlink)."""
    walk = _Walk(root, path)
    try:
        queue = deque(_parts(path))
        while queue:
            part = queue.popleft()
            if part == "..":
                walk.up()
                continue
            if not queue and last == "name":
                if _is_link(part, walk.fd):
                    queue.extendleft(reversed(walk.link_target(part)))
                    continue
                yield walk, part
                return
            if not walk.down(part, create=create):
                queue.extendleft(reversed(walk.link_target(part)))
        if last == "name":
            raise OutsideWorkspace(path, "it names the workspace folder, not a file in it")
        yield walk, ""
    except OSError as exc:
        raise _failed(path, exc) from exc
    finally:
        walk.close()


def _failed(path: str, exc: OSError) -> ContextDeskError:
    """Any failure on the way (a file that vanished, a race) refuses the call plainly."""
    if isinstance(exc, FileNotFoundError):
        return ContextDeskError("No such file", f"{path} does not exist in the workspace.")
    return ContextDeskError(
        "Workspace file refused",
        f"{path}: {exc.strerror or exc}.",
        kind=ErrorKind.PATH_REFUSED,
    )


def read_bytes(root: Path, path: str, limit: int) -> tuple[bytes, str]:
    """The file's bytes (at most `limit`; more is an error) and its shown path."""
    with _walk(root, path, last="name") as (walk, name):
        try:
            fd = os.open(name, _FILE, dir_fd=walk.fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # it became a symlink just now
                raise OutsideWorkspace(path, "it changed into a link while being read") from exc
            raise _failed(path, exc) from exc
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise ContextDeskError("Not a file", f"{path} is not a regular file.")
            if info.st_size > limit:
                raise ContextDeskError(
                    "File too large",
                    f"{path} is {info.st_size:,} bytes; read_file reads up to {limit:,}.",
                )
            return handle.read(limit + 1)[:limit], walk.shown(name)


def write_bytes(root: Path, path: str, data: bytes) -> str:
    """Write `data` to `path` (its folders made as needed), whole or not at all; the
    shown path."""
    with _walk(root, path, last="name", create=True) as (walk, name):
        temporary = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(temporary, flags, 0o644, dir_fd=walk.fd)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            # renameat: replaces the entry in this folder, never what a link points to
            os.replace(temporary, name, src_dir_fd=walk.fd, dst_dir_fd=walk.fd)
        except BaseException:
            with suppress(OSError):
                os.unlink(temporary, dir_fd=walk.fd)
            raise
        return walk.shown(name)


def list_folder(root: Path, path: str) -> tuple[list[Entry], str]:
    """The folder's entries (links are shown, not followed) and its shown path."""
    with _walk(root, path, last="folder") as (walk, _):
        entries = []
        with os.scandir(walk.fd) as found:
            for item in found:
                info = item.stat(follow_symlinks=False)
                if stat.S_ISLNK(info.st_mode):
                    kind = "link"
                elif stat.S_ISDIR(info.st_mode):
                    kind = "folder"
                elif stat.S_ISREG(info.st_mode):
                    kind = "file"
                else:
                    kind = "other"
                entries.append(Entry(item.name, kind, info.st_size))
        return entries, walk.shown()
