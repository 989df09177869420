"""Importing what the user gives: a chat of ours or a Messages API body (one chat), or
another app's export — Claude's, ChatGPT's, Open WebUI's, LibreChat's or SillyTavern's
conversations: a file, its shards, a folder or a zip (storage/foreign) — as many chats,
each with what it holds and what going on with it costs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from desktop_app.context.facts import FactSource
from desktop_app.storage.errors import ImportFailed, ImportStopped

if TYPE_CHECKING:
    from desktop_app.chats.chat import Chat, Imported
    from desktop_app.chats.projects import Projects
    from desktop_app.config.settings import Settings
    from desktop_app.context.chat_settings import ContextSettings
    from desktop_app.core.messages import Message
    from desktop_app.storage.chat_info import ChatInfo
    from desktop_app.storage.foreign import ForeignChat, ForeignProject
    from desktop_app.storage.store import ChatStore
    from desktop_app.tokens.counter import TokenCounter


class Importer(Protocol):
    """`Engine`, as importing sees it (a protocol: the engine calls this module)."""

    settings: Settings
    store: ChatStore

    @property
    def projects(self) -> Projects: ...

    def import_file(self, path: Path, on_read: Callable[[int], None] | None = None) -> Imported: ...

    def starting_settings(self, model: str | None = None, **overrides: Any) -> ContextSettings: ...

    def chat(self, chat_id: str) -> Chat: ...

    def forget(self, chat_id: str) -> None: ...

    def keep_counts(self, messages: Sequence[Message]) -> int: ...

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
    source_model: str = ""  # the model the source names for it (ChatGPT's model_slug)
    hidden: int = 0  # what the source did not show (tool traffic, …): kept, unshown


@dataclass(frozen=True, slots=True)
class ImportBatch:
    chats: tuple[ImportedChat, ...]
    skipped: int  # conversations imported before (or with nothing to keep)
    source: str  # "contextdesk", "claude", "chatgpt", …
    cancelled: bool = False  # stopped by the user: the chats stored until then stay
    # Where the source's memory of the user went, offered as facts to accept (one line
    # each: "Claude's memory: 4 suggested facts in “Trip to Kyoto”").
    memories: tuple[str, ...] = ()

    @property
    def source_name(self) -> str:
        """The app the chats came from, as people name it."""
        return SOURCE_NAMES.get(self.source, self.source)


def import_path(
    engine: Importer,
    paths: Path | Sequence[Path],
    *,
    chosen: str | None = None,
    model: str | None = None,
    progress: Callable[[str, float], bool] | None = None,
) -> ImportBatch:
    """Import what `paths` hold: another app's export — a file, a folder, a zip, or
    several numbered zips of one export (`chosen`: its format, else detected) — on
    `model` (else Settings'), and chats of ours. Every export is read once to check it
    (a broken file imports nothing), then chat by chat, each stored whole or not at all;
    one already imported is skipped. `progress(words, share)` is told how far it is, and
    stops the import — the chats stored so far stay — by returning False."""
    from desktop_app.storage.foreign.reading import open_export

    paths = [paths] if isinstance(paths, Path) else list(paths)
    opened = [(path, open_export(path, chosen)) for path in paths]  # (refused: nothing made)
    exports = [export for _, export in opened if export is not None]
    told = progress or (lambda _words, _share: True)
    if not exports:
        ours: list[ImportedChat] = []
        for path, _ in opened:
            try:
                ours.append(_one_of_ours(engine, path, told))
            except ImportStopped:
                return ImportBatch(tuple(ours), 0, "contextdesk", cancelled=True)
        return ImportBatch(tuple(ours), 0, "contextdesk")
    source = next((e.source for e in exports if e.source), "")
    if not source:
        names = ", ".join(e.path.name for e in exports)
        raise ImportFailed("No conversations", f"{names}: the export holds no conversation.")
    total, seen = max(1, sum(e.size for e in exports)), [0]

    def read(n: int) -> None:
        seen[0] += n
        if not told(f"Reading {exports[0].path.name}…", min(1.0, seen[0] / total)):
            raise ImportStopped

    try:
        count = sum(export.check(read) for export in exports)
    except ImportStopped:
        return ImportBatch((), 0, source, cancelled=True)
    # Our own chats beside the export, once every export is known to be readable.
    ours = [_one_of_ours(engine, path, told) for path, export in opened if export is None]
    run = _Run(engine, model or engine.settings.model, [e.path for e in exports])
    run.made += ours
    for export in exports:
        for foreign in export.chats():
            done = len(run.made) - len(ours) + run.skipped
            if not told(f"Importing {done + 1:,} of {count:,} chats…", done / max(1, count)):
                return ImportBatch(tuple(run.made), run.skipped, source, cancelled=True)
            run.store(foreign)
    told("Bringing what it remembers…", 1.0)
    remembered = run.memories() if len(run.made) > len(ours) else ()
    return ImportBatch(tuple(run.made), run.skipped, source, memories=remembered)


def _one_of_ours(engine: Importer, path: Path, told: Callable[[str, float], bool]) -> ImportedChat:
    """A chat of ours from `path`, read as it goes: `told` how far (~90 MB at 100,000
    messages), and it may stop it — then nothing of it is stored."""
    seen = [0]
    try:
        size = max(1, path.stat().st_size)
    except OSError:  # (not there, not readable: reading it says so, as it should)
        size = 1

    def read(n: int) -> None:
        seen[0] += n
        if not told(f"Reading {path.name}…", min(1.0, seen[0] / size)):
            raise ImportStopped

    single = engine.import_file(path, read)
    told(f"Counting the tokens of “{single.chat.title}”…", 1.0)
    history = single.chat.messages()
    described = _described(single.chat, single.repairs, single.chat.info.message_count, 0, history)
    # The counts describing it made are kept: opening it next does not count it all
    # again (~9 s at 100,000 messages). (Another app's export forgets them instead.)
    engine.keep_counts(history)
    return described


class _Run:
    """One import of one or more exports: the chats stored so far, the projects made for
    them, and the newest chat outside projects (where the source's memory is offered)."""

    def __init__(self, engine: Importer, model: str, paths: list[Path]) -> None:
        self.engine = engine
        self.model = model
        self.settings = engine.starting_settings(model)
        self.paths = paths
        self.made: list[ImportedChat] = []
        self.skipped = 0
        self.homes: dict[str, str] = {}  # the source's project id → ours
        self.newest: tuple[float, str] | None = None  # (its last message's time, its id)
        self._projects: dict[str, ForeignProject] | None = None

    def store(self, foreign: ForeignChat) -> None:
        from desktop_app.storage.foreign.tree import store_foreign

        engine = self.engine
        stored = store_foreign(engine.store, foreign, self.model, self.settings)
        if stored is None:
            self.skipped += 1
            return
        chat = engine.chat(stored.chat.id)  # (forgotten once described: see below)
        home = self.project(foreign.project) if foreign.project else None
        if home is not None:
            engine.projects.move(chat, home)
        history = chat.messages()
        last = history[-1].created_at if history else 0.0
        if home is None and history and (self.newest is None or last > self.newest[0]):
            self.newest = (last, chat.id)
        described = _described(chat, stored.report, stored.messages, stored.versions, history)
        self.made.append(replace(described, source_model=foreign.model, hidden=stored.hidden))
        # Its planner, its plan and its counts: memory stays flat over thousands of chats.
        engine.counter.forget(history)
        engine.forget(chat.id)

    def project(self, source_id: str) -> str | None:
        """Ours for the source's project (made when first needed), None when the export
        does not have it."""
        from desktop_app.storage.foreign.reading import read_projects

        if source_id not in self.homes:
            if self._projects is None:  # (read across every zip: any may hold projects.json)
                self._projects = {p.source_id: p for x in self.paths for p in read_projects(x)}
            home = _project_for(self.engine, self._projects.get(source_id))
            if home is None:
                return None
            self.homes[source_id] = home
        return self.homes[source_id]

    def memories(self) -> tuple[str, ...]:
        """The export's memory of the user (Claude's `memories.json`), offered as facts
        to accept or reject — never pinned by the import: a project's memory in the
        project (made for it, if no chat of it came), the rest in the newest chat outside
        projects, where the user is likeliest to go on. What went where, a line each."""
        from desktop_app.storage.foreign.reading import read_memories

        said: list[str] = []
        for path in self.paths:
            memory = read_memories(path)
            for source_id, facts in memory.projects:
                home = self.project(source_id)
                if home is None:
                    said.append(f"A project's memory ({len(facts)} facts): its project is missing")
                    continue
                new = self.engine.projects.suggest(home, facts, FactSource.IMPORT)
                name = self.engine.projects.find(home).name
                said.append(f"Project “{name}”: {_facts(len(new))} from its memory")
            if memory.general:
                said.append(self._general(memory.general))
        return tuple(said)

    def _general(self, facts: tuple[str, ...]) -> str:
        if self.newest is None:
            return (
                f"Claude's memory ({len(facts)} facts): no chat outside a project was "
                "imported to offer them in"
            )
        chat = self.engine.chat(self.newest[1])
        before = len(chat.state.facts)
        chat.memory.suggest(facts, FactSource.IMPORT)
        count = len(chat.state.facts) - before
        self.engine.forget(chat.id)
        return f"Claude's memory: {_facts(count)} in “{chat.title}”"


def _facts(count: int) -> str:
    return f"{count} suggested fact{'s' if count != 1 else ''}"


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
