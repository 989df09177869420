"""The request ledger: every request a chat sent, as sent, with the usage the API reported.

Stored compactly, so a 1,000-turn chat does not hold its history 1,000 times: each
message of a body is stored once (`request_parts`, addressed by the hash of its JSON,
without its cache markers, which move from request to request), and so is the rest of
the body (model, system, tools: its "head"). A request row names the earlier request
whose messages it extends, how many of them it keeps, and the parts it adds; every
`CHECKPOINT_EVERY`th request of a chat lists all its parts, so reading one never walks
far. A body read back equals, in its JSON meaning, the one that was sent.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from desktop_app.core.messages import Message, Usage
from desktop_app.core.prompt_cache import CacheEntry
from desktop_app.core.request import ChatRequest
from desktop_app.core.wire import usage_from_api
from desktop_app.storage.db import explained, transaction, unsynced

CHECKPOINT_EVERY = 50
_MARK = "cache_control"


@dataclass(frozen=True, slots=True)
class SentRequest:
    """One request of a chat's ledger (its body is read on demand)."""

    id: int
    number: int  # 1, 2, … within the chat
    sent_at: float
    seconds: float | None  # from sending to the reply's end
    model: str
    server: str
    usage: Usage | None  # as the API reported it (None: the reply did not finish)
    status: str  # the reply's: complete, interrupted, error
    message_count: int
    purpose: str = "chat"  # or "compaction": a summary request the chat's compaction sent

    def to_json(self) -> dict[str, Any]:
        """As `requests --json` and an export with requests list it."""
        return {
            "number": self.number,
            "sent_at": self.sent_at,
            "seconds": self.seconds,
            "model": self.model,
            "server": self.server,
            "messages": self.message_count,
            "status": self.status,
            "usage": self.usage.to_api() if self.usage else None,
            "purpose": self.purpose,
        }


@explained
def record(
    db: sqlite3.Connection,
    chat_id: str,
    body: dict[str, Any],
    *,
    server: str,
    sent_at: float | None = None,
    status: str = "sent",
    purpose: str = "chat",
) -> int:
    """Add one sent request (a whole body) to the chat's ledger; returns its id."""
    plain, marks = _without_marks(body.get("messages") or [])
    head = {k: v for k, v in body.items() if k != "messages"}
    with transaction(db):
        parts = _parts(db, plain)
        return _insert(db, chat_id, head, parts, marks, server, sent_at, status, purpose)


@dataclass(frozen=True, slots=True)
class PreparedRequest:
    """A request's body, cut into parts and hashed (the CPU-heavy half of recording)."""

    head: dict[str, Any]
    digests: list[str]  # of each message, in order
    texts: dict[str, str]  # digest → JSON, of every message
    marks: list[list[Any]]


# A message of the last request, serialised: the message (kept, so its id() stays its
# own), its part's digest and JSON, and the cache markers of its own blocks, [j, marker].
_Part = tuple[Message, str, str, list[list[Any]]]


