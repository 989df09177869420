"""Turning any stored history into one the API accepts, without losing what people wrote.

Histories break in known ways: a crash mid-stream, a cancel while a tool ran, a message
deleted by hand, an import edited in a text editor. `repair` fixes each, in an order that
keeps the most structure (merge neighbours before pairing calls with results), and reports
every change: where (the JSON path in the input), what, and why.

Content is never dropped when it carries meaning: a misplaced tool call or an orphan result
becomes a text note. Only things with no content (empty text, empty messages) and things the
API can never accept back (thinking without its signature) are removed, and those are
reported too.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from desktop_app.core.blocks import (
    Block,
    ImageBlock,
    OpaqueBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from desktop_app.core.errors import Problem
from desktop_app.core.history import EarlierCallIds, tool_calls, without_trailing_whitespace
from desktop_app.core.images import (
    MANY_IMAGES,
    MANY_IMAGES_MAX_EDGE,
    MAX_BASE64_BYTES,
    MAX_EDGE,
    fit_image,
    image_facts,
)
from desktop_app.core.messages import Message
from desktop_app.core.protocol import (
    EMPTY_ERROR_RESULT,
    IMAGE_MISMATCH,
    SERVER_ID_PATTERN,
    SERVER_TOOL_ID,
    SURROGATE,
    TOOL_ID_PATTERN,
    UNANSWERED_SERVER_CALL,
    _json_valid_utf8,
    _valid_utf8,
    continues_turn,
    error_has_content,
    lone_surrogate_at,
    orphan_server_result,
    server_result_kind,
    turn_in_progress,
    unanswered_server_calls,
    validate_from,
)
from desktop_app.core.valid_prefix import ValidPrefix

INTERRUPTED_RESULT = (
    "Interrupted: {name} did not return a result (the turn was stopped or the app closed "
    "before it finished). It may or may not have run."
)
_THINKING = (ThinkingBlock, RedactedThinkingBlock)


@dataclass(frozen=True, slots=True)
class Repair:
    path: str  # where, as a JSON path into the history that was repaired
    action: str  # what changed
    reason: str  # why (usually the API rule it would have broken)
    normalisation: bool = False  # a change the API would make itself (not a fix)

    def __str__(self) -> str:
        kind = " (a normalisation: the API does the same)" if self.normalisation else ""
        return f"{self.path}: {self.action} — {self.reason}{kind}"


@dataclass(frozen=True, slots=True)
class RepairResult:
    messages: Sequence[Message]  # (the history given, when it needed nothing)
    repairs: tuple[Repair, ...]
    problems: tuple[Problem, ...] = ()  # what the validator found before repairing
    valid_prefix: ValidPrefix | None = None  # where the next check may go on from

    @property
    def changed(self) -> bool:
        return bool(self.repairs)


@dataclass(slots=True)
class _Item:
    """A message being repaired, and where it came from (for paths in the report)."""

    msg: Message
    origin: int


# The passes work on entries: an `_Item` for each message near a problem the validator
# found, and for every other message just its index in the input. Those are valid already
# and pass through untouched, which keeps repairing a long history fast.
_Entry = _Item | int


def repair(messages: Sequence[Message], since: ValidPrefix | None = None) -> RepairResult:
    """A valid history with the same content, and a report of every change.

    Validates first (the problems are in the result), so callers need not — from
    `since` on, when the history goes on from it (`protocol.validate_from`)."""
    problems, point = validate_from(messages, since) if messages else ([], None)
    if not problems:  # the common case: nothing to do (not even a copy)
        return RepairResult(messages, (), valid_prefix=point)
    dirty = _implicated(problems)
    many_images = any(".image." in p.path for p in problems) and image_count(messages) > MANY_IMAGES
    fixer = _Fixer(messages, MANY_IMAGES_MAX_EDGE if many_images else MAX_EDGE)
    entries: list[_Entry] = [_Item(m, i) if i in dirty else i for i, m in enumerate(messages)]
    entries = fixer.clean_blocks(entries)
    entries = fixer.merge_neighbours(entries)
    entries = fixer.thinking_first(entries)
    entries = fixer.pair_tool_calls(entries)
    entries = fixer.answer_server_calls(entries)
    entries = fixer.final_block(entries)
    return RepairResult(tuple(map(fixer.message, entries)), tuple(fixer.repairs), tuple(problems))


_MESSAGE_INDEX = re.compile(r"messages\.(\d+)")


def image_count(messages: Sequence[Message]) -> int:
    """Images in the history, tool results' included (the many-image rule counts them all)."""
    count = 0
    for message in messages:
        for block in message.blocks:
            if type(block) is ImageBlock:
                count += 1
            elif type(block) is ToolResultBlock and not isinstance(block.content, str):
                count += sum(type(p) is ImageBlock for p in block.content)
    return count


