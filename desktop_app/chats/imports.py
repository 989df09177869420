"""Importing what the user gives: a chat of ours or a Messages API body (one chat), or
another app's export — Claude's or ChatGPT's conversations, a file, its shards, a folder
or a zip (storage/foreign) — as many chats, each with what it holds and what going on
with it costs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from desktop_app.chats.chat import Chat, Imported
    from desktop_app.chats.projects import Projects
    from desktop_app.config.settings import Settings
    from desktop_app.context.chat_settings import ContextSettings
    from desktop_app.storage.foreign import ForeignProject
    from desktop_app.storage.store import ChatStore


class Importer(Protocol):
    """`Engine`, as importing sees it (a protocol: the engine calls this module)."""

    settings: Settings
    store: ChatStore

    @property
    def projects(self) -> Projects: ...

    def import_file(self, path: Path) -> Imported: ...

    def starting_settings(self, model: str | None = None, **overrides: Any) -> ContextSettings: ...

    def chat(self, chat_id: str) -> Chat: ...


@dataclass(frozen=True, slots=True)
class ImportedChat:
    chat: Chat
    report: tuple[str, ...]  # what was repaired or left out, one line each
    messages: int  # every branch's
    versions: int  # of them, those in branches beside the one shown
    next_tokens: int  # the next request's input, estimated
    next_cost: float | None  # what sending it would cost on the chat's model (None: no price)


@dataclass(frozen=True, slots=True)
class ImportBatch:
    chats: tuple[ImportedChat, ...]
    skipped: int  # conversations imported before (or with nothing to keep)
    source: str  # "contextdesk", "claude", "chatgpt"


def import_path(
    engine: Importer, path: Path, *, chosen: str | None = None, model: str | None = None
) -> ImportBatch:
    """Import `path`: another app's export when it is one (`chosen`: its format, else
    detected), on `model` (else Settings'); else one chat of ours. Each chat lands whole
    or not at all; one already imported is skipped."""
    from desktop_app.storage.foreign.reading import read_export, read_projects
    from desktop_app.storage.foreign.tree import store_foreign

    found = read_export(path, chosen)
    if found is None:
        single = engine.import_file(path)
        one = _described(single.chat, single.repairs, single.chat.info.message_count, 0)
        return ImportBatch((one,), 0, "contextdesk")
    model = model or engine.settings.model
    settings = engine.starting_settings(model)
    wanted = {f.project for f in found if f.project}
    homes = _projects(engine, read_projects(path), wanted) if wanted else {}
    made: list[ImportedChat] = []
    skipped = 0
    for foreign in found:
        stored = store_foreign(engine.store, foreign, model, settings)
        if stored is None:
            skipped += 1
            continue
        chat = engine.chat(stored.chat.id)
        if foreign.project in homes:
            engine.projects.move(chat, homes[foreign.project])
        made.append(_described(chat, stored.report, stored.messages, stored.versions))
    return ImportBatch(tuple(made), skipped, found[0].source if found else chosen or "")


def _projects(engine: Importer, found: list[ForeignProject], wanted: set[str]) -> dict[str, str]:
    """The source's project id → ours, for the projects the imported chats belong to:
    one of the same name is taken as it is (a re-import makes none); else a new one, with
    its instructions and its documents as knowledge files."""
    existing = {p.name: p.id for p in engine.projects.all()}
    homes: dict[str, str] = {}
    for project in found:
        if project.source_id not in wanted:
            continue
        if project.name in existing:
            homes[project.source_id] = existing[project.name]
            continue
        made = engine.projects.new(project.name, instructions=project.instructions)
        for name, text in project.docs:
            engine.projects.add_text(made.id, name, text)
        homes[project.source_id] = existing[project.name] = made.id
    return homes


def _described(chat: Chat, report: tuple[str, ...], messages: int, versions: int) -> ImportedChat:
    """What the chat holds, and what its next request would cost (an estimate)."""
    outlook = chat.costs.cache_outlook(chat.plans.plan())
    return ImportedChat(
        chat,
        report,
        messages,
        versions,
        outlook.input_tokens,
        outlook.now,
    )
