"""Export and import: `contextdesk.chat` JSON (version 1), Markdown for reading, and
import of a bare Messages-API request body.

The JSON carries the chat's metadata, system prompt, pinned facts, summaries (with the
ids of the messages they cover), every message with Anthropic-shaped content blocks plus
status, usage and token estimates, and `request`: the exact body the next turn would
send — replayable with curl. The format is described by
`resources/contextdesk.chat.schema.json`.

Import never half-happens: the file is checked (size, JSON, shape with JSON paths),
repaired with a report, then written in one transaction. Existing chats are never touched.
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from typing import Any, BinaryIO

from desktop_app.config.settings import DEFAULT_MODEL
from desktop_app.config.stored import same_type
from desktop_app.context.chat_settings import EFFORT_LEVELS, NAME_LISTS, ContextSettings, names
from desktop_app.context.facts import Fact, FactSource
from desktop_app.context.state import ContextState, Summary
from desktop_app.core.body_repair import BodyRepair, repair_body
from desktop_app.core.errors import HistoryFormatError
from desktop_app.core.messages import Message, new_id
from desktop_app.core.model_facts import facts_for
from desktop_app.core.repair import repair, sanitize
from desktop_app.core.request import RequestExtras
from desktop_app.core.server_tools import WEB_TOOLS
from desktop_app.core.thinking import fitted
from desktop_app.core.wire import MessageReader, status_from_text, usage_from_api
from desktop_app.storage.chat_export import FORMAT, VERSION
from desktop_app.storage.chat_info import ChatInfo
from desktop_app.storage.errors import ImportFailed
from desktop_app.storage.export_fields import Fields, object_of, when
from desktop_app.storage.foreign import Hidden
from desktop_app.storage.foreign.streaming import object_members
from desktop_app.storage.store import ChatStore

MAX_IMPORT_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ImportResult:
    chat: ChatInfo
    repairs: tuple[str, ...]


# -- import --------------------------------------------------------------------------------


def import_chat(store: ChatStore, raw: bytes, untitled: str = "Imported chat") -> ImportResult:
    """Import a `contextdesk.chat` document or a bare Messages-API request body."""
    if len(raw) > MAX_IMPORT_BYTES:
        raise ImportFailed(
            "File too large",
            f"The file is {len(raw) / 1e6:.0f} MB; the limit is {MAX_IMPORT_BYTES // 2**20} MB.",
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportFailed("Not UTF-8 text", f"Byte {exc.start} is not valid UTF-8.") from exc
    with _collector_paused():
        return _import_text(store, text, untitled)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while a file is read in: parsing a large export makes
    millions of objects that all live on, and the collector would walk them again and again
    (a tenth of a 10,000-message import). Reference counting still frees what is dropped."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _import_text(store: ChatStore, text: str, untitled: str) -> ImportResult:
    try:
        data = json.loads(text, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise ImportFailed(
            "Not valid JSON", f"{exc.msg} at line {exc.lineno}, column {exc.colno}."
        ) from exc
    except ValueError as exc:  # NaN or Infinity
        raise ImportFailed("Not valid JSON", f"{exc}.") from exc
    except RecursionError as exc:
        raise ImportFailed(
            "Nested too deeply", "The JSON is nested deeper than any chat needs."
        ) from exc
    if not isinstance(data, dict):
        raise ImportFailed(
            "Not a chat",
            "Expected a JSON object: a ContextDesk export or a Messages API request body.",
        )
    try:
        if data.get("format") == FORMAT:
            return _import_export(store, data, untitled)
        if "messages" in data:
            return _import_request(store, data, untitled)
    except RecursionError as exc:
        raise ImportFailed(
            "Nested too deeply", "The JSON is nested deeper than any chat needs."
        ) from exc
    raise ImportFailed(
        "Not a chat",
        'This is neither a ContextDesk export ("format": "contextdesk.chat") nor a Messages API request body (with "messages").',
    )


def _import_request(store: ChatStore, body: dict[str, Any], untitled: str) -> ImportResult:
    """A request body becomes the chat its next turn continues: its messages repaired, its
    system prompt (with any `system` messages inside `messages`), its model, `max_tokens`
    and extended thinking."""
    reader = Fields()
    model = reader.string(body, "model", "", required=False) or DEFAULT_MODEL
    try:
        fixed = repair_body(body)
    except HistoryFormatError as exc:
        reader.problems += exc.problems
        reader.raise_if_any()
        raise
    system = _system_text(fixed.body.get("system"), reader)
    reader.raise_if_any()
    repairs = [str(r) for r in fixed.repairs]
    settings = _request_settings(body, fixed, repairs)
    title = _title_from(fixed.messages, untitled)
    chat = store.create_full(
        sanitize(title), sanitize(model), sanitize(system), settings, fixed.messages, ContextState()
    )
    return ImportResult(chat, tuple(repairs))


def _system_text(system: Any, reader: Fields) -> str:
    if isinstance(system, list):
        return "\n\n".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
    if system is None or isinstance(system, str):
        return system or ""
    reader.problem("system", "Input should be a valid string or list of text blocks")
    return ""


def _request_settings(
    original: dict[str, Any], fixed: BodyRepair, repairs: list[str]
) -> ContextSettings:
    """The request's `max_tokens`, thinking, effort, tools, `tool_choice` and `metadata`
    as the chat's settings. The thinking is the request's own even when this one request
    had to go without it; what the model would refuse is said, and left out."""
    defaults = ContextSettings()
    model = original.get("model") if isinstance(original.get("model"), str) else ""
    facts = facts_for(model or DEFAULT_MODEL)
    max_tokens = fixed.body.get("max_tokens")
    if not (isinstance(max_tokens, int) and not isinstance(max_tokens, bool)):
        max_tokens = defaults.max_tokens
    thinking = _thinking_of(original, fixed.body)
    extras = _request_extras(original, fixed.tool_changes, repairs)
    forced = extras.tool_choice and extras.tool_choice.get("type") in ("any", "tool")
    if forced and not facts.forced_tool_choice:
        repairs.append(
            f"tool_choice: {json.dumps(extras.tool_choice)} not kept — {facts.id} refuses a "
            "forced tool choice (it chooses its tools itself)"
        )
        extras = replace(extras, tool_choice=None)
    sampling = [name for name in ("temperature", "top_p", "top_k") if name in original]
    if sampling:
        repairs.append(
            f"{', '.join(sampling)}: not kept — ContextDesk sends no sampling parameters "
            "(today's models refuse them)"
        )
    settings = replace(
        defaults,
        max_tokens=max_tokens,
        request_extras=extras.to_json(),
        **thinking,
        **_web_of(original),
    )
    choice, moved = fitted(facts, settings.thinking_choice)
    settings = settings.with_thinking(choice)
    if moved:
        repairs.append(f"thinking: {moved}")
    if settings.problems():
        repairs.append(
            f"max_tokens, thinking: kept ContextDesk's defaults — {'; '.join(settings.problems())}"
        )
        return replace(defaults, request_extras=extras.to_json())
    return settings


def _thinking_of(original: dict[str, Any], fixed: dict[str, Any]) -> dict[str, Any]:
    """The body's `thinking` and `output_config.effort` as settings fields: a budget,
    adaptive (with its display and effort), or off; left out: adaptive (on the models
    where that means off, adaptive resolves to off there: core/thinking.py)."""
    fields: dict[str, Any] = {"thinking": "adaptive"}
    for source in (original, fixed):  # the author's own first: this request may go without
        thinking = source.get("thinking")
        if not isinstance(thinking, dict):
            continue
        kind = thinking.get("type")
        budget = thinking.get("budget_tokens")
        if kind == "enabled" and isinstance(budget, int) and not isinstance(budget, bool):
            fields.update(thinking="budget", thinking_budget=budget)
        elif kind in ("disabled", "between_tools"):
            fields["thinking"] = "off"
        if thinking.get("display") in ("summarized", "omitted"):
            fields["thinking_display"] = thinking["display"]
        break
    config = original.get("output_config")
    effort = config.get("effort") if isinstance(config, dict) else None
    if isinstance(effort, str) and effort in EFFORT_LEVELS:
        fields["effort"] = effort
    return fields


def _web_of(body: dict[str, Any]) -> dict[str, Any]:
    """The request's web search and fetch (the API's own tools) as the chat's settings:
    on, with their uses and domains, so the chat goes on searching as it did."""
    fields: dict[str, Any] = {}
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict) or tool.get("name") not in WEB_TOOLS:
            continue
        if not str(tool.get("type", "")).startswith(("web_search_", "web_fetch_")):
            continue
        fields[str(tool["name"])] = True
        uses = tool.get("max_uses")
        if isinstance(uses, int) and not isinstance(uses, bool) and 1 <= uses <= 50:
            fields["web_max_uses"] = uses
        for given, name in (
            ("allowed_domains", "web_domains"),
            ("blocked_domains", "web_blocked_domains"),
        ):
            listed = names(tool.get(given) or [])
            if listed and name not in fields:
                fields[name] = listed
    if fields.get("web_domains"):
        fields.pop("web_blocked_domains", None)  # (the API takes one list)
    return fields


def _request_extras(
    body: dict[str, Any], tool_changes: Sequence[Any], repairs: list[str]
) -> RequestExtras:
    """The request's client tools (with those its `system` messages add or remove),
    `tool_choice` and `metadata`; what cannot go on (server tools) is said."""
    given = body.get("tools")
    raw_tools: list[Any] = given if isinstance(given, list) else []
    tools: dict[str, Any] = {}
    for tool in raw_tools:
        if isinstance(tool, dict) and isinstance(tool.get("input_schema"), dict):
            tools[str(tool.get("name"))] = tool
    for change in tool_changes:
        target = change.get("tool") if isinstance(change, dict) else None
        if not isinstance(target, dict):
            continue
        if change.get("type") == "tool_removal":
            tools.pop(str(target.get("name")), None)
        elif isinstance(target.get("definition"), dict):
            definition = target["definition"]
            tools[str(definition.get("name"))] = {"input_schema": {"type": "object"}, **definition}
    server = [
        str(t.get("name") or t.get("type"))
        for t in raw_tools
        if isinstance(t, dict)
        and not isinstance(t.get("input_schema"), dict)
        and t.get("name") not in WEB_TOOLS  # (they go on as the chat's web settings)
    ]
    if server:
        repairs.append(
            f"tools: {', '.join(server)} not kept — ContextDesk cannot offer server tools yet"
        )
    choice, metadata = body.get("tool_choice"), body.get("metadata")
    extras = RequestExtras.read(
        json.dumps({"tools": list(tools.values()), "tool_choice": choice, "metadata": metadata})
    )
    return extras or RequestExtras()


def import_chat_file(
    store: ChatStore,
    stream: BinaryIO,
    untitled: str = "Imported chat",
    on_read: Callable[[int], None] | None = None,
) -> ImportResult:
    """`import_chat` from an open file. An export of ours is read as it goes (`on_read(n)`
    told of each n bytes: it may stop it), message by message, with no size limit;
    anything else (a request body; an export whose messages come before its "format")
    whole, within `MAX_IMPORT_BYTES`."""
    with _collector_paused():
        try:
            data, read = _read_export(stream, on_read)
            if read is not None:
                return _import_export(store, data, untitled, read)
        except (ValueError, RecursionError) as exc:
            if stream.seek(0, os.SEEK_END) > MAX_IMPORT_BYTES:
                raise _unreadable(exc) from exc  # (else read whole: it says where)
    stream.seek(0)
    return import_chat(store, stream.read(MAX_IMPORT_BYTES + 1), untitled)


def _unreadable(exc: ValueError | RecursionError) -> ImportFailed:  # (read as it goes)
    if isinstance(exc, UnicodeDecodeError):
        return ImportFailed("Not UTF-8 text", f"A byte near byte {exc.start:,} is not valid UTF-8.")
    if isinstance(exc, RecursionError):
        return ImportFailed("Nested too deeply", "The JSON is nested deeper than any chat needs.")
    return ImportFailed("Not valid JSON", f"{exc}.")


def _read_export(
    stream: BinaryIO, on_read: Callable[[int], None] | None
) -> tuple[dict[str, Any], _Read | None]:
    """The file's members, its messages read one by one (None: not ours with "format"
    first, or a member given twice — read whole, as `json.loads` does: the last counts)."""
    data: dict[str, Any] = {}
    read = _Read()
    decoder = json.JSONDecoder(parse_constant=_no_constants)
    for key, value in object_members(stream, {"messages"}, decoder, on_read):
        if key in data or (key == "messages" and read.messages is not None):
            return data, None
        if key == "messages" and isinstance(value, Iterator):
            if data.get("format") != FORMAT:
                return data, None  # (not ours: a request body)
            read.messages = _read_messages(value, read.reader, "messages", read.new_ids, read.order)
            continue
        data[key] = value
    return data, read if read.messages is not None else None


@dataclass
class _Read:
    """Reading an export's messages: their problems, fresh ids (the file's → ours), where
    each was first stored, and the messages."""

    reader: Fields = field(default_factory=lambda: Fields())
    new_ids: dict[str, str] = field(default_factory=dict)
    order: dict[str, float] = field(default_factory=dict)
    messages: list[Message] | None = None


def _check_version(data: dict[str, Any]) -> None:
    version = data.get("version")
    if version != VERSION:
        raise ImportFailed(
            "Unsupported version",
            f"This file is {FORMAT} version {version!r}; this ContextDesk reads version {VERSION}.",
        )


def _import_export(
    store: ChatStore, data: dict[str, Any], untitled: str, read: _Read | None = None
) -> ImportResult:
    """An export of ours (`read`: its messages, read already as the file was)."""
    _check_version(data)
    read = read or _Read()
    reader, new_ids, order = read.reader, read.new_ids, read.order
    chat = object_of(data.get("chat"))
    if not isinstance(data.get("chat"), dict):
        reader.problem("chat", "Field required")
    # Fresh ids (a re-import must never collide with the original); references follow.
    messages = read.messages
    if messages is None:
        messages = _read_messages(data.get("messages"), reader, "messages", new_ids, order)
    raw_branches = data.get("branches", [])
    others = _read_messages(raw_branches, reader, "branches", new_ids, order)
    reader.raise_if_any()
    fixed = repair(messages)
    _place_the_rest(order, fixed.messages)
    branches, reattached = _branches(raw_branches, others, new_ids, fixed.messages, messages, order)
    state = _context_state(data, new_ids, reader)
    reader.raise_if_any()
    settings = _chat_settings(chat.get("settings"), reader)
    reader.raise_if_any()
    info = store.create_full(
        sanitize(
            reader.string(chat, "title", "chat", required=False)
            or _title_from(fixed.messages, untitled)
        ),
        sanitize(reader.string(chat, "model", "chat", required=False) or DEFAULT_MODEL),
        sanitize(_text(data.get("system_prompt"))),
        settings,
        fixed.messages,
        state,
        branches,
        order,
        hidden=_hidden(data.get("imported_hidden"), new_ids),
        created_at=when(chat.get("created_at")),  # (its activity is the import: now)
    )
    return ImportResult(info, (*(str(r) for r in fixed.repairs), *reattached))


HIDDEN_FIELDS = ("path", "role", "kind", "text")


def _hidden(raw: Any, new_ids: dict[str, str]) -> list[Hidden]:
    """What an imported chat's source did not show, as our export keeps it: back with
    the chat, after the messages it followed (their new ids); malformed entries are
    passed over — they were never shown or sent."""
    found = []
    for item in raw if isinstance(raw, list) else []:
        fields = [item.get(k) if isinstance(item, dict) else None for k in HIDDEN_FIELDS]
        if all(isinstance(f, str) for f in fields):
            path, role, kind, text = (sanitize(str(f)) for f in fields)
            found.append(Hidden(path, role, kind, text, new_ids.get(str(item.get("after")))))
    return found


def _read_messages(
    raw: Any, reader: Fields, path: str, new_ids: dict[str, str], order: dict[str, float]
) -> list[Message]:
    """An export's list of messages — a list, or the items of a long file's list as
    they are read (`object_members`) — each parsed as it comes and its JSON let go:
    its role and content (a problem noted with its JSON path), the export's status,
    usage and time, under a fresh id (`new_ids` maps the file's ids to them); and
    where the file says it was first stored (its "order", by new id, into `order`)."""
    if not isinstance(raw, list | Iterator):
        reader.problem(path, "Input should be a valid list")
        return []
    parser = MessageReader()
    kept = []
    try:
        for i, item in enumerate(raw):
            fields = item if isinstance(item, dict) else {}
            message = parser.message(
                {"role": fields.get("role"), "content": fields.get("content")} if fields else item,
                f"{path}.{i}",
            )
            if message is None:
                continue
            old = fields.get("id")
            new_ids[old if isinstance(old, str) else f"{path}#{i}"] = message.id
            at = fields.get("order")
            if isinstance(at, int | float) and not isinstance(at, bool):
                order[message.id] = float(at)
            kept.append(_with_its_fields(message, fields))
    except RecursionError:
        if not isinstance(raw, list):  # (the file itself cannot be read on: said whole)
            raise
        reader.problem(path, "nested too deeply")
    reader.problems += parser.problems
    return kept


def _with_its_fields(message: Message, raw: dict[str, Any]) -> Message:
    """The parsed message with the export's status, usage, time and model."""
    return Message(
        role=message.role,
        blocks=message.blocks,
        id=message.id,  # parsing gave every message a fresh id already
        status=status_from_text(raw.get("status", "complete")),
        stop_reason=raw.get("stop_reason") if isinstance(raw.get("stop_reason"), str) else None,
        usage=usage_from_api(raw.get("usage")),
        created_at=when(raw.get("created_at")),
        # The model that wrote it, but not the prefix it followed: an imported
        # chat is another conversation, whose thinking the API no longer takes
        # where the prefix is checked (core/binding.py).
        model=raw["model"] if isinstance(raw.get("model"), str) else "",
    )


def _branches(
    raws: Any,
    others: list[Message],
    new_ids: dict[str, str],
    stored: Sequence[Message],
    parsed: Sequence[Message],
    order: dict[str, float],
) -> tuple[list[tuple[str | None, Message]], list[str]]:
    """The other branches' messages with their parents' new ids, and what was repaired.
    A parent the repair merged into the message before it is that message; a version
    whose parent is not in the file, or comes after it (a cycle), is kept — placed after
    the nearest earlier message it can follow (said in the repairs)."""
    kept = {m.id: m for m in stored}  # a parent must be placed before its child
    shown = [m.id for m in parsed]
    found: list[tuple[str | None, Message]] = []
    reattached: list[str] = []
    for i, (raw, message) in enumerate(zip(raws or [], others, strict=False)):
        parent = raw.get("parent")
        fresh = new_ids.get(parent) if isinstance(parent, str) else None
        if fresh in shown:
            earlier = shown[: shown.index(fresh) + 1]
            fresh = next((m for m in reversed(earlier) if m in kept), None)
        if parent is not None and (fresh is None or fresh not in kept):
            fresh = _nearest_before(message, kept.values(), order)
            where = "after the nearest earlier message it can follow" if fresh else "at the start"
            reattached.append(
                f"branches.{i}: its parent {str(parent)[:40]!r} is not a message before it "
                f"(missing, or a cycle); kept as a version {where}"
            )
        found.append((fresh, message))
        kept[message.id] = message
    return found, reattached


def _nearest_before(
    orphan: Message, known: Iterable[Message], order: dict[str, float]
) -> str | None:
    """The known message stored last before `orphan` whose role it can follow (another
    speaker's), or None: a first message's version."""
    at = order.get(orphan.id, float("inf"))
    earlier = [m for m in known if m.role != orphan.role and order.get(m.id, float("inf")) < at]
    return max(earlier, key=lambda m: order[m.id]).id if earlier else None


def _place_the_rest(order: dict[str, float], stored: Sequence[Message]) -> None:
    """A message without an "order" in the file, or that the repair added, goes right
    after the one before it (`order`: where each was first stored, by new id)."""
    before = -1.0
    for message in stored:
        before = order.setdefault(message.id, before + 1e-6)


def _chat_settings(raw: Any, reader: Fields) -> ContextSettings:
    """`chat.settings`, each known key of the right type and range (unknown keys are
    ignored: a newer ContextDesk may have more)."""
    if raw is None:
        return ContextSettings()
    if not isinstance(raw, dict):
        reader.problem("chat.settings", "Input should be a valid object")
        return ContextSettings()
    defaults = ContextSettings()
    values: dict[str, Any] = {}
    for f in fields(ContextSettings):
        if f.name not in raw:
            continue
        default = getattr(defaults, f.name)
        if f.name in NAME_LISTS:  # a list of names (comma-separated text, exported earlier)
            listed = names(raw[f.name])
            if listed is None:
                reader.problem(f"chat.settings.{f.name}", "Input should be a list of names")
            else:
                values[f.name] = listed
        elif same_type(raw[f.name], default):
            values[f.name] = raw[f.name]
        else:
            kind = "a finite number" if isinstance(default, float) else type(default).__name__
            reader.problem(f"chat.settings.{f.name}", f"Input should be {kind}")
    if "thinking" not in raw:  # exported before thinking had modes: a budget, or 0 for none
        values["thinking"] = "budget" if values.get("thinking_budget") else "adaptive"
    settings = ContextSettings(**values)
    for problem in settings.problems():
        reader.problem("chat.settings", problem)
    return settings


def _context_state(data: dict[str, Any], new_ids: dict[str, str], reader: Fields) -> ContextState:
    facts = [
        fact
        for i, raw in enumerate(reader.array(data, "facts"))
        if (fact := _fact(raw, f"facts.{i}", reader)) is not None
    ]
    summaries: list[Summary] = []
    summary_ids: dict[str, str] = {}
    for i, raw in enumerate(reader.array(data, "summaries")):
        path = f"summaries.{i}"
        if not isinstance(raw, dict) or not isinstance(raw.get("text"), str):
            reader.problem(f"{path}.text", "Field required")
            continue
        number = raw.get("number", i + 1)
        if not isinstance(number, int) or isinstance(number, bool) or number < 1:
            reader.problem(f"{path}.number", "Input should be a positive integer")
            continue
        covers = tuple(new_ids[c] for c in reader.strings(raw, "covers", path) if c in new_ids)
        fresh = new_id("sum")
        if isinstance(raw.get("id"), str):
            summary_ids[raw["id"]] = fresh
        replaced = raw.get("replaces")
        summaries.append(
            Summary(
                id=fresh,
                replaces=summary_ids.get(replaced) if isinstance(replaced, str) else None,
                number=number,
                covers=covers,
                text=sanitize(raw["text"]),
                model=sanitize(reader.string(raw, "model", path, required=False)),
                instructions=sanitize(reader.string(raw, "instructions", path, required=False)),
                warnings=tuple(sanitize(w) for w in reader.strings(raw, "warnings", path)),
                edited=reader.flag(raw, "edited", path),
                undone=reader.flag(raw, "undone", path),
                created_at=when(raw.get("created_at")),
            )
        )
    context = data.get("context")
    if context is not None and not isinstance(context, dict):
        reader.problem("context", "Input should be a valid object")
    context = object_of(context)
    excluded = frozenset(
        new_ids[m] for m in reader.strings(context, "excluded_messages", "context") if m in new_ids
    )
    blocks = frozenset(
        (new_ids[k[0]], k[1])
        for k in reader.array(context, "excluded_blocks", "context")
        if isinstance(k, list)
        and len(k) == 2
        and isinstance(k[0], str)
        and k[0] in new_ids
        and isinstance(k[1], int)
        and not isinstance(k[1], bool)
    )
    cleared = frozenset(sanitize(c) for c in reader.strings(context, "cleared_results", "context"))
    return ContextState(tuple(facts), tuple(summaries), excluded, blocks, cleared)


FACT_SOURCES = tuple(s.value for s in FactSource)


def _fact(raw: Any, path: str, reader: Fields) -> Fact | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("text"), str) or not raw["text"].strip():
        reader.problem(f"{path}.text", "Field required")
        return None
    fields = []
    for j, pair in enumerate(reader.array(raw, "fields", path)):
        if isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair):
            fields.append((sanitize(pair[0]), sanitize(pair[1])))
        else:
            reader.problem(f"{path}.fields.{j}", "Input should be a [name, value] pair of strings")
    source = raw.get("source", "user")
    if source not in FACT_SOURCES:
        words = ", ".join(f"'{s}'" for s in FACT_SOURCES)
        reader.problem(f"{path}.source", f"Input should be one of {words}")
        return None
    pending, made = reader.flag(raw, "pending", path), when(raw.get("created_at"))
    edited = max(made, when(raw.get("updated_at"), made))  # (never before it was made)
    fact = Fact(sanitize(raw["text"]), tuple(fields), FactSource(source), pending=pending)
    return replace(fact, created_at=made, updated_at=edited)


def _no_constants(name: str) -> Any:
    """NaN, Infinity and -Infinity are not JSON (Python's reader accepts them)."""
    raise ValueError(f"{name} is not a JSON value")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _title_from(messages: Sequence[Message], untitled: str) -> str:
    from desktop_app.core.titles import title_from

    first = next((m.text for m in messages if m.role == "user" and m.text.strip()), "")
    return title_from(first, untitled)