def _implicated(problems: list[Problem]) -> set[int]:
    """Indices of the messages a problem names, and their neighbours (a call's problem
    is fixed in the next message; a role clash involves the one before)."""
    out: set[int] = set()
    for problem in problems:
        match = _MESSAGE_INDEX.match(problem.path)
        index = int(match.group(1)) if match else 0
        out.update((index - 1, index, index + 1))
    return out


EMPTY_ERROR_NOTE = "[ContextDesk note: the tool failed and gave no details]"


def note(text: str) -> TextBlock:
    """A text block that says ContextDesk wrote it, not the user or the model."""
    return TextBlock(f"[ContextDesk note: {text}]")


def sanitize(text: str) -> str:
    """Replace lone surrogates with U+FFFD (what a lenient UTF-8 decoder would show)."""
    if lone_surrogate_at(text) < 0:
        return text
    return SURROGATE.sub("\ufffd", text)


def _sanitize_json(value: Any) -> Any:
    if isinstance(value, str):
        return sanitize(value)
    if isinstance(value, dict):
        return {sanitize(k): _sanitize_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_sanitize_json(v) for v in value]
    return value


def _sanitized_part(
    part: TextBlock | ImageBlock | OpaqueBlock,
) -> TextBlock | ImageBlock | OpaqueBlock:
    if isinstance(part, TextBlock):
        return replace(
            part, text=sanitize(part.text), citations=tuple(_sanitize_json(list(part.citations)))
        )
    if isinstance(part, OpaqueBlock):
        return replace(part, raw=_sanitize_json(part.raw))
    return part


def _sanitized(block: Block) -> Block:
    """The block with every lone surrogate replaced (`block` itself when it had none)."""
    if _block_valid_utf8(block):
        return block
    if isinstance(block, TextBlock | OpaqueBlock):
        return _sanitized_part(block)
    if isinstance(block, ThinkingBlock):
        return replace(block, thinking=sanitize(block.thinking))
    if isinstance(block, ToolUseBlock):
        return replace(block, name=sanitize(block.name), input=_sanitize_json(block.input))
    if isinstance(block, ToolResultBlock):
        content = block.content
        if isinstance(content, str):
            return replace(block, content=sanitize(content))
        return replace(block, content=tuple(_sanitized_part(p) for p in content))
    return block


def _block_valid_utf8(block: Block) -> bool:
    if isinstance(block, TextBlock):
        return _valid_utf8(block.text) and _json_valid_utf8(list(block.citations))
    if isinstance(block, ThinkingBlock):
        return _valid_utf8(block.thinking)
    if isinstance(block, ToolUseBlock):
        return _valid_utf8(block.name) and _json_valid_utf8(block.input)
    if isinstance(block, ToolResultBlock):
        if isinstance(block.content, str):
            return _valid_utf8(block.content)
        return all(_block_valid_utf8(part) for part in block.content)
    if isinstance(block, OpaqueBlock):
        return _json_valid_utf8(block.raw)
    return True


def _result_as_text(block: ToolResultBlock) -> str:
    kind = "error result" if block.is_error else "result"
    return f"{kind} of tool call {block.tool_use_id}: {block.text}"


def _new_tool_id() -> str:
    return f"toolu_repaired_{uuid.uuid4().hex[:16]}"


