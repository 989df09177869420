"""Reading stored messages back: their rows and blocks in one pass, and the per-block
token counts kept beside them (schema v13). Writing them is `message_writes.py`'s."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from desktop_app.core.messages import Message
from desktop_app.core.wire import BlockReader, status_from_text, usage_from_api


def read_from(
    db: sqlite3.Connection,
    chat_id: str,
    position: int,
    only: set[str] | None = None,
    counts: dict[str, tuple[int, ...]] | None = None,
) -> list[Message]:
    """The shown messages from a position on (only those in `only`, if given): one pass
    over messages and their blocks in order, each message made as its last block
    arrives — a 100,000-message chat never holds its rows and its messages at once.
    Given `counts`, the per-block token counts kept beside them go there, by id, in the
    same pass (keyed by the messages' own ids: a second read's 100,000 id strings and
    parsed rows were ~20 MB of garbage a long chat's process kept as fragments)."""
    messages: list[Message] = []
    reader = BlockReader()  # stored blocks were valid API JSON when written
    names: dict[str, str] = {}  # a model's name, a stop reason: one string for all
    row: tuple[Any, ...] | None = None
    blocks: list[Any] = []
    rows = db.cursor()
    rows.row_factory = None  # plain tuples: a named row costs a lookup per field
    loads, block = json.loads, reader.block
    kept = ", k.counts" if counts is not None else ", NULL"
    joined = "LEFT JOIN block_counts k ON k.message_id = m.id " if counts is not None else ""
    for found in rows.execute(
        f"SELECT {_COLUMNS}, b.raw{kept} FROM messages m "
        f"LEFT JOIN blocks b ON b.message_id = m.id {joined}"
        "WHERE m.chat_id = ? AND NOT m.deleted AND m.position >= ? "
        "ORDER BY m.position, b.position",
        (chat_id, position),
    ):
        if only is not None and found[0] not in only:
            continue
        if row is None or found[0] != row[0]:
            if row is not None:
                messages.append(_message(row, blocks, names))
            row, blocks = found, []
            if found[10] is not None and counts is not None:  # (the id the message keeps)
                counts[found[0]] = tuple(loads(found[10]))
        if found[9] is not None:
            blocks.append(block(loads(found[9]), "block"))
    if row is not None:
        messages.append(_message(row, blocks, names))
    return messages


_COLUMNS = (  # in the order `_message` reads them
    "m.id, m.role, m.status, m.stop_reason, m.usage, m.created_at, m.revision, m.model, m.bound_to"
)


def block_counts(db: sqlite3.Connection, chat_id: str) -> dict[str, tuple[int, ...]]:
    """The per-block token counts kept for this chat's messages, by message id
    (`ChatStore.keep_block_counts`; a message whose blocks were written since has none)."""
    return {
        message_id: tuple(json.loads(counts))
        for message_id, counts in db.execute(
            "SELECT k.message_id, k.counts FROM block_counts k "
            "JOIN messages m ON m.id = k.message_id WHERE m.chat_id = ?",
            (chat_id,),
        )
    }


def _message(row: tuple[Any, ...], blocks: list[Any], shared: dict[str, str]) -> Message:
    """A stored message (`row`: the `_COLUMNS`); `shared` keeps one string for what many
    messages repeat (the model's name, the stop reason) across one read."""
    message_id, role, status, stop_reason, usage, created_at, revision, model, bound_to = row[:9]
    return Message(
        role="user" if role == "user" else "assistant",
        blocks=tuple(blocks),
        id=message_id,
        status=status_from_text(status),
        stop_reason=None if stop_reason is None else shared.setdefault(stop_reason, stop_reason),
        usage=usage_from_api(json.loads(usage)) if usage else None,
        created_at=created_at,
        revision=revision,
        model=shared.setdefault(model, model),
        bound_to=bound_to,
    )
