"""`contextdesk project …`: projects — memory shared across chats — from the terminal."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_app.chats.names import PROJECT_DEFAULT_FIELDS
from desktop_app.core.errors import ContextDeskError, ErrorKind, shown_path

if TYPE_CHECKING:
    from desktop_app.chats.engine import Engine
    from desktop_app.context.project import Project

SETTABLE = {
    "name": "name",
    "instructions": "instructions",
    "budget": "knowledge_budget",
    "knowledge": "knowledge_mode",
    "model": "model",
    "workspace": "workspace",
}


def add_parser(sub: Any) -> None:
    project = sub.add_parser(
        "project", help="projects: instructions, facts and files shared by their chats"
    ).add_subparsers(dest="project_command", metavar="ACTION", required=True)
    new = project.add_parser("new", help="create a project; prints its id")
    new.add_argument("name")
    new.add_argument("--instructions", default="")
    listing = project.add_parser("list", help="every project")
    listing.add_argument("--json", action="store_true")
    show = project.add_parser("show", help="a project: its layers, files and chats")
    show.add_argument("project")
    show.add_argument("--json", action="store_true")
    change = project.add_parser(
        "set",
        help="change a project: " + ", ".join(f"{k}=…" for k in SETTABLE) + ", or what its "
        "new chats start with (max_tokens=…, thinking=…, …)",
        description="budget: the share of a chat's window the knowledge may take (0.3); "
        "knowledge: whole, chosen or on_demand. New chats of the project start with "
        + ", ".join(PROJECT_DEFAULT_FIELDS)
        + " when set (KEY= with no value goes back to Settings').",
    )
    change.add_argument("project")
    change.add_argument("pairs", nargs="+", metavar="KEY=VALUE")
    delete = project.add_parser("delete", help="delete a project (its chats stay, in none)")
    delete.add_argument("project")
    pin = project.add_parser("pin", help="pin a fact for every chat of the project")
    pin.add_argument("project")
    pin.add_argument("text")
    unpin = project.add_parser("unpin", help="remove a project fact")
    unpin.add_argument("project")
    unpin.add_argument("fact_id")
    add_file = project.add_parser("add-file", help="add a knowledge file (text)")
    add_file.add_argument("project")
    add_file.add_argument("file", type=Path)
    remove_file = project.add_parser("remove-file", help="remove a knowledge file")
    remove_file.add_argument("project")
    remove_file.add_argument("file", help="its id, an id prefix, or its name")
    choose = project.add_parser("choose", help="send only these files (when all do not fit)")
    choose.add_argument("project")
    choose.add_argument("files", nargs="+")
    export = project.add_parser("export", help="the project, its files and chats, as JSON")
    export.add_argument("project")
    export.add_argument("-o", "--output", type=Path)
    importing = project.add_parser("import", help="import a project export; prints its id")
    importing.add_argument("file", type=Path)


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
        from desktop_app.cli import key_values

        fields, defaults = {}, {}
        for key, value in key_values(args.pairs).items():
            if key in PROJECT_DEFAULT_FIELDS:
                defaults[key] = value
            elif key in SETTABLE:
                fields[SETTABLE[key]] = float(value) if key == "budget" else value
            else:
                raise ContextDeskError(
                    "Unknown key",
                    f"{key!r}: a project has {', '.join(SETTABLE)}; its new chats start "
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
        print(f"Unpinned: {projects.unpin(args.project, args.fact_id).text}")
    elif command == "add-file":
        added = projects.add_file(args.project, args.file)
        print(f"Added {added.name} ({added.id})")
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
        from desktop_app.chats.given_files import read_given_file
        from desktop_app.storage.exchange import MAX_IMPORT_BYTES

        try:
            text = read_given_file(args.file, MAX_IMPORT_BYTES).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ContextDeskError(
                "Not a project file", f"{shown_path(args.file)} is not UTF-8 text: {exc}."
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
                    "facts": [{"id": f.id, "text": f.text} for f in project.facts],
                    "files": [
                        {"id": f.id, "name": f.name, "tokens": count(f.text), "chosen": f.chosen}
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
        print(f"  fact {fact.id}: {fact.text}{sent}")
    budget = f"{project.knowledge_budget:.0%} of a chat's window"
    print(f"Knowledge ({project.knowledge_mode.value}, budget {budget}):")
    for file in project.files:
        mark = "" if file.chosen else "  (not chosen)"
        print(f"  {file.id}  {file.name}  ≈{count(file.text):,} tokens{mark}")
    chats = engine.projects.chats(project.id)
    print(f"Chats: {len(chats)}" + "".join(f"\n  {c}" for c in chats))
    read, requests = engine.projects.cache_reads(project)
    print(f"Read from the prompt cache across its chats: {read:,} tokens in {requests:,} requests")