class _Fixer:
    def __init__(self, source: Sequence[Message], max_edge: int = MAX_EDGE) -> None:
        self.source = source
        self.max_edge = max_edge  # what each side of an image may be in this request
        self.repairs: list[Repair] = []

    def message(self, entry: _Entry) -> Message:
        return self.source[entry] if isinstance(entry, int) else entry.msg

    def item(self, entry: _Entry) -> _Item:
        """The entry as an `_Item`, ready to change."""
        return _Item(self.source[entry], entry) if isinstance(entry, int) else entry

    def report(self, path: str, action: str, reason: str, *, normalisation: bool = False) -> None:
        self.repairs.append(Repair(path, action, reason, normalisation))

    # -- step 1: each block on its own ------------------------------------------------

    def clean_blocks(self, entries: list[_Entry]) -> list[_Entry]:
        out: list[_Entry] = []
        for item in entries:
            if isinstance(item, int):
                out.append(item)
                continue
            path = f"messages.{item.origin}"
            blocks: list[Block] = []
            server_calls: set[str] = set()
            server_ids: dict[str, str] = {}  # malformed server call id → the one it got
            for j, block in enumerate(item.msg.blocks):
                fixed = self.clean_block(block, item.msg.role, f"{path}.content.{j}")
                if isinstance(fixed, OpaqueBlock) and item.msg.role == "assistant":
                    fixed = self.server_id(fixed, server_ids, f"{path}.content.{j}")
                if fixed is not None and item.msg.role == "assistant":
                    fixed = self.orphan_server_result(fixed, server_calls, f"{path}.content.{j}")
                if fixed is not None:
                    blocks.append(fixed)
            if tuple(blocks) != item.msg.blocks:
                item.msg = _revised(item.msg, tuple(blocks))
            if not blocks:
                self.report(
                    path, "removed an empty message", "all messages must have non-empty content"
                )
                continue
            out.append(item)
        return out

    def clean_block(self, block: Block, role: str, path: str) -> Block | None:
        clean = _sanitized(block)
        if clean is not block:
            self.report(
                path, "replaced lone surrogates with U+FFFD", "every string must be valid UTF-8"
            )
            block = clean
        if isinstance(block, TextBlock):
            if block.text.strip():
                return block
            self.report(
                path, "removed an empty text block", "text content blocks must be non-empty"
            )
            return None
        if isinstance(block, ImageBlock):
            return self.image(block, path)
        if isinstance(block, ToolResultBlock) and not isinstance(block.content, str):
            parts = self.result_parts(block.content, path)
            if parts != block.content:
                block = replace(block, content=parts)
        if isinstance(block, ToolResultBlock) and block.is_error and not error_has_content(block):
            self.report(
                path,
                f"gave the empty error result of tool call {block.tool_use_id} a note",
                EMPTY_ERROR_RESULT,
            )
            block = replace(block, content=EMPTY_ERROR_NOTE)
        if role == "user":
            return self.misplaced_in_user(block, path)
        return self.misplaced_in_assistant(block, path)

    def result_parts(
        self, parts: tuple[TextBlock | ImageBlock | OpaqueBlock, ...], path: str
    ) -> tuple[TextBlock | ImageBlock | OpaqueBlock, ...]:
        kept: list[TextBlock | ImageBlock | OpaqueBlock] = []
        for k, part in enumerate(parts):
            if isinstance(part, TextBlock) and not part.text.strip():
                self.report(
                    f"{path}.content.{k}",
                    "removed empty text from a tool result",
                    "text content blocks must be non-empty",
                )
            elif isinstance(part, ImageBlock):
                fixed = self.image(part, f"{path}.content.{k}")
                if fixed is not None:
                    kept.append(fixed)
            else:
                kept.append(part)
        return tuple(kept)

    def image(self, block: ImageBlock, path: str) -> ImageBlock | TextBlock | None:
        """An image the API accepts: relabelled when its type is wrong, scaled down or
        re-encoded when it is too large, a note saying what it was when it cannot be read."""
        if not block.data:
            self.report(path, "removed an image with no data", "image data must be non-empty")
            return None
        facts = image_facts(block.data)
        if facts.media_type is None:
            self.report(
                path,
                "replaced an unreadable image with a note",
                f"the data is not a JPEG, PNG, GIF or WebP image (declared {block.media_type!r})",
            )
            return note(
                f"an image ({block.media_type or 'unknown type'}, "
                f"{len(block.data) * 3 // 4:,} bytes) was here; its data could not be read"
            )
        if facts.media_type != block.media_type:
            self.report(
                path,
                f"set the image type to {facts.media_type} (was {block.media_type!r})",
                IMAGE_MISMATCH.format(declared=block.media_type, found=facts.media_type),
            )
            block = ImageBlock(facts.media_type, block.data)
        too_wide = facts.size is not None and max(facts.size) > self.max_edge
        if not too_wide and len(block.data) <= MAX_BASE64_BYTES:
            return block
        fitted = fit_image(block.data, self.max_edge)
        width, height = facts.size or (0, 0)
        was = f"{width}×{height} px, {len(block.data) * 3 // 4 / 1e6:.1f} MB"
        many = f" when a request holds more than {MANY_IMAGES} images"
        why = (
            f"each side may be at most {self.max_edge:,} px"
            f"{many if self.max_edge < MAX_EDGE else ''} and the base64 data at most 5 MB"
        )
        if fitted is None:
            self.report(path, f"replaced an image too large to send ({was}) with a note", why)
            return note(f"an image ({was}) was here; too large to send, it could not be scaled")
        kind, data = fitted
        self.report(path, f"scaled the image down to fit ({was} before)", why)
        return ImageBlock(kind, data)

    def server_id(self, block: OpaqueBlock, renamed: dict[str, str], path: str) -> OpaqueBlock:
        """A server call's id that breaks ^srvtoolu_[a-zA-Z0-9_]+$ gets one that keeps it,
        and the result answering it follows."""
        if block.type == "server_tool_use":
            old = str(block.raw.get("id", ""))
            if SERVER_TOOL_ID.fullmatch(old):
                return block
            tail = re.sub(r"[^a-zA-Z0-9_]", "_", old.removeprefix("srvtoolu_")) or uuid.uuid4().hex
            new = renamed[old] = f"srvtoolu_{tail}"
            self.report(path, f"gave the server tool call {old!r} the id {new}", SERVER_ID_PATTERN)
            return replace(block, raw={**block.raw, "id": new})
        answered = block.raw.get("tool_use_id")
        if block.type.endswith("_tool_result") and answered in renamed:
            return replace(block, raw={**block.raw, "tool_use_id": renamed[str(answered)]})
        return block

    def orphan_server_result(self, block: Block, calls: set[str], path: str) -> Block:
        """A server tool's result whose call is not before it in its message becomes a
        note saying what it was (its call was lost, e.g. to an earlier cut)."""
        problem = orphan_server_result(block, calls)
        if problem is None or not isinstance(block, OpaqueBlock):
            return block
        tool_use_id = block.raw.get("tool_use_id", "")
        self.report(path, f"turned a `{block.type}` whose call is missing into a note", problem)
        return note(f"a {block.type} for {tool_use_id} was here; its call was missing")

    def misplaced_in_user(self, block: Block, path: str) -> Block | None:
        if isinstance(block, ToolUseBlock):
            self.report(
                path,
                f"turned tool call {block.id} ({block.name}) into a text note",
                "`tool_use` blocks can only be in `assistant` messages",
            )
            tool_input = json.dumps(block.input, ensure_ascii=False)
            return note(f"call to tool {block.name} with input {tool_input}")
        if isinstance(block, ThinkingBlock):
            self.report(
                path,
                "turned a thinking block into text",
                "thinking blocks can only be in `assistant` messages",
            )
            return note(f"thinking: {block.thinking}") if block.thinking.strip() else None
        if isinstance(block, RedactedThinkingBlock):
            self.report(
                path,
                "removed a redacted thinking block",
                "thinking blocks can only be in `assistant` messages",
            )
            return None
        return block

    def misplaced_in_assistant(self, block: Block, path: str) -> Block | None:
        if isinstance(block, ToolResultBlock):
            self.report(
                path,
                f"turned the result for {block.tool_use_id} into a text note",
                "`tool_result` blocks can only be in `user` messages",
            )
            return note(_result_as_text(block))
        if isinstance(block, ToolUseBlock) and not block.name:
            self.report(
                path,
                f"named the nameless tool call {block.id!r} 'unnamed_tool'",
                "a `tool_use` block needs a name",
            )
            return replace(block, name="unnamed_tool")
        if isinstance(block, ThinkingBlock) and not block.signature:
            self.report(
                path,
                f"removed unsigned thinking ({len(block.thinking)} characters)",
                "the API accepts thinking back only with the signature it was sent with "
                "(this one was cut off before its signature arrived)",
            )
            return None
        return block

    # -- step 2: same-role neighbours -----------------------------------------------------

    def merge_neighbours(self, entries: list[_Entry]) -> list[_Entry]:
        """Consecutive messages of one role become one, as the API merges them (so the
        later steps see one turn per message)."""
        out: list[_Entry] = []
        source = self.source
        last_role = ""
        for entry in entries:
            role = source[entry].role if type(entry) is int else entry.msg.role  # type: ignore[union-attr]
            if role == last_role:
                prev = out[-1] = self.item(out[-1])
                item = self.item(entry)
                self.report(
                    f"messages.{item.origin}",
                    f"merged into the {item.msg.role} message before it",
                    f"consecutive {item.msg.role} messages form one turn",
                    normalisation=True,
                )
                prev.msg = _revised(prev.msg, prev.msg.blocks + item.msg.blocks)
            else:
                out.append(entry)
                last_role = role
        return out

    def answer_server_calls(self, entries: list[_Entry]) -> list[_Entry]:
        """A server tool call whose result never came (a paused turn stored as finished)
        becomes a note, unless the next message carries the turn on."""
        for n, item in enumerate(entries):
            if isinstance(item, int) or item.msg.role != "assistant":
                continue
            following = self.message(entries[n + 1]) if n + 1 < len(entries) else None
            unanswered = unanswered_server_calls(item.msg.blocks)
            if not unanswered or continues_turn(following):
                continue
            blocks = list(item.msg.blocks)
            for at in unanswered:
                call = blocks[at]
                assert isinstance(call, OpaqueBlock)
                name, call_id = call.raw.get("name", call.type), call.raw.get("id", "")
                self.report(
                    f"messages.{item.origin}.content.{at}",
                    f"turned the {name} call {call_id}, whose result never came, into a note",
                    UNANSWERED_SERVER_CALL.format(
                        name=name, id=call_id, result=server_result_kind(call)
                    ),
                )
                query = json.dumps(call.raw.get("input", {}), ensure_ascii=False)[:300]
                blocks[at] = note(f"a {name} call with input {query} was made; no result came")
            item.msg = _revised(item.msg, tuple(blocks))
        return entries

    # -- step 3: thinking leads, or goes ----------------------------------------------------

    def thinking_first(self, entries: list[_Entry]) -> list[_Entry]:
        """Thinking after other content is removed: a signed thinking block is never moved,
        merged or edited (the API checks its signature), and the API ignores earlier
        turns' thinking anyway."""
        current: int | None = -1  # found on first need: the list costs a pass
        for n, item in enumerate(entries):
            if isinstance(item, int) or item.msg.role != "assistant":
                continue
            blocks = item.msg.blocks
            lead = 0
            while lead < len(blocks) and isinstance(blocks[lead], _THINKING):
                lead += 1
            late = [b for b in blocks[lead:] if isinstance(b, _THINKING)]
            if not late:
                continue
            kept = blocks[:lead] + tuple(b for b in blocks[lead:] if not isinstance(b, _THINKING))
            item.msg = _revised(item.msg, kept)
            if current == -1:
                current = turn_in_progress([self.message(e) for e in entries])
            whose = (
                "the turn still in progress (the next request may not carry thinking)"
                if current is not None and n >= current
                else "an earlier turn"
            )
            self.report(
                f"messages.{item.origin}",
                f"removed {len(late)} thinking block(s) from the middle of {whose}",
                "if an assistant message contains thinking, the first block must be thinking; "
                "a signed thinking block cannot be moved",
            )
        return entries

    # -- step 4: every call answered once, every result with its call -----------------------

    def pair_tool_calls(self, entries: list[_Entry]) -> list[_Entry]:
        out: list[_Entry] = []
        seen = EarlierCallIds(self.source)
        calls: list[ToolUseBlock] = []  # the previous assistant message's calls, in order
        renamed: dict[str, list[str]] = {}
        calls_dirty = False  # the previous assistant message was near a problem
        clean_lead: Message | None = None  # a valid assistant message whose calls wait
        origin = 0
        source = self.source
        for entry in entries:
            if type(entry) is int:  # valid already: its ids are unique and well-formed
                origin = entry
                msg = source[entry]
                if msg.role == "assistant":
                    if calls:
                        out.append(self.results_message(calls, origin))
                    calls, renamed, calls_dirty, clean_lead = [], {}, False, msg
                elif calls_dirty:
                    entry = self.item(entry)
                    self.answer_calls(entry, calls, renamed)
                    calls, renamed, calls_dirty = [], {}, False
                else:
                    clean_lead = None  # its calls were answered: the history was valid here
                out.append(entry)
                continue
            assert isinstance(entry, _Item)
            origin = entry.origin
            if clean_lead is not None:  # a valid assistant message before a repaired one
                calls, clean_lead = tool_calls(clean_lead), None
            if entry.msg.role == "assistant":
                if calls:
                    out.append(self.results_message(calls, origin))
                calls, renamed = self.unique_calls(entry, seen.before(origin))
                calls_dirty = True
            else:
                self.answer_calls(entry, calls, renamed)
                calls, renamed, calls_dirty = [], {}, False
            out.append(entry)
        if clean_lead is not None:
            calls = tool_calls(clean_lead)
        if calls:
            out.append(self.results_message(calls, origin))
        return out

    def unique_calls(
        self, item: _Item, seen: set[str]
    ) -> tuple[list[ToolUseBlock], dict[str, list[str]]]:
        """Give duplicate or malformed tool ids fresh ones; return the calls and old→new ids."""
        calls: list[ToolUseBlock] = []
        renamed: dict[str, list[str]] = {}
        blocks: list[Block] = []
        for block in item.msg.blocks:
            if isinstance(block, ToolUseBlock):
                if block.id in seen or not TOOL_ID_PATTERN.fullmatch(block.id):
                    new = _new_tool_id()
                    self.report(
                        f"messages.{item.origin}",
                        f"gave tool call {block.id!r} the new id {new}",
                        "`tool_use` ids must be unique and match ^[a-zA-Z0-9_-]+$",
                    )
                    renamed.setdefault(block.id, []).append(new)
                    block = replace(block, id=new)
                seen.add(block.id)
                calls.append(block)
            blocks.append(block)
        if renamed:
            item.msg = _revised(item.msg, tuple(blocks))
        return calls, renamed

    def answer_calls(
        self, item: _Item, calls: list[ToolUseBlock], renamed: dict[str, list[str]]
    ) -> None:
        """Rebuild a user message: one result per call, first, in call order; the rest after."""
        path = f"messages.{item.origin}"
        waiting = {c.id for c in calls}
        results: dict[str, ToolResultBlock] = {}
        positions: dict[str, int] = {}  # where each accepted result was
        others: list[Block] = []
        for position, block in enumerate(item.msg.blocks):
            if not isinstance(block, ToolResultBlock):
                others.append(block)
                continue
            tid = block.tool_use_id
            if tid not in waiting and renamed.get(tid):
                tid = renamed[tid].pop(0)
                block = replace(block, tool_use_id=tid)
            if tid in waiting and tid not in results:
                results[tid] = block
                positions[tid] = position
            else:
                why = (
                    "it answers a call already answered"
                    if tid in results
                    else "no call in the previous message has its id"
                )
                self.report(path, f"turned the result for {tid} into a text note", why)
                others.append(note(_result_as_text(block)))
        ordered = [results.get(c.id) or self.interrupted(c, path) for c in calls]
        new_blocks = (*ordered, *others)
        order = [positions[c.id] for c in calls if c.id in positions]
        if order != list(range(len(order))):
            self.report(
                path,
                "moved the tool results to the front, in the order of their calls",
                "`tool_result` blocks must come first in the user message content",
            )
        if new_blocks != item.msg.blocks:
            item.msg = _revised(item.msg, new_blocks)

    def results_message(self, calls: list[ToolUseBlock], origin: int) -> _Item:
        """A new user message answering `calls` that had no user message after them."""
        path = f"messages.{origin}"
        blocks = tuple(self.interrupted(c, path) for c in calls)
        return _Item(Message(role="user", blocks=blocks), origin)

    def interrupted(self, call: ToolUseBlock, path: str) -> ToolResultBlock:
        self.report(
            path,
            f"added an 'interrupted' error result for tool call {call.id} ({call.name})",
            "every `tool_use` needs a `tool_result` in the next message",
        )
        return ToolResultBlock(call.id, INTERRUPTED_RESULT.format(name=call.name), is_error=True)

    # -- step 5: the end ------------------------------------------------------------------

    def final_block(self, entries: list[_Entry]) -> list[_Entry]:
        """A final assistant message may not end with whitespace or with thinking."""
        while entries and self.message(entries[-1]).role == "assistant":
            last = self.item(entries[-1])
            kept = without_trailing_whitespace(last.msg)
            if kept is not last.msg:
                self.report(
                    f"messages.{last.origin}",
                    "removed trailing whitespace",
                    "final assistant content cannot end with trailing whitespace",
                )
            blocks = kept.blocks
            while blocks and isinstance(blocks[-1], _THINKING):
                blocks = blocks[:-1]
                self.report(
                    f"messages.{last.origin}",
                    "removed the thinking that ended the reply (it was cut off after thinking)",
                    "the final block in an assistant message cannot be `thinking`",
                )
            if blocks == last.msg.blocks:
                break
            if blocks:
                last.msg = _revised(last.msg, blocks)
                entries[-1] = last
                break
            entries.pop()  # it held nothing else
        return entries


def _revised(msg: Message, blocks: tuple[Block, ...]) -> Message:
    return replace(msg, blocks=blocks, revision=msg.revision + 1)
