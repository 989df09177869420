"""Finding another app's conversations in what the user gave: a `conversations.json`
(or one of its shards, `conversations-000.json` …), a folder of them, or the zip (or
several numbered zips, given one by one) they come in."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path
from typing import Any

from desktop_app.storage.errors import ImportFailed
from desktop_app.storage.foreign import FORMATS, ForeignChat, ForeignProject, detect

MAX_EXPORT_BYTES = 1024 * 2**20  # a whole export's conversations, read whole for now
SHARD = re.compile(r"(^|/)conversations(-\d+)?\.json$")
PROJECTS = re.compile(r"(^|/)projects\.json$")
ONE_FILE = (".json", ".jsonl")  # a single export file: JSON, or SillyTavern's JSON Lines


def read_projects(path: Path) -> list[ForeignProject]:
    """The projects a Claude export carries (`projects.json` beside its conversations, in
    its folder or zip); [] when there are none."""
    from desktop_app.storage.foreign import claude

    found: list[ForeignProject] = []
    for _name, data in _documents(path, PROJECTS):
        found += claude.projects(data)
    return found


def read_export(path: Path, chosen: str | None = None) -> list[ForeignChat] | None:
    """The conversations in `path`, read by `chosen`'s reader (detected when None);
    None when it is not another app's export (a chat of ours, a request body)."""
    documents = list(_documents(path))
    if not documents:
        if chosen:
            raise ImportFailed("Not an export", f"{path.name} holds no conversations.json.")
        return None
    found: list[ForeignChat] = []
    for name, data in documents:
        kind = chosen or ("sillytavern" if name.lower().endswith(".jsonl") else detect(data))
        if kind is None:
            if path.suffix.lower() == ".json" and len(documents) == 1:
                return None  # one JSON file that is not an export: ours to read
            raise ImportFailed(
                "Not an export",
                f"{name} is not an export of Claude, ChatGPT, Open WebUI, LibreChat or "
                "SillyTavern "
                f"(say which with --from: {', '.join(FORMATS)}).",
            )
        if kind == "chatgpt":
            found += _reader(kind)(data, Assets(path))
        else:
            found += _reader(kind)(data)
    return found


IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}


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
                self._names = [p.relative_to(self.path).as_posix() for p in self.path.rglob("*")]
            elif zipfile.is_zipfile(self.path):
                with zipfile.ZipFile(self.path) as archive:
                    self._names = archive.namelist()
            else:
                self._names = []
            self._names = [n for n in self._names if Path(n).suffix.lower() in IMAGE_TYPES]
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


def _reader(kind: str) -> Any:
    if kind not in FORMATS:
        raise ImportFailed("Unknown format", f"{kind!r}: say one of {', '.join(FORMATS)}.")
    import importlib

    return importlib.import_module(f"desktop_app.storage.foreign.{kind}").conversations


def _documents(path: Path, wanted: re.Pattern[str] = SHARD) -> list[tuple[str, Any]]:
    """(name, parsed JSON) of each conversations file in `path` (or each file named as
    `wanted` says), in name order."""
    if wanted is PROJECTS:
        folder = path if path.is_dir() else path.parent
        if not path.is_dir() and not zipfile.is_zipfile(path):
            files = [folder / "projects.json"] if (folder / "projects.json").is_file() else []
            return [(p.name, _parse(p.name, p.read_bytes())) for p in files]
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.json") if wanted.search(p.as_posix()))
        return [(str(p.relative_to(path)), _parse(p.name, p.read_bytes())) for p in files]
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = sorted(n for n in archive.namelist() if wanted.search(n))
            if sum(archive.getinfo(n).file_size for n in names) > MAX_EXPORT_BYTES:
                raise ImportFailed("Export too large", f"{path.name}: more than 1 GB of chats.")
            return [(n, _parse(n, archive.read(n))) for n in names]
    if path.suffix.lower() not in ONE_FILE or path.stat().st_size > MAX_EXPORT_BYTES:
        return []
    if path.suffix.lower() == ".jsonl":
        return [(path.name, _lines(path.name, path.read_bytes()))]
    return [(path.name, _parse(path.name, path.read_bytes()))]


def _lines(name: str, raw: bytes) -> Any:
    """JSON Lines (SillyTavern's chat file), as a list."""
    try:
        return [json.loads(line) for line in raw.decode("utf-8-sig").splitlines() if line.strip()]
    except (UnicodeDecodeError, ValueError) as exc:
        raise ImportFailed("Not JSON Lines", f"{name} cannot be read line by line: {exc}.") from exc


def _parse(name: str, raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ImportFailed("Not JSON", f"{name} cannot be read as JSON: {exc}.") from exc
