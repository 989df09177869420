"""Projects as the faces use them (`Engine.projects`): create, change, delete; pin facts
and add knowledge files; move chats in and out; the layers a chat's next request holds;
export and import a whole project. One home for each of these actions.

Moving a chat in or out of a project, and every change to a project, changes only what
the next requests of its chats hold — never a transcript.
"""

from __future__ import annotations

import base64
import json
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from desktop_app.context.facts import Fact, FactSource, offered
from desktop_app.context.project import (
    LAYERS,
    KnowledgeFile,
    KnowledgeMode,
    Project,
)
from desktop_app.core.errors import ContextDeskError, ErrorKind

if TYPE_CHECKING:
    from collections.abc import Sequence

    from desktop_app.chats.chat import Chat, Imported
    from desktop_app.config.prices import Spend
    from desktop_app.context.chat_settings import ContextSettings
    from desktop_app.storage.store import ChatStore


class ProjectsHost(Protocol):
    """`Engine`, as its projects see it (a protocol: no cycle back to the engine)."""

    store: ChatStore

    def chat(self, chat_id: str) -> Chat: ...

    def new_chat(
        self,
        title: str = ...,
        *,
        model: str | None = None,
        system_prompt: str | None = None,
        **overrides: Any,
    ) -> Chat: ...

    def import_bytes(self, raw: bytes, untitled: str = ...) -> Imported: ...

    def starting_settings(self, model: str | None = None, **overrides: Any) -> ContextSettings: ...


EXPORT_FORMAT = "contextdesk.project"
EXPORT_VERSION = 1


