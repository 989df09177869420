"""Search across every message: an SQLite FTS5 index kept in step with the blocks by
triggers, so every write that changes a message's text — an append, a streamed
checkpoint, a deletion — changes the index in the same transaction.

The index is a trigram one: it finds any piece of three or more characters inside a
word (a file name, part of an identifier, a phrase in Chinese), as the search boxes of
the apps our users know do, not only whole words. Shorter queries match titles, and
messages only when they are Chinese, Japanese or Korean (two such characters are a word).

Rows are keyed through `search_keys`, a table with an INTEGER PRIMARY KEY: the blocks
table's own rowids may change when SQLite vacuums it (a backup is a vacuumed copy), and
an index keyed by them would then point at the wrong blocks.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from dataclasses import dataclass

MIN_QUERY = 3  # a trigram index matches nothing shorter


def _searchable_text(row: str) -> str:
    """SQL for the text of the block in `row` (`new` in a trigger, `b` in a query): a
    text block's text, a tool result's text parts, a tool call's arguments as JSON.
    Thinking is left out: it is the model's scratch work, not the conversation."""
    return f"""CASE {row}.type
        WHEN 'text' THEN json_extract({row}.raw, '$.text')
        WHEN 'tool_use' THEN json_extract({row}.raw, '$.input')
        WHEN 'tool_result' THEN CASE json_type({row}.raw, '$.content')
            WHEN 'text' THEN json_extract({row}.raw, '$.content')
            WHEN 'array' THEN (SELECT group_concat(json_extract(value, '$.text'), char(10))
                FROM json_each({row}.raw, '$.content')
                WHERE json_extract(value, '$.type') = 'text')
            END
        END"""


def create_index(db: sqlite3.Connection) -> None:
    """The index, its triggers, and every block already stored (a database upgraded
    from an older ContextDesk is searchable at once)."""
    statements = [
        "CREATE TABLE search_keys (id INTEGER PRIMARY KEY, message_id TEXT NOT NULL, "
        "position INTEGER NOT NULL, UNIQUE (message_id, position))",
        "CREATE VIRTUAL TABLE message_search USING fts5("
        "text, chat_id, message_id UNINDEXED, tokenize = 'trigram')",
        f"""CREATE TRIGGER block_indexed AFTER INSERT ON blocks
            WHEN COALESCE({_searchable_text("new")}, '') != '' BEGIN
            INSERT INTO search_keys (message_id, position) VALUES (new.message_id, new.position);
            INSERT INTO message_search (rowid, text, chat_id, message_id)
                SELECT last_insert_rowid(), {_searchable_text("new")}, m.chat_id, m.id
                FROM messages m WHERE m.id = new.message_id;
        END""",
        """CREATE TRIGGER block_unindexed AFTER DELETE ON blocks BEGIN
            DELETE FROM message_search WHERE rowid = (SELECT id FROM search_keys
                WHERE message_id = old.message_id AND position = old.position);
            DELETE FROM search_keys
                WHERE message_id = old.message_id AND position = old.position;
        END""",
        f"""INSERT INTO search_keys (message_id, position)
            SELECT b.message_id, b.position FROM blocks b
            WHERE COALESCE({_searchable_text("b")}, '') != ''""",
        f"""INSERT INTO message_search (rowid, text, chat_id, message_id)
            SELECT k.id, {_searchable_text("b")}, m.chat_id, m.id FROM search_keys k
            JOIN blocks b ON b.message_id = k.message_id AND b.position = k.position
            JOIN messages m ON m.id = k.message_id""",
    ]
    for statement in statements:
        db.execute(statement)


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One message that contains the query (or, with no `message_id`, a chat whose title
    does)."""

    chat_id: str
    chat_title: str
    message_id: str | None
    position: int  # the message's place in its chat (-1 for a title)
    snippet: str  # the text around the match, the match between MARK_START and MARK_END


MARK_START, MARK_END = "\u27e6", "\u27e7"  # ⟦ ⟧: never in the snippet's own markup


def search(
    db: sqlite3.Connection, query: str, *, chat_id: str | None = None, limit: int = 200
) -> list[SearchHit]:
    """Chats whose title contains `query`, then the messages that do: across every chat
    the newest first, within one chat (`chat_id`) in their order. The trash and hidden
    messages are left out. Searching all chats reads at most `limit` matches, newest
    first, so a query found in every other message still answers at once."""
    query = query.strip()
    if not query:
        return []
    hits = _titles(db, query, chat_id, limit)
    text = '"' + query.replace('"', '""') + '"'  # the query as typed, not FTS syntax
    in_chat = f'chat_id : "{chat_id.replace(chr(34), "")}"' if chat_id else ""
    if len(query) >= MIN_QUERY:
        match, extra = " AND ".join(filter(None, [f"text : {text}", in_chat])), ""
    elif any(unicodedata.east_asian_width(ch) in "WF" for ch in query):
        # Two Chinese or Japanese characters make a word, too short for the index: those
        # rows are read and compared (within a chat the index still picks the chat's rows).
        match, extra = in_chat, "s.text LIKE ? ESCAPE '\\'"
    else:
        return hits
    where = " AND ".join(
        filter(
            None,
            [match and "message_search MATCH ?", extra, "NOT m.deleted", "c.deleted_at IS NULL"],
        )
    )
    args = [a for a in (match, extra and f"%{_like_escaped(query)}%") if a]
    order = "m.position" if chat_id else "s.rowid DESC"  # newest first across chats
    rows = db.execute(
        f"""SELECT c.id, c.title, m.id AS message_id, m.position, s.text
            FROM message_search s
            JOIN messages m ON m.id = s.message_id
            JOIN chats c ON c.id = m.chat_id
            WHERE {where} ORDER BY {order} LIMIT ?""",
        (*args, limit),
    )
    seen: set[str] = set()  # a message with two matching blocks is one hit
    for r in rows:
        if r["message_id"] not in seen:
            seen.add(r["message_id"])
            hits.append(
                SearchHit(
                    r["id"], r["title"], r["message_id"], r["position"], snippet(r["text"], query)
                )
            )
    return hits


def snippet(text: str, query: str, around: int = 60) -> str:
    """The text around the first match, the match marked. (FTS5's own `snippet()` counts
    trigrams, not words, and cuts the match itself short.)"""
    found = re.search(re.escape(query), text, re.IGNORECASE)
    if found is None:  # the index matched what Python's case folding does not
        return text[: 2 * around]
    start, end = found.span()
    before = text[max(0, start - around) : start]
    after = text[end : end + around]
    return (
        ("…" if start > around else "")
        + before
        + MARK_START
        + text[start:end]
        + MARK_END
        + after
        + ("…" if end + around < len(text) else "")
    )


def _titles(db: sqlite3.Connection, query: str, chat_id: str | None, limit: int) -> list[SearchHit]:
    in_chat, args = ("AND id = ?", (chat_id,)) if chat_id else ("", ())
    return [
        SearchHit(r["id"], r["title"], None, -1, r["title"])
        for r in db.execute(
            f"SELECT id, title FROM chats WHERE deleted_at IS NULL {in_chat} "
            "AND instr(lower(title), lower(?)) ORDER BY updated_at DESC LIMIT ?",
            (*args, query, limit),
        )
    ]


def _like_escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