class RequestRecorder:
    """Records a chat's requests as they are sent, in two halves: `prepare` serialises and
    hashes (call it on the worker thread that runs the loop), `write` stores (on the
    database thread). It remembers the last request's messages and the parts it wrote:
    the next request repeats most of them — from its start, or, once the window slides,
    from further on — so only its new messages are serialised and looked up, and the
    request it extends is not read back. A 100,000-message chat's turn costs what a
    100-message chat's does."""

    def __init__(self) -> None:
        self._known: dict[int, _Part] = {}  # id(message) → its part, the last request's
        self._ids: dict[str, int] = {}  # digest → part id (database thread only)
        self._written: tuple[int, list[int]] | None = None  # the last row, and its parts
        self._ready: deque[tuple[ChatRequest, PreparedRequest]] = deque()

    def prepare(self, request: ChatRequest) -> None:
        """Serialise and hash the request ahead of `record` (on the loop's thread)."""
        self._ready.append((request, self._prepared(request)))

    def _prepared(self, request: ChatRequest) -> PreparedRequest:
        messages = request.messages
        # The last message goes through the body: the cache marker is put where the
        # whole body puts it (so a known last message is serialised again, and not kept).
        head = replace(request, messages=messages[-1:]).body()
        last = head.pop("messages")
        known: dict[int, _Part] = {}
        digests: list[str] = []
        texts: dict[str, str] = {}
        marks: list[list[Any]] = []
        for i, message in enumerate(messages):
            part = self._known.get(id(message)) if i < len(messages) - 1 else None
            if part is None or part[0] is not message:
                api = last[0] if i == len(messages) - 1 else message.to_api()
                plain, found = _without_marks([api])
                text = _json(plain[0])
                part = (message, _digest(text), text, [[j, mark] for _, j, mark in found])
            if i < len(messages) - 1:
                known[id(message)] = part
            digests.append(part[1])
            texts[part[1]] = part[2]
            marks.extend([i, j, mark] for j, mark in part[3])
        self._known = known
        return PreparedRequest({**head, "stream": True}, digests, texts, marks)

    @explained
    def record(
        self,
        db: sqlite3.Connection,
        chat_id: str,
        request: ChatRequest,
        *,
        server: str,
        sent_at: float | None = None,
    ) -> int:
        """Store the request (prepared on the worker, or here if it was not)."""
        prepared = None
        while self._ready and prepared is None:
            queued, ready = self._ready.popleft()
            prepared = ready if queued is request else None
        if prepared is None:
            prepared = self._prepared(request)
        try:
            with transaction(db):
                missing = [d for d in dict.fromkeys(prepared.digests) if d not in self._ids]
                stored = _store_parts(db, missing, prepared.texts)
                parts = [self._ids.get(d) or stored[d] for d in prepared.digests]
                row = _insert(
                    db,
                    chat_id,
                    prepared.head,
                    parts,
                    prepared.marks,
                    server,
                    sent_at,
                    "sent",
                    "chat",
                    written=self._written,
                )
        except BaseException:
            # Rolled back: ids handed out inside may be reused, and this request's new
            # parts were never stored. Start afresh (the next request stores all it needs).
            self._known, self._ids, self._written = {}, {}, None
            self._ready.clear()
            raise
        self._ids.update(stored)  # only what was committed
        self._written = (row, parts)
        return row


def _insert(
    db: sqlite3.Connection,
    chat_id: str,
    head: dict[str, Any],
    parts: list[int],
    marks: list[list[Any]],
    server: str,
    sent_at: float | None,
    status: str,
    purpose: str,
    *,
    written: tuple[int, list[int]] | None = None,
) -> int:
    """The request's row (inside the caller's transaction), stored against the previous
    request of the chat with the same purpose when it extends it. `written`: a row this
    program wrote, and its parts (not read back when it is that request)."""
    head_id = _part(db, head)
    last = db.execute("SELECT MAX(number) FROM requests WHERE chat_id = ?", (chat_id,)).fetchone()[
        0
    ]
    number = (last or 0) + 1
    previous = db.execute(
        "SELECT id FROM requests WHERE chat_id = ? AND purpose = ? ORDER BY number DESC LIMIT 1",
        (chat_id, purpose),
    ).fetchone()
    base, shared, added = None, 0, parts
    if previous is not None and number % CHECKPOINT_EVERY:
        before = written[1] if written and written[0] == previous[0] else None
        shared = _common_prefix(_parts_of(db, previous[0]) if before is None else before, parts)
        base, added = previous[0], parts[shared:]
    cursor = db.execute(
        "INSERT INTO requests (chat_id, number, sent_at, seconds, model, server, head, "
        "base, shared, added, marks, usage, status, purpose) "
        "VALUES (?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)",
        (
            chat_id,
            number,
            time.time() if sent_at is None else sent_at,
            str(head.get("model", "")),
            server,
            head_id,
            base,
            shared,
            json.dumps(added),
            json.dumps(marks),
            status,
            purpose,
        ),
    )
    return int(cursor.lastrowid or 0)


