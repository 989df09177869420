"""Search across every message: an SQLite FTS5 index the store writes in the same
transaction as the blocks it indexes (`index_blocks`, `unindex_message`), so it never
drifts from them. A hit is always checked against its message as stored (and dropped if
the message was deleted another way, e.g. with its chat).

The index is a trigram one: it finds any piece of three or more characters inside a
word (a file name, part of an identifier, a phrase in Chinese), as the search boxes of
the apps our users know do, not only whole words. Shorter queries match titles, and
messages only when they are Chinese, Japanese or Korean (two such characters are a word).

Rows are keyed through `search_keys`, a table with an INTEGER PRIMARY KEY: the blocks
table's own rowids may change when SQLite vacuums it (a backup is a vacuumed copy), and
an index keyed by them would then point at the wrong blocks. Writes are batched by the
store, not made by triggers: FTS5 flushes its buffer at every statement a trigger runs,
which made a 10,000-message import 5× slower. The index holds no copy of the text
(contentless) and a short chat key, not the id: half the size it had with both.

A search is bounded: the query is cut to `MAX_QUERY_CHARS` (a phrase's cost grows with
its length times the text's: 5,000 characters over a long run of one letter took 13 s),
control characters are spaces, and it stops at `TIME_BUDGET_S`, keeping what it found.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
import unicodedata
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

MIN_QUERY = 3  # a trigram index matches nothing shorter
MAX_QUERY_CHARS = 256  # longer is a paste, not a search (≈0.2 s over 100,000 letters)
TIME_BUDGET_S = 1.5


def searchable_text(block: dict[str, Any]) -> str:
    """What of a block (as API JSON) is searched: a text block's text, a tool result's
    text parts, a tool call's arguments as JSON. Thinking is left out: it is the
    model's scratch work, not the conversation."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text") or "")
    if kind == "tool_use":
        return json.dumps(block.get("input") or {}, ensure_ascii=False)
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "\n".join(
                str(part.get("text") or "")
                for part in content
                if isinstance(part, dict) and part.get("type") == "text"
            )
    return ""


def chat_key(chat_id: str) -> str:
    """A short token for the chat, indexed beside the text: searching one chat then
    intersects two lists in the index instead of scanning. Fenced, so it matches only
    whole; a collision costs nothing but a row the exact `chat_id` test drops."""
    return f"|{zlib.crc32(chat_id.encode()):08x}|"


def create_index(db: sqlite3.Connection) -> None:
    """The index, and every block already stored in it (a database upgraded from an
    older ContextDesk is searchable at once). Contentless: the text is in `blocks`
    already; a hit's text is read from there."""
    db.execute(
        "CREATE TABLE search_keys (id INTEGER PRIMARY KEY, message_id TEXT NOT NULL, "
        "position INTEGER NOT NULL, UNIQUE (message_id, position))"
    )
    db.execute(
        "CREATE VIRTUAL TABLE message_search USING fts5("
        "text, chat_key, content = '', columnsize = 0, tokenize = 'trigram')"
    )
    rows = db.execute(
        "SELECT b.message_id, b.position, m.chat_id, b.raw FROM blocks b "
        "JOIN messages m ON m.id = b.message_id"
    )
    index_blocks(db, ((r[0], r[1], r[2], json.loads(r[3])) for r in rows))


# Bytes of new index entries FTS5 keeps in memory before it writes a segment (its
# `hashsize` option, sqlite/ext/fts5/fts5_config.c; default 1 MB). Memory only while a
# large write is under way: a turn's few blocks never come near it.
INDEX_BUFFER = 16 * 1024 * 1024


def set_buffer(db: sqlite3.Connection) -> None:
    """Store the index's buffer size in its own configuration (it persists)."""
    db.execute(
        "INSERT INTO message_search (message_search, rank) VALUES ('hashsize', ?)",
        (INDEX_BUFFER,),
    )


# FTS5 merges an index's segments inside the write that adds one: at 100,000 messages
# that was 0.5 s, in the user's own message, every few Sends (a turn's tiny writes reach
# `crisismerge`, 16 segments on a level, long before `automerge` has work to do, and the
# crisis merge takes the big segments an import left on that level with it). So writes
# merge nothing (`automerge` 0), and `merge_a_little` merges, off the window's thread.
# Past this many segments on a level a write merges them anyway: the bound if no reply
# ever comes to merge (a search reads every segment).
SEGMENTS_BEFORE_A_WRITE_MERGES = 64
PAGES_A_STEP = 16  # ≈ 2 ms a step; the slowest seen 90 ms (100,000 messages, this VM)


def merge_apart(db: sqlite3.Connection) -> None:
    """Store (it persists) that writes merge no segments, up to the bound above."""
    for option, value in (("automerge", 0), ("crisismerge", SEGMENTS_BEFORE_A_WRITE_MERGES)):
        db.execute(
            "INSERT INTO message_search (message_search, rank) VALUES (?, ?)", (option, value)
        )