class Projects:
    def __init__(self, engine: ProjectsHost) -> None:
        self.engine = engine

    @property
    def _db(self) -> Any:
        return self.engine.store.db

    # -- the projects ---------------------------------------------------------------------

    def new(self, name: str, **fields: Any) -> Project:
        from desktop_app.storage import projects

        return projects.create(self._db, name, **fields)

    def all(self) -> list[Project]:
        from desktop_app.storage import projects

        return projects.all_projects(self._db)

    def find(self, ref: str) -> Project:
        """By id, a unique id prefix, or name."""
        from desktop_app.storage import projects

        return projects.find(self._db, ref)

    def change(self, ref: str, **fields: Any) -> Project:
        from desktop_app.storage import projects

        project = projects.update(self._db, self.find(ref).id, **fields)
        self._changed(project)
        return project

    def set_defaults(self, ref: str, assignments: dict[str, str]) -> Project:
        """What new chats of the project start with: KEY=VALUE as `chat set` takes them
        (keys in PROJECT_DEFAULT_FIELDS); an empty value removes the key. Checked as a
        chat would be, so a bad combination is refused here, not at the next new chat."""
        from desktop_app.chats.names import PROJECT_DEFAULT_FIELDS
        from desktop_app.chats.setting_values import THINKING_FIELDS, thinking_setting
        from desktop_app.config.settings import typed_value
        from desktop_app.context.chat_settings import NAME_LISTS, ContextSettings, names

        project = self.find(ref)
        kinds = asdict(ContextSettings())
        values = dict(project.defaults)
        for key, text in assignments.items():
            name = PROJECT_DEFAULT_FIELDS.get(key)
            if name is None:
                raise ContextDeskError(
                    "Unknown setting",
                    f"{key!r}: a project's chats can start with "
                    f"{', '.join(PROJECT_DEFAULT_FIELDS)}.",
                    kind=ErrorKind.USAGE,
                )
            if not text.strip():
                for field in THINKING_FIELDS if name == "thinking" else (name,):
                    values.pop(field, None)
                continue
            if name == "thinking":
                values.update(thinking_setting(key, text))
                continue
            if name in NAME_LISTS:  # comma-separated, kept as a JSON list
                values[name] = list(names(text) or ())
                continue
            values[name] = typed_value(key, text, type(kinds[name]))
        self.engine.starting_settings(project.model or None, **values)
        return self.change(project.id, defaults=values)

    def delete(self, ref: str) -> Project:
        """The project goes; its chats stay, in no project."""
        from desktop_app.storage import projects

        project = self.find(ref)
        members = projects.chats_of(self._db, project.id)
        projects.delete(self._db, project.id)
        for chat_id in members:
            self.engine.chat(chat_id).plans.settings_changed()
        return project

    def chats(self, ref: str) -> list[str]:
        from desktop_app.storage import projects

        return projects.chats_of(self._db, self.find(ref).id)

    # -- its memory ------------------------------------------------------------------------

    def pin(self, ref: str, text: str, source: FactSource = FactSource.USER) -> Fact:
        """A fact for every chat of the project, sent verbatim in each of their requests."""
        from desktop_app.storage import projects

        text = text.strip()
        if not text:
            raise ContextDeskError("Nothing to pin", "Give the fact's text.", kind=ErrorKind.USAGE)
        project = self.find(ref)
        fact = Fact(text, source=source)
        self._changed(projects.save_facts(self._db, project.id, [*project.facts, fact]))
        return fact

    def suggest(self, ref: str, texts: Sequence[str], source: FactSource) -> list[Fact]:
        """Facts offered for every chat of the project, not sent until the user accepts
        them (an imported project's memory); one it holds already, pinned or offered, is
        not offered again."""
        from desktop_app.storage import projects

        project = self.find(ref)
        new = offered(texts, source, project.facts)
        if new:
            self._changed(projects.save_facts(self._db, project.id, [*project.facts, *new]))
        return new

    def accept(self, ref: str, fact_ref: str, text: str | None = None) -> Fact:
        """A suggested fact of the project pinned (as the user edited it, if they did)."""
        from desktop_app.storage import projects

        project = self.find(ref)
        fact = self._fact(project, fact_ref)
        edited = fact.edited(text.strip()) if text and text.strip() else fact
        accepted = replace(edited, pending=False)
        facts = [accepted if f is fact else f for f in project.facts]
        self._changed(projects.save_facts(self._db, project.id, facts))
        return accepted

    def unpin(self, ref: str, fact_ref: str) -> Fact:
        """Remove a pinned fact of the project, or reject a suggested one."""
        from desktop_app.storage import projects

        project = self.find(ref)
        fact = self._fact(project, fact_ref)
        kept = [f for f in project.facts if f is not fact]
        self._changed(projects.save_facts(self._db, project.id, kept))
        return fact

    @staticmethod
    def _fact(project: Project, fact_ref: str) -> Fact:
        matches = [f for f in project.facts if f.id.startswith(fact_ref)]
        if len(matches) != 1:
            raise ContextDeskError(
                "No such fact",
                f"{fact_ref!r} names no single fact of {project.name}.",
                kind=ErrorKind.NOT_FOUND,
            )
        return matches[0]

    def add_file(self, ref: str, path: Path, *, as_document: bool = False) -> KnowledgeFile:
        """A knowledge file (text — Markdown, code, notes — or a PDF's text), read now and
        kept in the database: the project does not change when the file on disk does. A
        PDF `as_document` is sent as a `document` (Claude reads its pages), its cost
        counted against the knowledge budget as the API counts it."""
        from desktop_app.chats.file_text import text_of
        from desktop_app.chats.given_files import shown_name

        if not (as_document and path.suffix.lower() == ".pdf"):
            return self.add_text(ref, shown_name(path), text_of(path))
        from desktop_app.chats.documents import pdf_document
        from desktop_app.storage import projects
        from desktop_app.tokens.documents import pdf_pages

        project = self.find(ref)
        document = pdf_document(path, lambda _text: 0, 1_000_000)  # (limits: a 1M window)
        source = document.block.raw["source"]
        assert isinstance(source, dict)
        _pages, text = pdf_pages(document.name, base64.b64decode(source["data"]))
        file = KnowledgeFile(document.name, text, document=source["data"], pages=document.pages)
        self._changed(projects.add_file(self._db, project.id, file))
        return file

    def add_text(self, ref: str, name: str, text: str) -> KnowledgeFile:
        """A knowledge file from its text (an imported project's document)."""
        from desktop_app.storage import projects

        project = self.find(ref)
        file = KnowledgeFile(name, text)
        self._changed(projects.add_file(self._db, project.id, file))
        return file

    def remove_file(self, ref: str, file_ref: str) -> None:
        from desktop_app.storage import projects

        project = self.find(ref)
        file = _one_file(project, file_ref)
        self._changed(projects.remove_file(self._db, project.id, file.id))

    def choose_files(self, ref: str, file_refs: list[str]) -> Project:
        """Send these files whole (and no others): the user's choice when all do not fit."""
        from desktop_app.storage import projects

        project = self.find(ref)
        chosen = [_one_file(project, r).id for r in file_refs]
        projects.choose_files(self._db, project.id, chosen)
        return self.change(project.id, knowledge_mode=KnowledgeMode.CHOSEN.value)

    # -- chats ---------------------------------------------------------------------------------

    def project_of(self, chat: Chat) -> Project | None:
        from desktop_app.storage import projects

        project_id = projects.chat_project(self._db, chat.id)
        return projects.get(self._db, project_id) if project_id else None

    def move(self, chat: Chat, ref: str | None) -> Project | None:
        """Into a project (or, with None, out of any): only the next request changes."""
        from desktop_app.storage import projects

        project = self.find(ref) if ref else None
        projects.move_chat(self._db, chat.id, project.id if project else None)
        chat.refresh_info()  # its project is part of what the chat list shows
        chat.plans.settings_changed()
        return project

    def new_chat(self, ref: str, title: str | None = None, **overrides: Any) -> Chat:
        """A chat in the project, starting with the project's model and settings."""
        project = self.find(ref)
        chat = self.engine.new_chat(
            *([title] if title else []),
            model=overrides.pop("model", None) or project.model or None,
            **{**dict(project.defaults), **overrides},
        )
        self.move(chat, project.id)
        return chat

    def set_layer(self, chat: Chat, layer: str, on: bool) -> None:
        """Switch one of the project's layers off (or on again) for this chat only."""
        if layer not in LAYERS:
            raise ContextDeskError(
                "No such layer",
                f"{layer!r}: the layers are {', '.join(LAYERS)}.",
                kind=ErrorKind.USAGE,
            )
        off = self.layers_off(chat)
        off = off - {layer} if on else off | {layer}
        chat.setup.set_settings(replace(chat.settings, project_layers_off=tuple(sorted(off))))

    def layers_off(self, chat: Chat) -> frozenset[str]:
        """The project layers this chat does not send."""
        return frozenset(chat.settings.project_layers_off)

    def pin_from_chat(self, chat: Chat, text: str) -> Fact:
        """ "Pin to project" from a chat: shared by every chat of its project."""
        project = self.project_of(chat)
        if project is None:
            raise ContextDeskError(
                "Not in a project",
                f"“{chat.title}” is in no project: move it into one first.",
                kind=ErrorKind.USAGE,
            )
        return self.pin(project.id, text)

    def accept_to_project(self, chat: Chat, fact_ref: str) -> Fact:
        """A fact the model suggested in a chat, accepted for the whole project."""
        fact = chat.memory.fact(fact_ref)
        pinned = self.pin_from_chat(chat, fact.text)
        chat.memory.unpin(fact)
        return pinned

    def facts_last_sent(self, project: Project) -> dict[str, tuple[str, int, float]]:
        """Fact id → (chat id, request number, time) of the last request of a chat in the
        project that carried it (from the ledger; a fact never sent is not in it)."""
        from desktop_app.storage import ledger, projects

        rendered = {f.id: f.render() for f in project.facts}
        found: dict[str, tuple[str, int, float]] = {}
        for chat_id in projects.chats_of(self._db, project.id):
            sent = ledger.last_sent_with(self._db, chat_id, list(rendered.values()))
            for fact_id, text in rendered.items():
                if text in sent and (fact_id not in found or sent[text][1] > found[fact_id][2]):
                    found[fact_id] = (chat_id, *sent[text])
        return found

    def spend(self, project: Project) -> Spend:
        """What the project's chats cost together, all time (by the price table)."""
        from desktop_app.chats.usage import spend

        return spend(self.engine, chat_ids=self.chats(project.id))  # type: ignore[arg-type]

    def cache_reads(self, project: Project) -> tuple[int, int]:
        """(tokens read from the prompt cache, requests) over every chat of the project, as
        the API reported them: what its shared prefix earns."""
        from desktop_app.storage import ledger, projects

        chats = projects.chats_of(self._db, project.id)
        rows = ledger.usage_groups(self._db, "chat", chat_ids=chats)
        return sum(row[7] for row in rows), sum(row[3] for row in rows)

    # -- export and import -------------------------------------------------------------------

    def export(self, ref: str) -> str:
        """The project — its layers, files and chats — as one documented JSON document."""
        project = self.find(ref)
        data = {
            "format": EXPORT_FORMAT,
            "version": EXPORT_VERSION,
            "project": {
                "name": project.name,
                "instructions": project.instructions,
                "knowledge_budget": project.knowledge_budget,
                "knowledge_mode": project.knowledge_mode.value,
                "model": project.model,
                "workspace": project.workspace,
                "defaults": dict(project.defaults),
                "spend_cap": project.spend_cap,
                "facts": [
                    {"text": f.text, "source": f.source.value, "pending": f.pending}
                    for f in project.facts
                ],
                "files": [
                    {
                        "name": f.name,
                        "text": f.text,
                        "chosen": f.chosen,
                        **({"document": f.document, "pages": f.pages} if f.document else {}),
                    }
                    for f in project.files
                ],
            },
            "chats": [
                json.loads(self.engine.chat(chat_id).export("json"))
                for chat_id in self.chats(project.id)
            ],
        }
        return json.dumps(data, ensure_ascii=False, indent=2)

    def import_json(self, text: str) -> Project:
        """A project export, as a new project with new chats; refused whole if unreadable."""
        from desktop_app.storage import projects

        try:
            data = json.loads(text)
        except ValueError as exc:
            raise _bad(f"it is not JSON ({exc})") from exc
        if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
            raise _bad(f'"format" is not "{EXPORT_FORMAT}"')
        if data.get("version") != EXPORT_VERSION:
            raise _bad(f"version {data.get('version')!r} is not one this ContextDesk reads (1)")
        body = data.get("project")
        if not isinstance(body, dict) or not str(body.get("name", "")).strip():
            raise _bad('"project" needs a name')
        chats = data.get("chats", [])
        if not isinstance(chats, list):
            raise _bad('"chats" must be a list')
        fields = {
            k: body[k]
            for k in (
                "instructions",
                "knowledge_budget",
                "knowledge_mode",
                "model",
                "workspace",
                "defaults",
                "spend_cap",
            )
            if k in body
        }
        if not isinstance(fields.get("spend_cap", 0), int | float):
            raise _bad('"spend_cap" must be a number')
        if "defaults" in fields:  # checked as `set_defaults` would, before anything is made
            fields["defaults"] = self._imported_defaults(fields["defaults"], body.get("model"))
        project = projects.create(self._db, str(body["name"]), **fields)
        try:
            facts = [
                Fact(
                    str(f["text"]),
                    source=FactSource(f.get("source", "user")),
                    pending=f.get("pending") is True,
                )
                for f in body.get("facts", [])
            ]
            projects.save_facts(self._db, project.id, facts)
            for f in body.get("files", []):
                projects.add_file(
                    self._db,
                    project.id,
                    KnowledgeFile(
                        str(f["name"]),
                        str(f["text"]),
                        chosen=bool(f.get("chosen", True)),
                        document=f.get("document") or "",
                        pages=_pages_of(f),
                    ),
                )
            for chat in chats:
                imported = self.engine.import_bytes(json.dumps(chat).encode("utf-8"))
                projects.move_chat(self._db, imported.chat.id, project.id)
        except (KeyError, TypeError, ValueError) as exc:
            projects.delete(self._db, project.id)
            raise _bad(f"a fact, file or chat is malformed ({exc})") from exc
        return projects.get(self._db, project.id)

    def _imported_defaults(self, given: object, model: object) -> dict[str, Any]:
        """An export's `defaults`, if a chat could start with them; else the import is
        refused whole (a bad value would break every new chat of the project)."""
        from desktop_app.chats.names import PROJECT_DEFAULT_FIELDS
        from desktop_app.context.chat_settings import ContextSettings

        if not isinstance(given, dict):
            raise _bad('"defaults" must be an object of settings')
        kinds = asdict(ContextSettings())
        for name, value in given.items():
            if name not in PROJECT_DEFAULT_FIELDS.values():
                raise _bad(f'"defaults" has {name!r}, not a setting a chat starts with')
            wanted = type(kinds[name])
            if wanted is tuple:
                wanted = list  # (names, as JSON has them)
            if type(value) is not wanted and not (wanted is float and type(value) is int):
                raise _bad(f'"defaults.{name}" must be a {wanted.__name__}')
        try:
            self.engine.starting_settings(str(model or "") or None, **given)
        except ContextDeskError as exc:
            raise _bad(f'"defaults" would not make a working chat ({exc.info.message})') from exc
        return dict(given)

    def _changed(self, project: Project) -> None:
        """Its chats plan again with the project as it is now."""
        from desktop_app.storage import projects

        for chat_id in projects.chats_of(self._db, project.id):
            self.engine.chat(chat_id).plans.settings_changed()