@explained
def finish(
    db: sqlite3.Connection,
    request_id: int,
    *,
    seconds: float,
    usage: Usage | None,
    status: str,
    reply_id: str | None = None,
) -> None:
    """The reply to a recorded request ended: its duration, usage, status and message
    (bookkeeping: not synced, `unsynced`)."""
    with unsynced(db), transaction(db):
        db.execute(
            "UPDATE requests SET seconds = ?, usage = ?, status = ?, reply_id = ? WHERE id = ?",
            (seconds, json.dumps(usage.to_api()) if usage else None, status, reply_id, request_id),
        )


@explained
def reply_request(db: sqlite3.Connection, reply_id: str) -> tuple[str, Usage | None] | None:
    """(model, usage) of the request a reply answered, or None if the ledger has none."""
    row = db.execute(
        "SELECT model, usage FROM requests WHERE reply_id = ? ORDER BY id DESC LIMIT 1",
        (reply_id,),
    ).fetchone()
    if row is None:
        return None
    return row[0], usage_from_api(json.loads(row[1])) if row[1] else None


@explained
def requests(db: sqlite3.Connection, chat_id: str) -> list[SentRequest]:
    """The chat's ledger, oldest first."""
    rows = db.execute(
        "SELECT id, number, sent_at, seconds, model, server, shared, added, usage, status, "
        "purpose FROM requests WHERE chat_id = ? ORDER BY number",
        (chat_id,),
    ).fetchall()
    return [
        SentRequest(
            row[0],
            row[1],
            row[2],
            row[3],
            row[4],
            row[5],
            usage_from_api(json.loads(row[8])) if row[8] else None,
            row[9],
            row[6] + len(json.loads(row[7])),
            row[10],
        )
        for row in rows
    ]


@explained
def cache_entry(db: sqlite3.Connection, chat_id: str) -> CacheEntry | None:
    """What the chat's last answered request left in the prompt cache: the tokens it read
    or wrote, when it started, and its markers' TTL. None when it sent none yet."""
    row = db.execute(
        "SELECT sent_at, usage, marks, head FROM requests WHERE chat_id = ? AND purpose = 'chat' "
        "AND usage IS NOT NULL ORDER BY number DESC LIMIT 1",
        (chat_id,),
    ).fetchone()
    if row is None:
        return None
    usage = usage_from_api(json.loads(row[1]))
    if usage is None:
        return None
    # One TTL for every marker of a request (the chat's setting), on messages or system.
    marked = row[2] + (_part_text(db, row[3]) if '"1h"' not in row[2] else "")
    ttl = "1h" if '"ttl":"1h"' in marked.replace(" ", "") else "5m"
    cached = usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    return CacheEntry(row[0], ttl, cached)


