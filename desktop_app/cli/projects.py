"""`contextdesk project …`: projects — memory shared across chats — from the terminal."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from desktop_app import said
from desktop_app.chats import PROJECT_DEFAULT_FIELDS, pages_said
from desktop_app.cli.arguments import key_values
from desktop_app.cli.grammar import PROJECT_KEYS
from desktop_app.core.errors import ContextDeskError, ErrorKind, shown_path

if TYPE_CHECKING:
    from desktop_app.chats import Engine
    from desktop_app.context.project import Project


def cmd_project(engine: Engine, args: argparse.Namespace) -> int:
    projects = engine.projects
    command = args.project_command
    if command == "new":
        print(projects.new(args.name, instructions=args.instructions).id)
    elif command == "list":
        everything = projects.all()
        if args.json:
            print(json.dumps([_summary(engine, p) for p in everything], indent=2))
        for p in [] if args.json else everything:
            print(f"{p.id}  {len(projects.chats(p.id)):>3} chats  {p.name}")
    elif command == "show":
        _show(engine, projects.find(args.project), args.json)
    elif command == "set":
        fields, defaults = {}, {}
        for key, value in key_values(args.pairs).items():
            if key in PROJECT_DEFAULT_FIELDS:
                defaults[key] = value
            elif key in PROJECT_KEYS:
                numeric = key in ("budget", "spend_cap")
                fields[PROJECT_KEYS[key]] = _number(key, value) if numeric else value
            else:
                raise ContextDeskError(
                    "Unknown key",
                    f"{key!r}: a project has {', '.join(PROJECT_KEYS)}; its new chats start "
                    f"with {', '.join(PROJECT_DEFAULT_FIELDS)} (an empty value: Settings').",
                    kind=ErrorKind.USAGE,
                )
        if fields:  # first: the model the defaults are checked against may change
            projects.change(args.project, **fields)
        if defaults:
            projects.set_defaults(args.project, defaults)
    elif command == "delete":
        gone = projects.delete(args.project)
        print(f"Deleted {gone.name}; its chats are in no project now.")
    elif command == "pin":
        print(projects.pin(args.project, args.text).id)
    elif command == "unpin":
        fact = projects.unpin(args.project, args.fact_id)
        print(f"{'Rejected' if fact.pending else 'Unpinned'}: {fact.text}")
    elif command == "accept":
        print(f"Pinned: {projects.accept(args.project, args.fact_id, args.text).text}")
    elif command == "add-file":
        added = projects.add_file(args.project, args.file, as_document=args.as_ == "document")
        how = f", a document of {pages_said(added.pages)}" if added.document else ""
        print(f"Added {added.name} ({added.id}{how})")
    elif command == "remove-file":
        projects.remove_file(args.project, args.file)
    elif command == "choose":
        projects.choose_files(args.project, args.files)
    elif command == "export":
        text = projects.export(args.project)
        if args.output:
            args.output.write_text(text, encoding="utf-8")
        else:
            print(text)
    elif command == "import":
        from desktop_app.chats import read_given_file
        from desktop_app.storage.exchange import MAX_IMPORT_BYTES

        try:
            text = read_given_file(args.file, MAX_IMPORT_BYTES).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ContextDeskError(
                "Not a project file",
                f"{shown_path(args.file)} is not UTF-8 text: {exc}.",
                kind=ErrorKind.IMPORT,
            ) from exc
        print(projects.import_json(text).id)
    return 0


def _summary(engine: Engine, project: Project) -> dict[str, Any]:
    return {
        "id": project.id,
        "name": project.name,
        "chats": engine.projects.chats(project.id),
        "facts": len(project.facts),
        "files": len(project.files),
    }


def _show(engine: Engine, project: Project, as_json: bool) -> None:
    count = engine.counter.text
    if as_json:
        print(
            json.dumps(
                {
                    **_summary(engine, project),
                    "instructions": project.instructions,
                    "knowledge_budget": project.knowledge_budget,
                    "knowledge_mode": project.knowledge_mode.value,
                    "model": project.model,
                    "workspace": project.workspace,
                    "new_chats_start_with": dict(project.defaults),
                    "cache_read_tokens": engine.projects.cache_reads(project)[0],
                    "facts": [
                        {"id": f.id, "text": f.text, "pending": f.pending} for f in project.facts
                    ],
                    "files": [
                        {
                            "id": f.id,
                            "name": f.name,
                            "tokens": f.tokens(count),  # a document's: its pages too
                            "chosen": f.chosen,
                            "pages": f.pages if f.document else None,  # None: sent as text
                        }
                        for f in project.files
                    ],
                },
                ensure_ascii=False,
                indent=2,
            )
        )
        return
    print(f"{project.name}  ({project.id})")
    print(f"Instructions: {project.instructions or '(none)'}")
    starts = [f"model={project.model}"] if project.model else []
    key_of = {name: key for key, name in PROJECT_DEFAULT_FIELDS.items()}
    starts += [f"{key_of.get(name, name)}={value}" for name, value in project.defaults]
    print(f"New chats start with: {', '.join(starts) or 'Settings’ defaults'}")
    last = engine.projects.facts_last_sent(project)
    for fact in project.facts:
        sent = (
            f"  [last sent: chat {last[fact.id][0]}, request #{last[fact.id][1]}]"
            if fact.id in last
            else ""
        )
        waiting = f"  [suggested by {said.fact_author(fact)}, not yet accepted]"
        print(f"  fact {fact.id}: {fact.text}{waiting if fact.pending else sent}")
    budget = f"{project.knowledge_budget:.0%} of a chat's window"
    print(f"Knowledge ({project.knowledge_mode.value}, budget {budget}):")
    for file in project.files:
        mark = "" if file.chosen else "  (not chosen)"
        kind = f", a document of {pages_said(file.pages)}" if file.document else ""
        print(f"  {file.id}  {file.name}  ≈{file.tokens(count):,} tokens{kind}{mark}")
    chats = engine.projects.chats(project.id)
    print(f"Chats: {len(chats)}" + "".join(f"\n  {c}" for c in chats))
    read, requests = engine.projects.cache_reads(project)
    print(f"Read from the prompt cache across its chats: {read:,} tokens in {requests:,} requests")


def _number(key: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ContextDeskError(
            "Not a number", f"{key}={text!r}: give a number", kind=ErrorKind.USAGE
        ) from None
