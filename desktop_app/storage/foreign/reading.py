"""Finding another app's conversations in what the user gave — a `conversations.json` (or
its shards, `conversations-000.json` …), a folder of them, the zip they come in, or one
app's single chat file — and reading them one at a time: a 1 GB export is a list of
conversations, and only one is in memory at once (`streaming.array_items`).

`open_export` finds the documents and each one's format; `Export.check` reads them all
once — so a broken file is refused before anything is stored — and counts the
conversations; `Export.chats` reads them again, one by one, for storing."""

from __future__ import annotations

import functools
import importlib
import itertools
import json
import re
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from desktop_app.storage.chat_export import FORMAT
from desktop_app.storage.errors import ImportFailed
from desktop_app.storage.foreign import (
    FORMATS,
    ForeignChat,
    ForeignMemory,
    ForeignProject,
    detect,
)
from desktop_app.storage.foreign.streaming import array_items

SHARD = re.compile(r"(^|/)conversations(-\d+)?\.json$")
PROJECTS = re.compile(r"(^|/)projects\.json$")
MEMORIES = re.compile(r"(^|/)memories(\.json|/[^/]+\.json)$")
ONE_FILE = (".json", ".jsonl")  # a single export file: JSON, or SillyTavern's JSON Lines
LISTS = ("claude", "chatgpt", "openwebui")  # formats that are a list of conversations
MAX_WHOLE_BYTES = 256 * 2**20  # a one-chat file (LibreChat, SillyTavern), read whole
IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
Progress = Callable[[int], None]  # bytes read since the last call
EMPTY = "empty"  # a document's format when it is an empty list: any app's, none to read


@dataclass(frozen=True, slots=True)
class Document:
    name: str
    size: int
    open: Callable[[], IO[bytes]]


@dataclass(frozen=True, slots=True)
class Export:
    path: Path
    documents: tuple[tuple[Document, str], ...]  # each with its format
    # Its app ("claude", …); "" when it holds no conversation (the first of several
    # numbered zips may carry only the projects and the memory).
    source: str

    @property
    def size(self) -> int:
        return sum(document.size for document, _ in self.documents)

    def check(self, read: Progress | None = None) -> int:
        """Read every document once, keeping nothing: how many conversations there are;
        `ImportFailed` (naming the file and where) when one is not readable JSON."""
        count = 0
        for document, kind in self.documents:
            with _readable(document):
                if kind in LISTS:
                    with document.open() as stream:
                        count += sum(1 for _ in array_items(stream, read))
                else:
                    _whole(document, kind)
                    count += 1
                    if read is not None:
                        read(document.size)
        return count

    def chats(self, read: Progress | None = None) -> Iterator[ForeignChat]:
        """The conversations, one at a time (parsed as they are reached)."""
        assets = Assets(self.path)
        for document, kind in self.documents:
            reader = importlib.import_module(f"desktop_app.storage.foreign.{kind}")
            with _readable(document):
                if kind not in LISTS:
                    named = {"name": Path(document.name).stem} if kind == "sillytavern" else {}
                    yield from reader.conversations(_whole(document, kind), **named)
                    if read is not None:
                        read(document.size)
                    continue
                extra = {"assets": assets} if kind == "chatgpt" else {}
                with document.open() as stream:
                    for index, item in enumerate(array_items(stream, read)):
                        if isinstance(item, dict):
                            yield reader.conversation(item, index, **extra)


def open_export(path: Path, chosen: str | None = None) -> Export | None:
    """The export in `path`, each document's format `chosen` or detected from its first
    conversation; None when `path` is not another app's export (a chat of ours, a
    request body)."""
    if chosen is not None and chosen not in FORMATS:
        raise ImportFailed("Unknown format", f"{chosen!r}: say one of {', '.join(FORMATS)}.")
    if path.is_file() and not zipfile.is_zipfile(path) and _starts_as_zip(path):
        raise ImportFailed(
            "Damaged zip",
            f"{path.name} is a zip file that is cut short or damaged (its index is missing): "
            "download the export again.",
        )
    documents = _documents(path, SHARD)
    if not documents:
        if chosen:
            raise ImportFailed("Not an export", f"{path.name} holds no conversations.json.")
        return None
    found = []
    for document in documents:
        kind = chosen or _kind(document)
        if kind == EMPTY:
            continue  # an empty list: no conversation to read, of any app
        if kind is None:
            if len(documents) == 1 and not zipfile.is_zipfile(path) and not path.is_dir():
                return None  # one JSON file that is not an export: ours to read
            raise ImportFailed(
                "Not an export",
                f"{document.name} is not an export of Claude, ChatGPT, Open WebUI, "
                f"LibreChat or SillyTavern (say which with --from: {', '.join(FORMATS)}).",
            )
        found.append((document, kind))
    return Export(path, tuple(found), found[0][1] if found else "")


def _starts_as_zip(path: Path) -> bool:
    with path.open("rb") as file:
        return file.read(4) == b"PK\x03\x04"


def read_projects(path: Path) -> list[ForeignProject]:
    """The projects a Claude export carries (`projects.json` beside its conversations, in
    its folder or zip); [] when there are none."""
    from desktop_app.storage.foreign import claude

    found: list[ForeignProject] = []
    if not path.is_dir() and not zipfile.is_zipfile(path):
        path = path.parent  # (a conversations.json given alone: its folder)
    for document in _documents(path, PROJECTS):
        with _readable(document), document.open() as stream:
            found += claude.projects(json.loads(stream.read()))
    return found