@explained
def usage_groups(
    db: sqlite3.Connection,
    by: str,
    *,
    since: float | None = None,
    chat_ids: Sequence[str] | None = None,
    tiers: Mapping[str, int] | None = None,
) -> list[tuple[str, str, int, int, int, int, int, int, int, int]]:
    """Every request sent since `since` (all when None; of some chats only, if given),
    summed `by` local "day" (2026-12-03) or "chat", and by model and price tier: (the
    day or chat, model, above — 1 when its prompt was longer than the model's threshold
    in `tiers` —, requests, then the tokens reported: input, cache write, of them kept an
    hour, cache read, output; then the web searches the API ran). Each kind of token costs the same within a tier, so the sums price
    exactly; summed by SQLite (its JSON functions read each row's usage): a 10,000-request
    ledger in a few milliseconds, not a JSON parse per row in Python."""
    clause, args = _where(since, chat_ids)
    cases = " ".join("WHEN ? THEN i + w + r > ?" for _ in tiers or {})
    above = f"CASE model {cases} ELSE 0 END" if cases else "0"
    tier_args = [value for pair in (tiers or {}).items() for value in pair]
    key = {"day": "day", "chat": "chat_id"}[by]
    return db.execute(
        f"SELECT {key}, model, above, COUNT(*), SUM(i), SUM(w), SUM(MIN(h, w)), "
        f"SUM(r), SUM(o), SUM(s) FROM (SELECT *, {above} AS above FROM ("
        "SELECT date(sent_at, 'unixepoch', 'localtime') AS day, chat_id, model, "
        "COALESCE(json_extract(usage, '$.input_tokens'), 0) AS i, "
        "COALESCE(json_extract(usage, '$.cache_creation_input_tokens'), 0) AS w, "
        "COALESCE(json_extract(usage, '$.cache_creation.ephemeral_1h_input_tokens'), 0) AS h, "
        "COALESCE(json_extract(usage, '$.cache_read_input_tokens'), 0) AS r, "
        "COALESCE(json_extract(usage, '$.output_tokens'), 0) AS o, "
        "COALESCE(json_extract(usage, '$.server_tool_use.web_search_requests'), 0) AS s "
        f"FROM requests {clause}"
        f")) GROUP BY {key}, model, above",
        [*tier_args, *args],  # (in the order they stand in the text)
    ).fetchall()


@explained
def models_used(db: sqlite3.Connection, *, since: float | None = None) -> list[str]:
    """The models the ledger's requests went to (since `since`, if given)."""
    clause, args = _where(since, None)
    return [r[0] for r in db.execute(f"SELECT DISTINCT model FROM requests {clause}", args)]


@explained
def last_sent_with(
    db: sqlite3.Connection, chat_id: str, texts: Sequence[str]
) -> dict[str, tuple[int, float]]:
    """For each text, the (number, time) of the chat's last request whose system, tools or
    settings carried it — what a pinned fact's "last sent" is."""
    # As in the JSON, and whole: a fact's line ends with a newline or the end of the text
    # ("- Use Python" is not "- Use Python 3.12").
    escaped = {t: _escaped(t) for t in texts}
    needles = {t: (e + "\\n", e + '"') for t, e in escaped.items()}
    found = carried(db, chat_id, needles, heads_only=True)
    return {t: (hits[-1].number, hits[-1].sent_at) for t, hits in found.items() if hits}


@dataclass(frozen=True, slots=True)
class Carrier:
    """A request that carried a text: its number in the chat, when, and to which model."""

    number: int
    sent_at: float
    model: str


@explained
def carried(
    db: sqlite3.Connection,
    chat_id: str,
    needles: Mapping[str, Sequence[str]],
    *,
    heads_only: bool = False,
) -> dict[str, list[Carrier]]:
    """For each key, every request of the chat (oldest first; its summary requests
    aside) whose body held one of its needles — pieces of the body's JSON text, as
    `_escaped` makes them — in its system, tools or settings, or (unless `heads_only`) in
    its messages. Each stored part is read once, however many requests share it."""
    if heads_only:
        return _heads_carrying(db, chat_id, needles)
    rows = db.execute(
        "SELECT number, sent_at, model, head, base, shared, added FROM requests "
        "WHERE chat_id = ? AND purpose = 'chat' ORDER BY number",
        (chat_id,),
    ).fetchall()
    wanted: set[int] = {row[3] for row in rows}
    for parts in _each_request_parts(rows):
        wanted.update(parts)
    holds = _parts_holding(db, wanted, needles)  # part id → the keys it holds
    found: dict[str, list[Carrier]] = {key: [] for key in needles}
    for row, parts in zip(rows, _each_request_parts(rows), strict=True):
        keys = set(holds.get(row[3], ()))
        for part in parts:
            keys.update(holds.get(part, ()))
        for key in keys:
            found[key].append(Carrier(row[0], row[1], row[2]))
    return found


