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
from desktop_app.storage.foreign import FORMATS, ForeignChat, detect

MAX_EXPORT_BYTES = 1024 * 2**20  # a whole export's conversations, read whole for now
SHARD = re.compile(r"(^|/)conversations(-\d+)?\.json$")


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
        kind = chosen or detect(data)
        if kind is None:
            if path.suffix.lower() == ".json" and len(documents) == 1:
                return None  # one JSON file that is not an export: ours to read
            raise ImportFailed(
                "Not an export",
                f"{name} is not a Claude or ChatGPT conversations file "
                f"(say which with --from: {', '.join(FORMATS)}).",
            )
        found += _reader(kind)(data)
    return found


def _reader(kind: str) -> Any:
    if kind == "claude":
        from desktop_app.storage.foreign import claude

        return claude.conversations
    if kind == "chatgpt":
        from desktop_app.storage.foreign import chatgpt

        return chatgpt.conversations
    raise ImportFailed("Unknown format", f"{kind!r}: say one of {', '.join(FORMATS)}.")


def _documents(path: Path) -> list[tuple[str, Any]]:
    """(name, parsed JSON) of each conversations file in `path`, in name order."""
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.json") if SHARD.search(p.as_posix()))
        return [(str(p.relative_to(path)), _parse(p.name, p.read_bytes())) for p in files]
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = sorted(n for n in archive.namelist() if SHARD.search(n))
            if sum(archive.getinfo(n).file_size for n in names) > MAX_EXPORT_BYTES:
                raise ImportFailed("Export too large", f"{path.name}: more than 1 GB of chats.")
            return [(n, _parse(n, archive.read(n))) for n in names]
    if path.suffix.lower() != ".json" or path.stat().st_size > MAX_EXPORT_BYTES:
        return []
    return [(path.name, _parse(path.name, path.read_bytes()))]


def _parse(name: str, raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ImportFailed("Not JSON", f"{name} cannot be read as JSON: {exc}.") from exc