def _pages_of(entry: dict[str, Any]) -> int:
    """An exported knowledge file's pages, counted again from its PDF (the knowledge
    budget is charged by them: an export's own number is not trusted); 0 for a text file.
    A document that is not a whole, readable PDF refuses the import (ValueError)."""
    from desktop_app.tokens.documents import pdf_pages

    given = entry.get("document") or ""
    if not given:
        return 0
    name = str(entry.get("name"))
    data = base64.b64decode(given, validate=True) if isinstance(given, str) else b""
    if not data.startswith(b"%PDF-"):
        raise ValueError(f"file {name!r}: its document is not a PDF in base64")
    try:
        pages, _text = pdf_pages(name, data)
    except ContextDeskError as exc:
        raise ValueError(f"file {name!r}: {exc.message}") from exc
    return pages


def _one_file(project: Project, ref: str) -> KnowledgeFile:
    matches = [f for f in project.files if f.id.startswith(ref) or f.name == ref]
    if len(matches) != 1:
        raise ContextDeskError(
            "No such file",
            f"{ref!r} names no single knowledge file of {project.name}.",
            kind=ErrorKind.NOT_FOUND,
        )
    return matches[0]


def _bad(why: str) -> ContextDeskError:
    return ContextDeskError(
        "Not a project export", f"The file cannot be imported: {why}.", kind=ErrorKind.IMPORT
    )