def _heads_carrying(
    db: sqlite3.Connection, chat_id: str, needles: Mapping[str, Sequence[str]]
) -> dict[str, list[Carrier]]:
    """`carried`, heads only: a head (system, tools, settings) is one part per request,
    and the same head repeats from request to request — each distinct one is read once."""
    rows = db.execute(
        "SELECT number, sent_at, model, head FROM requests "
        "WHERE chat_id = ? AND purpose = 'chat' ORDER BY number",
        (chat_id,),
    ).fetchall()
    holds = _parts_holding(db, {row[3] for row in rows}, needles)
    found: dict[str, list[Carrier]] = {key: [] for key in needles}
    for number, sent_at, model, head in rows:
        for key in holds.get(head, ()):
            found[key].append(Carrier(number, sent_at, model))
    return found


@explained
def chats_carrying(db: sqlite3.Connection, text: str) -> dict[str, list[Carrier]]:
    """Every chat whose requests carried `text` (anywhere in their bodies): chat id → the
    requests, oldest first."""
    needle = {text: (_escaped(text),)}
    chat_ids = [r[0] for r in db.execute("SELECT DISTINCT chat_id FROM requests")]
    found = {chat_id: carried(db, chat_id, needle)[text] for chat_id in chat_ids}
    return {chat_id: hits for chat_id, hits in found.items() if hits}


def _escaped(text: str) -> str:
    """`text` as it stands inside a JSON string of a stored body."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def _each_request_parts(rows: Sequence[Sequence[Any]]) -> Iterator[list[int]]:
    """The message parts of each request in `rows` (a chat's, of one purpose, in order:
    each request's base is the one before it, or none at a checkpoint)."""
    previous: list[int] = []
    for row in rows:
        base, shared, added = row[4], row[5], json.loads(row[6])
        previous = (previous[:shared] if base is not None else []) + added
        yield previous


def _parts_holding(
    db: sqlite3.Connection, part_ids: set[int], needles: Mapping[str, Sequence[str]]
) -> dict[int, list[str]]:
    """Which of these parts hold which keys' needles (read 500 at a time)."""
    holds: dict[int, list[str]] = {}
    ids = sorted(part_ids)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for part_id, text in db.execute(
            f"SELECT id, json FROM request_parts WHERE id IN ({','.join('?' * len(chunk))})",
            chunk,
        ):
            keys = [k for k, pieces in needles.items() if any(p in text for p in pieces)]
            if keys:
                holds[part_id] = keys
    return holds


@explained
def body(db: sqlite3.Connection, request_id: int) -> dict[str, Any]:
    """The request's body, as it was sent."""
    row = db.execute("SELECT head, marks FROM requests WHERE id = ?", (request_id,)).fetchone()
    if row is None:
        raise KeyError(request_id)
    parts = _parts_of(db, request_id)
    texts = (
        dict(
            db.execute(
                f"SELECT id, json FROM request_parts WHERE id IN ({','.join('?' * len(set(parts)))})",
                tuple(set(parts)),
            ).fetchall()
        )
        if parts
        else {}
    )
    head: dict[str, Any] = json.loads(_part_text(db, row[0]))
    messages = [json.loads(texts[p]) for p in parts]
    for i, j, mark in json.loads(row[1]):
        messages[i]["content"][j][_MARK] = mark
    head["messages"] = messages
    return head


@explained
def storage_bytes(db: sqlite3.Connection, chat_id: str) -> int:
    """What the chat's ledger takes on disk, roughly: its rows and the parts they use."""
    rows = db.execute(
        "SELECT COALESCE(SUM(LENGTH(added) + LENGTH(marks) + LENGTH(COALESCE(usage, '')) "
        "+ 64), 0) FROM requests WHERE chat_id = ?",
        (chat_id,),
    ).fetchone()[0]
    used: set[int] = set()
    for request_id, head in db.execute(
        "SELECT id, head FROM requests WHERE chat_id = ?", (chat_id,)
    ).fetchall():
        used.update(_parts_of(db, request_id))
        used.add(head)
    if not used:
        return int(rows)
    marks = ",".join("?" * len(used))
    parts = db.execute(
        f"SELECT COALESCE(SUM(LENGTH(json) + 40), 0) FROM request_parts WHERE id IN ({marks})",
        tuple(used),
    ).fetchone()[0]
    return int(rows) + int(parts)


# -- internals -------------------------------------------------------------------------------


def _where(since: float | None, chat_ids: Sequence[str] | None) -> tuple[str, list[object]]:
    """The WHERE clause (and its arguments) of requests sent since `since`, of `chat_ids`
    (each only when given)."""
    where: list[str] = []
    args: list[object] = []
    if since is not None:
        where.append("sent_at >= ?")
        args.append(since)
    if chat_ids is not None:
        where.append(f"chat_id IN ({','.join('?' * len(chat_ids)) or 'NULL'})")
        args.extend(chat_ids)
    return (f"WHERE {' AND '.join(where)}" if where else ""), args


def _without_marks(messages: list[Any]) -> tuple[list[Any], list[list[Any]]]:
    """The messages without `cache_control`, and where each marker was: [i, j, marker]."""
    plain: list[Any] = []
    marks: list[list[Any]] = []
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list) or not any(
            isinstance(b, dict) and _MARK in b for b in content
        ):
            plain.append(message)
            continue
        blocks = []
        for j, block in enumerate(content):
            if isinstance(block, dict) and _MARK in block:
                marks.append([i, j, block[_MARK]])
                block = {k: v for k, v in block.items() if k != _MARK}
            blocks.append(block)
        plain.append({**message, "content": blocks})
    return plain, marks


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _part(db: sqlite3.Connection, value: Any) -> int:
    return _parts(db, [value])[0]


