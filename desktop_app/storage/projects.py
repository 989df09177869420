"""Projects in SQLite: the project, its pinned facts, its knowledge files, and which
project each chat belongs to (`chats.project_id`; a chat is in one project or none)."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from typing import Any

from desktop_app.context.facts import Fact, FactSource
from desktop_app.context.project import KnowledgeFile, KnowledgeMode, Project
from desktop_app.core.errors import ContextDeskError, ErrorKind
from desktop_app.core.messages import new_id
from desktop_app.storage.db import explained, transaction
from desktop_app.storage.errors import ProjectNotFound

FIELDS = (
    "name",
    "instructions",
    "knowledge_budget",
    "knowledge_mode",
    "model",
    "workspace",
    "defaults",  # settings new chats of the project start with (JSON: field → value)
    "spend_cap",  # the most its chats may cost together; 0: no cap
)


@explained
def create(db: sqlite3.Connection, name: str, **fields: Any) -> Project:
    name = name.strip()
    if not name:
        raise ContextDeskError("A project needs a name", "Give it one.", kind=ErrorKind.USAGE)
    now = time.time()
    project = Project(new_id("proj"), name, created_at=now)
    with transaction(db):
        db.execute(
            "INSERT INTO projects (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)",
            (project.id, name, now, now),
        )
    return update(db, project.id, **fields) if fields else project


@explained
def all_projects(db: sqlite3.Connection) -> list[Project]:
    rows = db.execute("SELECT id FROM projects ORDER BY created_at").fetchall()
    return [get(db, row[0]) for row in rows]


@explained
def get(db: sqlite3.Connection, project_id: str) -> Project:
    row = db.execute(
        "SELECT id, name, instructions, knowledge_budget, knowledge_mode, model, workspace, "
        "created_at, defaults, spend_cap FROM projects WHERE id = ?",
        (project_id,),
    ).fetchone()
    if row is None:
        raise ProjectNotFound(project_id)
    facts = tuple(
        Fact(
            text,
            tuple(tuple(pair) for pair in json.loads(fields)),
            FactSource(source),
            fact_id,
            created,
            updated,
            bool(pending),
        )
        for fact_id, text, fields, source, created, updated, pending in db.execute(
            "SELECT id, text, fields, source, created_at, updated_at, pending FROM project_facts "
            "WHERE project_id = ? ORDER BY position",
            (project_id,),
        )
    )
    files = tuple(
        KnowledgeFile(name, text, file_id, bool(chosen), added, document, pages)
        for file_id, name, text, chosen, added, document, pages in db.execute(
            "SELECT id, name, text, chosen, added_at, document, pages FROM project_files "
            "WHERE project_id = ? ORDER BY added_at, rowid",
            (project_id,),
        )
    )
    return Project(
        row[0],
        row[1],
        row[2],
        facts,
        files,
        row[3],
        KnowledgeMode(row[4]),
        row[5],
        row[6],
        tuple(sorted(json.loads(row[8]).items())),
        row[7],
        spend_cap=row[9],
    )


@explained
def chat_project_cap(db: sqlite3.Connection, chat_id: str) -> tuple[str, str, float] | None:
    """(id, name, spending cap) of the chat's project, or None when it has none — read
    on every plan of the chat: its facts and files are not read for it."""
    row = db.execute(
        "SELECT p.id, p.name, p.spend_cap FROM chats c JOIN projects p ON p.id = c.project_id "
        "WHERE c.id = ?",
        (chat_id,),
    ).fetchone()
    return (row[0], row[1], row[2]) if row else None


@explained
def find(db: sqlite3.Connection, ref: str) -> Project:
    """A project by its id, a unique prefix of its id, or its name."""
    ref = ref.strip()
    rows = db.execute("SELECT id, name FROM projects").fetchall()
    exact = [r[0] for r in rows if r[0] == ref] or [r[0] for r in rows if r[1] == ref]
    if len(exact) == 1:
        return get(db, exact[0])
    if len(exact) > 1:
        raise ProjectNotFound(ref, "several projects have this name: give its id")
    prefixed = [r[0] for r in rows if ref and r[0].startswith(ref)]
    if len(prefixed) == 1:
        return get(db, prefixed[0])
    raise ProjectNotFound(
        ref, "it matches several projects" if prefixed else "no project has this id or name"
    )


@explained
def update(db: sqlite3.Connection, project_id: str, **fields: Any) -> Project:
    unknown = set(fields) - set(FIELDS)
    if unknown:
        raise ContextDeskError(
            "Unknown project field",
            f"{', '.join(sorted(unknown))}: a project has {', '.join(FIELDS)}.",
            kind=ErrorKind.USAGE,
        )
    project = get(db, project_id)
    if "knowledge_mode" in fields:
        fields["knowledge_mode"] = KnowledgeMode(fields["knowledge_mode"]).value
    budget = fields.get("knowledge_budget", project.knowledge_budget)
    if not 0.0 <= float(budget) <= 1.0:
        raise ContextDeskError(
            "Knowledge budget out of range",
            "The knowledge budget is a share of the window, from 0 to 1 (0.3 is 30%).",
            kind=ErrorKind.USAGE,
        )
    if not 0 <= float(fields.get("spend_cap", 0)) <= 1_000_000:
        raise ContextDeskError(
            "Spending cap out of range",
            "A project's spending cap is from 0 (no cap) to 1,000,000.",
            kind=ErrorKind.USAGE,
        )
    if "name" in fields and not str(fields["name"]).strip():
        raise ContextDeskError("A project needs a name", "Give it one.", kind=ErrorKind.USAGE)
    if "defaults" in fields:
        fields["defaults"] = json.dumps(dict(fields["defaults"]), sort_keys=True)
    with transaction(db):
        for key, value in fields.items():
            db.execute(f"UPDATE projects SET {key} = ? WHERE id = ?", (value, project_id))
        db.execute("UPDATE projects SET updated_at = ? WHERE id = ?", (time.time(), project_id))
    return get(db, project_id)


@explained
def delete(db: sqlite3.Connection, project_id: str) -> None:
    """The project goes; its chats stay, in no project."""
    with transaction(db):
        db.execute("UPDATE chats SET project_id = NULL WHERE project_id = ?", (project_id,))
        db.execute("DELETE FROM projects WHERE id = ?", (project_id,))


@explained
def save_facts(db: sqlite3.Connection, project_id: str, facts: Sequence[Fact]) -> Project:
    with transaction(db):
        db.execute("DELETE FROM project_facts WHERE project_id = ?", (project_id,))
        db.executemany(
            "INSERT INTO project_facts (id, project_id, position, text, fields, source, "
            "created_at, updated_at, pending) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    f.id,
                    project_id,
                    i,
                    f.text,
                    json.dumps([list(p) for p in f.fields]),
                    f.source.value,
                    f.created_at,
                    f.updated_at,
                    int(f.pending),
                )
                for i, f in enumerate(facts)
            ],
        )
        db.execute("UPDATE projects SET updated_at = ? WHERE id = ?", (time.time(), project_id))
    return get(db, project_id)


@explained
def add_file(db: sqlite3.Connection, project_id: str, file: KnowledgeFile) -> Project:
    get(db, project_id)  # exists
    with transaction(db):
        db.execute(
            "INSERT INTO project_files (id, project_id, name, text, chosen, added_at, "
            "document, pages) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                file.id,
                project_id,
                file.name,
                file.text,
                int(file.chosen),
                file.added_at,
                file.document,
                file.pages,
            ),
        )
    return get(db, project_id)


@explained
def remove_file(db: sqlite3.Connection, project_id: str, file_id: str) -> Project:
    with transaction(db):
        db.execute(
            "DELETE FROM project_files WHERE project_id = ? AND id = ?", (project_id, file_id)
        )
    return get(db, project_id)


@explained
def choose_files(db: sqlite3.Connection, project_id: str, chosen: Sequence[str]) -> Project:
    """The files (by id) sent in the `chosen` mode; the others are not."""
    with transaction(db):
        db.execute("UPDATE project_files SET chosen = 0 WHERE project_id = ?", (project_id,))
        db.executemany(
            "UPDATE project_files SET chosen = 1 WHERE project_id = ? AND id = ?",
            [(project_id, file_id) for file_id in chosen],
        )
    return get(db, project_id)


@explained
def chat_project(db: sqlite3.Connection, chat_id: str) -> str | None:
    row = db.execute("SELECT project_id FROM chats WHERE id = ?", (chat_id,)).fetchone()
    return row[0] if row else None


@explained
def move_chat(db: sqlite3.Connection, chat_id: str, project_id: str | None) -> None:
    with transaction(db):
        db.execute("UPDATE chats SET project_id = ? WHERE id = ?", (project_id, chat_id))


@explained
def chats_of(db: sqlite3.Connection, project_id: str) -> list[str]:
    return [
        row[0]
        for row in db.execute(
            "SELECT id FROM chats WHERE project_id = ? AND deleted_at IS NULL "
            "ORDER BY updated_at DESC",
            (project_id,),
        )
    ]
