"""A chat's context state — pinned facts, summaries, exclusions, cleared results, the
compaction breaker — read and written as one value (`context.state.ContextState`); and
the token counter's calibration factors (the tokens layer's `CalibrationStore` port).

Separate from `store.py` (whose `ChatStore` delegates here) because the context state
lives in tables of its own (`facts`, `summaries`, `context_state`) and changes for other
reasons than the messages: a compaction's summary and the window it moves are stored
together, in one transaction, apart from any message write.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from desktop_app.context.facts import Fact, FactSource
from desktop_app.context.state import Breaker, ContextState, Summary
from desktop_app.storage.branch_rows import off_branch
from desktop_app.storage.chat_rows import chat, touch, writing


def context_state(db: sqlite3.Connection, chat_id: str) -> ContextState:
    info = chat(db, chat_id)
    facts = tuple(
        Fact(
            text=r["text"],
            fields=tuple(tuple(pair) for pair in json.loads(r["fields"])),
            source=FactSource(r["source"]),
            id=r["id"],
            created_at=r["created_at"],
            updated_at=r["updated_at"],
            pending=bool(r["pending"]),
        )
        for r in db.execute("SELECT * FROM facts WHERE chat_id = ? ORDER BY position", (chat_id,))
    )
    summaries = tuple(
        Summary(
            number=r["number"],
            covers=tuple(json.loads(r["covers"])),
            text=r["text"],
            model=r["model"],
            instructions=r["instructions"],
            replaces=r["replaces"],
            warnings=tuple(json.loads(r["warnings"])),
            id=r["id"],
            created_at=r["created_at"],
            edited=bool(r["edited"]),
            undone=bool(r["undone"]),
        )
        for r in db.execute("SELECT * FROM summaries WHERE chat_id = ? ORDER BY number", (chat_id,))
    )
    row = db.execute("SELECT * FROM context_state WHERE chat_id = ?", (chat_id,)).fetchone()
    return ContextState(
        facts=facts,
        summaries=summaries,
        excluded_messages=frozenset(json.loads(row["excluded_messages"])),
        excluded_blocks=frozenset(tuple(pair) for pair in json.loads(row["excluded_blocks"])),
        cleared_results=frozenset(json.loads(row["cleared_results"])),
        breaker=Breaker(
            row["breaker_failures"], bool(row["breaker_paused"]), row["breaker_reason"]
        ),
        off_branch=off_branch(db, info) if summaries else frozenset(),
    )


def save_context_state(db: sqlite3.Connection, chat_id: str, state: ContextState) -> None:
    """Facts, summaries, exclusions and the breaker, in one transaction: a compaction's
    summary and the window it moves are stored together or not at all."""
    chat(db, chat_id)
    with writing(db):
        write_context_state(db, chat_id, state)
        touch(db, chat_id)


def write_context_state(db: sqlite3.Connection, chat_id: str, state: ContextState) -> None:
    """The whole context state (inside the caller's `writing`)."""
    save_facts(db, chat_id, state.facts)
    db.execute("DELETE FROM summaries WHERE chat_id = ?", (chat_id,))
    db.executemany(
        "INSERT INTO summaries (id, chat_id, number, covers, text, model, instructions, replaces, "
        "warnings, edited, undone, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                s.id,
                chat_id,
                s.number,
                json.dumps(list(s.covers)),
                s.text,
                s.model,
                s.instructions,
                s.replaces,
                json.dumps(list(s.warnings)),
                int(s.edited),
                int(s.undone),
                s.created_at,
            )
            for s in state.summaries
        ],
    )
    db.execute(
        "UPDATE context_state SET excluded_messages = ?, excluded_blocks = ?, cleared_results = ?, "
        "breaker_failures = ?, breaker_paused = ?, breaker_reason = ? WHERE chat_id = ?",
        (
            json.dumps(sorted(state.excluded_messages)),
            json.dumps(sorted(state.excluded_blocks)),
            json.dumps(sorted(state.cleared_results)),
            state.breaker.failures,
            int(state.breaker.paused),
            state.breaker.reason,
            chat_id,
        ),
    )


def save_facts(db: sqlite3.Connection, chat_id: str, facts: Sequence[Fact]) -> None:
    """The chat's facts, in this order (inside the caller's `writing`)."""
    db.execute("DELETE FROM facts WHERE chat_id = ?", (chat_id,))
    db.executemany(
        "INSERT INTO facts (id, chat_id, position, text, fields, source, pending, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                f.id,
                chat_id,
                i,
                f.text,
                json.dumps([list(p) for p in f.fields]),
                f.source.value,
                int(f.pending),
                f.created_at,
                f.updated_at,
            )
            for i, f in enumerate(facts)
        ],
    )


# -- calibration (the tokens layer's CalibrationStore port) ----------------------------------


def load_calibration(db: sqlite3.Connection) -> dict[str, float]:
    return {r["model"]: r["factor"] for r in db.execute("SELECT model, factor FROM calibration")}


def save_calibration(db: sqlite3.Connection, factors: dict[str, float]) -> None:
    with writing(db):
        db.executemany(
            "INSERT INTO calibration (model, factor) VALUES (?, ?) "
            "ON CONFLICT(model) DO UPDATE SET factor = excluded.factor",
            list(factors.items()),
        )