def read_memories(path: Path) -> ForeignMemory:
    """What a Claude export remembers of the user (`memories.json`, or newer exports'
    `memories/<account>.json`, beside its conversations); empty when it has none."""
    from desktop_app.storage.foreign import claude

    general: list[str] = []
    per_project: list[tuple[str, tuple[str, ...]]] = []
    if not path.is_dir() and not zipfile.is_zipfile(path):
        path = path.parent
    for document in _documents(path, MEMORIES):
        with _readable(document), document.open() as stream:
            found = claude.memories(json.loads(stream.read()))
        general += found.general
        per_project += found.projects
    return ForeignMemory(tuple(general), tuple(per_project))


# An export of ours opens with its format (`chat_export.FORMAT`), so a look at its first
# bytes tells it apart without reading the file whole
_OURS = re.compile(rb'\{\s*"format"\s*:\s*"' + re.escape(FORMAT.encode()) + rb'"')


def _kind(document: Document) -> str | None:
    """The format, from the document's name and its first conversation."""
    if document.name.lower().endswith(".jsonl"):
        return "sillytavern"
    with document.open() as stream:
        head = stream.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    if _OURS.match(head):
        return None  # a chat of ours: `exchange` reads it as it goes (~100 MB at 100,000)
    if head.startswith(b"{") and not head[1:].lstrip().startswith(b'"conversations"'):
        with _readable(document):
            return detect(_whole(document, "json"))  # one object: LibreChat's chat, or ours
    with _readable(document), document.open() as stream:
        # The first few conversations (the first may be a damaged one, with no tree).
        firsts = list(itertools.islice(array_items(stream), 5))
    return detect(firsts) if firsts else EMPTY


def _whole(document: Document, kind: str) -> Any:
    if document.size > MAX_WHOLE_BYTES:
        raise ImportFailed("File too large", f"{document.name} is over 256 MB for one chat.")
    with document.open() as stream:
        raw = stream.read().decode("utf-8-sig")
    if kind == "sillytavern":
        return [
            _line(document, n, line) for n, line in enumerate(raw.splitlines(), 1) if line.strip()
        ]
    return json.loads(raw)


def _line(document: Document, number: int, line: str) -> Any:
    """One line of a JSON Lines file; a broken one named by its line."""
    try:
        return json.loads(line)
    except ValueError as error:
        raise ImportFailed(
            "Not JSON", f"{document.name}, line {number}, cannot be read as JSON: {error}."
        ) from error


@contextmanager
def _readable(document: Document) -> Iterator[None]:
    """Turns a JSON or text error while reading `document` into `ImportFailed`."""
    try:
        yield
    except ImportFailed:
        raise
    except (UnicodeDecodeError, ValueError) as error:
        raise ImportFailed(
            "Not JSON", f"{document.name} cannot be read as JSON: {error}."
        ) from error


def _documents(path: Path, wanted: re.Pattern[str]) -> list[Document]:
    """The files in `path` named as `wanted` says (in a folder or a zip), in name order;
    or `path` itself, a single export file."""
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.json") if wanted.search(p.as_posix()))
        return [
            Document(str(p.relative_to(path)), p.stat().st_size, functools.partial(_open, p))
            for p in files
        ]
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = sorted(n for n in archive.namelist() if wanted.search(n))
            sizes = {n: archive.getinfo(n).file_size for n in names}
        return [Document(n, sizes[n], _member(path, n)) for n in names]
    if wanted is SHARD and path.suffix.lower() in ONE_FILE and path.is_file():
        return [Document(path.name, path.stat().st_size, functools.partial(_open, path))]
    return []


def _open(path: Path) -> IO[bytes]:
    return path.open("rb")


def _member(path: Path, name: str) -> Callable[[], IO[bytes]]:
    """Opens one file of the zip (with the zip, closed together)."""

    def opened() -> IO[bytes]:
        archive = zipfile.ZipFile(path)
        member = archive.open(name)
        member.close = _closing(member.close, archive.close)  # type: ignore[method-assign]
        return member

    return opened


def _closing(*closers: Callable[[], None]) -> Callable[[], None]:
    def close() -> None:
        for closer in closers:
            closer()

    return close


class Assets:
    """The images an export's messages point to (`file-service://file-abc…`,
    `sediment://file_abc…`): the file in its zip or folder whose name starts with the
    pointer's id (ChatGPT names them `<id>-<original name>`), read when asked for."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._names: list[str] | None = None

    def _listed(self) -> list[str]:
        if self._names is None:
            if self.path.is_dir():
                names = [p.relative_to(self.path).as_posix() for p in self.path.rglob("*")]
            elif zipfile.is_zipfile(self.path):
                with zipfile.ZipFile(self.path) as archive:
                    names = archive.namelist()
            else:
                names = []
            self._names = [n for n in names if Path(n).suffix.lower() in IMAGE_TYPES]
        return self._names

    def __call__(self, file_id: str) -> tuple[str, bytes] | None:
        name = next((n for n in self._listed() if Path(n).name.startswith(file_id)), None)
        if not file_id or name is None:
            return None
        media = IMAGE_TYPES[Path(name).suffix.lower()]
        if self.path.is_dir():
            return media, (self.path / name).read_bytes()
        with zipfile.ZipFile(self.path) as archive:
            return media, archive.read(name)