def merge_a_little(db: sqlite3.Connection) -> bool:
    """One step of merging the index's segments, in a transaction of its own: about
    `PAGES_A_STEP` pages of the levels with four or more segments (FTS5's 'merge' with a
    positive count, its `usermerge` default). False when there was nothing to merge
    (FTS5 then changes fewer than two rows: sqlite.org/fts5.html, "The 'merge' Command")."""
    before = db.total_changes
    db.execute(
        "INSERT INTO message_search (message_search, rank) VALUES ('merge', ?)", (PAGES_A_STEP,)
    )
    return db.total_changes - before >= 2


def index_blocks(
    db: sqlite3.Connection, blocks: Iterable[tuple[str, int, str, dict[str, Any]]]
) -> None:
    """Index blocks just stored — (message id, position, chat id, API JSON) — in two
    statements; the caller's transaction holds them and the blocks together."""
    entries = [
        (message_id, position, chat_key(chat_id), text)
        for message_id, position, chat_id, block in blocks
        if (text := searchable_text(block))
    ]
    if not entries:
        return
    first = db.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM search_keys").fetchone()[0]
    db.executemany(
        "INSERT INTO search_keys (id, message_id, position) VALUES (?, ?, ?)",
        [(first + n, e[0], e[1]) for n, e in enumerate(entries)],
    )
    db.executemany(
        "INSERT INTO message_search (rowid, text, chat_key) VALUES (?, ?, ?)",
        [(first + n, e[3], e[2]) for n, e in enumerate(entries)],
    )


def unindex_message(db: sqlite3.Connection, message_id: str, chat_id: str) -> None:
    """Take a message's blocks out of the index, before the blocks themselves go (a
    contentless index is told exactly what it held: the same text, made the same way)."""
    rows = db.execute(
        "SELECT k.id, b.raw FROM search_keys k JOIN blocks b "
        "ON b.message_id = k.message_id AND b.position = k.position WHERE k.message_id = ?",
        (message_id,),
    ).fetchall()
    key = chat_key(chat_id)
    db.executemany(
        "INSERT INTO message_search (message_search, rowid, text, chat_key) "
        "VALUES ('delete', ?, ?, ?)",
        [(r[0], searchable_text(json.loads(r[1])), key) for r in rows],
    )
    db.execute("DELETE FROM search_keys WHERE message_id = ?", (message_id,))


def unindex_chat(db: sqlite3.Connection, chat_id: str) -> None:
    """Take every message of a chat out of the index (a chat deleted for good)."""
    rows = db.execute(
        "SELECT k.id, b.raw FROM messages m JOIN search_keys k ON k.message_id = m.id "
        "JOIN blocks b ON b.message_id = k.message_id AND b.position = k.position "
        "WHERE m.chat_id = ?",
        (chat_id,),
    ).fetchall()
    key = chat_key(chat_id)
    db.executemany(
        "INSERT INTO message_search (message_search, rowid, text, chat_key) "
        "VALUES ('delete', ?, ?, ?)",
        [(r[0], searchable_text(json.loads(r[1])), key) for r in rows],
    )
    db.execute(
        "DELETE FROM search_keys WHERE message_id IN (SELECT id FROM messages WHERE chat_id = ?)",
        (chat_id,),
    )


def clean_query(text: str) -> str:
    """The query as it is searched: control characters (a NUL…) as spaces, trimmed, at
    most `MAX_QUERY_CHARS`."""
    spaced = "".join(" " if unicodedata.category(ch) == "Cc" else ch for ch in text)
    return spaced.strip()[:MAX_QUERY_CHARS].strip()


class Hits(list["SearchHit"]):
    """A search's hits; `cut` when it stopped at its time budget (they are the ones
    found by then: across chats, the newest)."""

    cut = False


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

# Every hit, from the index or (two wide characters) from the blocks themselves.
_HITS = """SELECT c.id, c.title, m.id AS message_id, m.position, b.raw
    FROM {source}
    JOIN messages m ON m.id = b.message_id
    JOIN chats c ON c.id = m.chat_id
    WHERE {where} AND NOT m.deleted AND c.deleted_at IS NULL {in_chat}
    ORDER BY {order} LIMIT ?"""


def search(
    db: sqlite3.Connection,
    query: str,
    *,
    chat_id: str | None = None,
    limit: int = 200,
    budget_s: float = TIME_BUDGET_S,
    around: int = 60,
) -> Hits:
    """Chats whose title contains `query`, then the messages that do: across every chat
    the newest first, within one chat (`chat_id`) in their order. The trash and hidden
    messages are left out. Searching all chats reads at most `limit` matches, newest
    first, so a query found in every other message still answers at once; and no search
    takes more than `budget_s` (SQLite is interrupted; what was found is kept)."""
    hits = Hits()
    query = clean_query(query)
    if not query:
        return hits
    deadline = time.monotonic() + budget_s
    db.set_progress_handler(lambda: int(time.monotonic() > deadline), 20_000)
    try:
        _search(db, query, chat_id, limit, hits, around)
    except sqlite3.OperationalError as exc:
        if "interrupted" not in str(exc):
            raise
        hits.cut = True
    finally:
        db.set_progress_handler(None, 0)
    return hits


