"""Importing what the user gives: a chat of ours or a Messages API body (one chat), or
another app's export — Claude's, ChatGPT's, Open WebUI's, LibreChat's or SillyTavern's
conversations: a file, its shards, a folder or a zip (storage/foreign) — as many chats,
each with what it holds and what going on with it costs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from desktop_app.storage.errors import ImportStopped

if TYPE_CHECKING:
    from desktop_app.chats.chat import Chat, Imported
    from desktop_app.chats.projects import Projects
    from desktop_app.config.settings import Settings
    from desktop_app.context.chat_settings import ContextSettings
    from desktop_app.core.messages import Message
    from desktop_app.storage.chat_info import ChatInfo
    from desktop_app.storage.foreign import ForeignProject
    from desktop_app.storage.store import ChatStore
    from desktop_app.tokens.counter import TokenCounter


class Importer(Protocol):
    """`Engine`, as importing sees it (a protocol: the engine calls this module)."""

    settings: Settings
    store: ChatStore

    @property
    def projects(self) -> Projects: ...

    def import_file(self, path: Path) -> Imported: ...

    def starting_settings(self, model: str | None = None, **overrides: Any) -> ContextSettings: ...

    def chat(self, chat_id: str) -> Chat: ...

    def forget(self, chat_id: str) -> None: ...

    @property
    def counter(self) -> TokenCounter: ...


SOURCE_NAMES = {
    "contextdesk": "ContextDesk",
    "claude": "Claude",
    "chatgpt": "ChatGPT",
    "openwebui": "Open WebUI",
    "librechat": "LibreChat",
    "sillytavern": "SillyTavern",
}


@dataclass(frozen=True, slots=True)
class ImportedChat:
    """A chat imported: its row (the `Chat` is made when it is opened — a 1 GB export's
    thousands are not all held), what it holds, and what going on with it costs."""

    chat: ChatInfo
    report: tuple[str, ...]  # what was repaired or left out, one line each
    messages: int  # every branch's
    versions: int  # of them, those in branches beside the one shown
    next_tokens: int  # the next request's input, estimated
    next_cost: float | None  # what sending it would cost on the chat's model (None: no price)


@dataclass(frozen=True, slots=True)
class ImportBatch:
    chats: tuple[ImportedChat, ...]
    skipped: int  # conversations imported before (or with nothing to keep)
    source: str  # "contextdesk", "claude", "chatgpt", …
    cancelled: bool = False  # stopped by the user: the chats stored until then stay

    @property
    def source_name(self) -> str:
        """The app the chats came from, as people name it."""
        return SOURCE_NAMES.get(self.source, self.source)


def import_path(
    engine: Importer,
    path: Path,
    *,
    chosen: str | None = None,
    model: str | None = None,
    progress: Callable[[str, float], bool] | None = None,
) -> ImportBatch:
    """Import `path`: another app's export when it is one (`chosen`: its format, else
    detected), on `model` (else Settings'); else one chat of ours. The export is read
    once to check it (a broken file imports nothing), then chat by chat, each stored
    whole or not at all; one already imported is skipped. `progress(words, share)` is
    told how far it is, and stops the import — the chats stored so far stay — by
    returning False."""
    from desktop_app.storage.foreign.reading import open_export, read_projects
    from desktop_app.storage.foreign.tree import store_foreign

    export = open_export(path, chosen)
    if export is None:
        single = engine.import_file(path)
        one = _described(single.chat, single.repairs, single.chat.info.message_count, 0)
        return ImportBatch((one,), 0, "contextdesk")
    told = progress or (lambda _words, _share: True)
    total, seen = max(1, export.size), [0]

    def read(n: int) -> None:
        seen[0] += n
        if not told(f"Reading {export.path.name}…", min(1.0, seen[0] / total)):
            raise ImportStopped

    try:
        count = export.check(read)
    except ImportStopped:
        return ImportBatch((), 0, export.source, cancelled=True)
    model = model or engine.settings.model
    settings = engine.starting_settings(model)
    projects: dict[str, ForeignProject] | None = None  # the source's, read when needed
    homes: dict[str, str] = {}  # the source's project id → ours
    made: list[ImportedChat] = []
    skipped = 0
    for n, foreign in enumerate(export.chats()):
        if not told(f"Importing {n + 1:,} of {count:,} chats…", n / max(1, count)):
            return ImportBatch(tuple(made), skipped, export.source, cancelled=True)
        stored = store_foreign(engine.store, foreign, model, settings)
        if stored is None:
            skipped += 1
            continue
        chat = engine.chat(stored.chat.id)  # (forgotten once described: see below)
        if foreign.project:
            if projects is None:
                projects = {p.source_id: p for p in read_projects(path)}
            home = homes.get(foreign.project) or _project_for(engine, projects.get(foreign.project))
            if home is not None:
                homes[foreign.project] = home
                engine.projects.move(chat, home)
        history = chat.messages()
        made.append(_described(chat, stored.report, stored.messages, stored.versions, history))
        # Its planner, its plan and its counts: memory stays flat over thousands of chats.
        engine.counter.forget(history)
        engine.forget(chat.id)
    return ImportBatch(tuple(made), skipped, export.source)


def _project_for(engine: Importer, project: ForeignProject | None) -> str | None:
    """Ours for the source's `project`: one of the same name, taken as it is (a re-import
    makes none); else a new one, with its instructions and its documents as knowledge
    files. (Made when the first chat of it is stored: a project no imported chat
    belongs to is not made.)"""
    if project is None:
        return None
    existing = next((p.id for p in engine.projects.all() if p.name == project.name), None)
    if existing is not None:
        return existing
    made = engine.projects.new(project.name, instructions=project.instructions)
    for name, text in project.docs:
        engine.projects.add_text(made.id, name, text)
    return made.id


def _described(
    chat: Chat,
    report: tuple[str, ...],
    messages: int,
    versions: int,
    history: Sequence[Message] | None = None,
) -> ImportedChat:
    """What the chat holds, and what its next request would cost (an estimate)."""
    outlook = chat.costs.cache_outlook(chat.plans.plan(history=history))
    return ImportedChat(
        chat.info,
        report,
        messages,
        versions,
        outlook.input_tokens,
        outlook.now,
    )