def _parts(db: sqlite3.Connection, values: Sequence[Any]) -> list[int]:
    """The part id of each value, storing those not stored yet."""
    texts = [_json(v) for v in values]
    digests = [_digest(t) for t in texts]
    known = _store_parts(db, list(dict.fromkeys(digests)), dict(zip(digests, texts, strict=True)))
    return [known[d] for d in digests]


def _store_parts(
    db: sqlite3.Connection, digests: list[str], texts: dict[str, str]
) -> dict[str, int]:
    """digest → part id for each of `digests`, storing those not stored yet (looked up in
    batches: a long chat's first request has thousands)."""
    known: dict[str, int] = {}
    for start in range(0, len(digests), 500):
        chunk = digests[start : start + 500]
        marks = ",".join("?" * len(chunk))
        known.update(
            db.execute(
                f"SELECT hash, id FROM request_parts WHERE hash IN ({marks})", chunk
            ).fetchall()
        )
    for digest in digests:
        if digest not in known:
            cursor = db.execute(
                "INSERT INTO request_parts (hash, json) VALUES (?, ?)", (digest, texts[digest])
            )
            known[digest] = int(cursor.lastrowid or 0)
    return known


def _part_text(db: sqlite3.Connection, part_id: int) -> str:
    return str(db.execute("SELECT json FROM request_parts WHERE id = ?", (part_id,)).fetchone()[0])


def _parts_of(db: sqlite3.Connection, request_id: int) -> list[int]:
    """The message parts of a request, in order (following its base back to a checkpoint)."""
    chain: list[tuple[int, list[int]]] = []
    current: int | None = request_id
    while current is not None:
        row = db.execute(
            "SELECT base, shared, added FROM requests WHERE id = ?", (current,)
        ).fetchone()
        chain.append((row[1], json.loads(row[2])))
        current = row[0]
    parts: list[int] = []
    for shared, added in reversed(chain):
        parts = parts[:shared] + added
    return parts


def _common_prefix(a: Sequence[Any], b: Sequence[Any]) -> int:
    """How many leading items `a` and `b` share (identity first: it is the common case)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:  # (compared at C speed; the usual case: one extends the other)
        return n
    n = 0
    for x, y in zip(a, b, strict=False):
        if x is not y and x != y:
            break
        n += 1
    return n