def _search(
    db: sqlite3.Connection,
    query: str,
    chat_id: str | None,
    limit: int,
    hits: Hits,
    around: int,
) -> None:
    hits.extend(_titles(db, query, chat_id, limit))
    in_chat, chat_args = ("AND m.chat_id = ?", [chat_id]) if chat_id else ("", [])
    if len(query) >= MIN_QUERY:
        text = '"' + query.replace('"', '""') + '"'  # the query as typed, not FTS syntax
        match = f"text : {text}" + (f' AND chat_key : "{chat_key(chat_id)}"' if chat_id else "")
        sql = _HITS.format(
            source="message_search s JOIN search_keys k ON k.id = s.rowid "
            "JOIN blocks b ON b.message_id = k.message_id AND b.position = k.position",
            where="message_search MATCH ?",
            in_chat=in_chat,
            # Newest first across chats; within one, in the order indexed (the order the
            # messages came in: the index reads its matches in that order and stops at
            # the limit, where sorting by position read every match first), then sorted.
            order="s.rowid" if chat_id else "s.rowid DESC",
        )
        args: list[Any] = [match, *chat_args]
    elif any(unicodedata.east_asian_width(ch) in "WF" for ch in query):
        # Two Chinese or Japanese characters make a word, too short for the index: the
        # blocks are read and compared (the text is checked again below).
        sql = _HITS.format(
            source="blocks b",
            where="b.raw LIKE ? ESCAPE '\\'",
            in_chat=in_chat,
            order="m.position" if chat_id else "m.created_at DESC",
        )
        args = [f"%{_like_escaped(query)}%", *chat_args]
    else:
        return
    found: list[sqlite3.Row] = []
    try:
        for row in db.execute(sql, (*args, limit)):
            found.append(row)
    finally:  # what was read before the time limit stopped it is kept
        if chat_id:
            found.sort(key=lambda r: int(r["position"]))
        _add_hits(hits, found, query, around)


def _add_hits(hits: Hits, found: Iterable[sqlite3.Row], query: str, around: int) -> None:
    seen: set[str] = set()  # a message with two matching blocks is one hit
    for r in found:
        text = searchable_text(json.loads(r["raw"]))
        if r["message_id"] in seen or query.casefold() not in text.casefold():
            continue
        seen.add(r["message_id"])
        hits.append(
            SearchHit(
                r["id"], r["title"], r["message_id"], r["position"], snippet(text, query, around)
            )
        )


# Markdown's marks a reader never sees, in prose: bold and strike-through in pairs, an
# inline code span's ticks, a line's heading, quote or list lead. Code in a fenced
# block is shown as written, and so is a lone `**` (2**10) or `__` (`__init__`).
_FENCE = re.compile(r"(^[ \t]*```.*$)", re.MULTILINE)
_PAIRED = re.compile(r"(?<![\w*~])(\*\*|~~)(?=\S)(.+?)(?<=\S)\1(?![\w*~])")
_TICKS = re.compile(r"`([^`\n]+)`")
_LEAD = re.compile(r"(?<=\n)[ \t]*(?:#{1,6}|>|[-*+])[ \t]+")


def _plain(window: str, *, starts_a_line: bool, in_code: bool) -> str:
    """`window` as the conversation shows it: prose without its marks, code as written
    (`in_code`: it begins inside a fenced block)."""
    parts = _FENCE.split(window)  # prose, a fence's line, prose, …
    for n, part in enumerate(parts):
        if n % 2:
            in_code = not in_code
        elif not in_code:
            lead = n == 0 and starts_a_line  # (after a fence's line, its "\n" begins it)
            prose = _LEAD.sub("", "\n" + part)[1:] if lead else _LEAD.sub("", part)
            parts[n] = _TICKS.sub(r"\1", _PAIRED.sub(r"\2", prose))
    return "".join(parts)


def snippet(text: str, query: str, around: int = 60) -> str:
    """The text around the first match, the match marked, read as the conversation shows
    it (without Markdown's marks). (FTS5's own `snippet()` counts trigrams, not words,
    and cuts the match itself short.)"""
    found = re.search(re.escape(query), text, re.IGNORECASE)
    if found is None:  # the index matched what Python's case folding does not
        return _plain(text[: 2 * around], starts_a_line=True, in_code=False)
    start, end = found.span()
    first = max(0, start - around)
    window = text[first:start] + MARK_START + text[start:end] + MARK_END + text[end : end + around]
    in_code = "```" in text and len(_FENCE.findall(text, 0, first)) % 2 == 1
    starts_a_line = first == 0 or text[first - 1] == "\n"
    return (
        ("…" if start > around else "")
        + _plain(window, starts_a_line=starts_a_line, in_code=in_code)
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
