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
    IMAGE_MEDIA_TYPES,
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
from desktop_app.core.history import tool_calls, without_trailing_whitespace
from desktop_app.core.messages import Message
from desktop_app.core.protocol import (
    EMPTY_ERROR_RESULT,
    SURROGATE,
    TOOL_ID_PATTERN,
    _json_valid_utf8,
    _valid_utf8,
    error_has_content,
    lone_surrogate_at,
    orphan_server_result,
    validate,
)

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

    def __str__(self) -> str:
        return f"{self.path}: {self.action} — {self.reason}"


@dataclass(frozen=True, slots=True)
class RepairResult:
    messages: tuple[Message, ...]
    repairs: tuple[Repair, ...]
    problems: tuple[Problem, ...] = ()  # what the validator found before repairing

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


def repair(messages: Sequence[Message]) -> RepairResult:
    """A valid history with the same content, and a report of every change.

    Validates first (the problems are in the result), so callers need not."""
    problems = validate(messages) if messages else []
    if not problems:
        return RepairResult(tuple(messages), ())  # the common case: nothing to do
    dirty = _implicated(problems)
    fixer = _Fixer(messages)
    entries: list[_Entry] = [_Item(m, i) if i in dirty else i for i, m in enumerate(messages)]
    entries = fixer.clean_blocks(entries)
    entries = fixer.merge_neighbours(entries)
    entries = fixer.thinking_first(entries)
    entries = fixer.pair_tool_calls(entries)
    entries = fixer.user_first(entries)
    entries = fixer.final_whitespace(entries)
    return RepairResult(tuple(map(fixer.message, entries)), tuple(fixer.repairs), tuple(problems))


_MESSAGE_INDEX = re.compile(r"messages\.(\d+)")


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


_IMAGE_MAGIC = {
    "iVBORw0KGgo": "image/png",
    "/9j/": "image/jpeg",
    "R0lGOD": "image/gif",
    "UklGR": "image/webp",
}


def _sniff_media_type(data: str) -> str | None:
    return next((t for magic, t in _IMAGE_MAGIC.items() if data.startswith(magic)), None)


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
    def __init__(self, source: Sequence[Message]) -> None:
        self.source = source
        self.repairs: list[Repair] = []

    def message(self, entry: _Entry) -> Message:
        return self.source[entry] if isinstance(entry, int) else entry.msg

    def item(self, entry: _Entry) -> _Item:
        """The entry as an `_Item`, ready to change."""
        return _Item(self.source[entry], entry) if isinstance(entry, int) else entry

    def report(self, path: str, action: str, reason: str) -> None:
        self.repairs.append(Repair(path, action, reason))

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
            for j, block in enumerate(item.msg.blocks):
                fixed = self.clean_block(block, item.msg.role, f"{path}.content.{j}")
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
        if isinstance(block, ImageBlock) and not block.data:
            self.report(path, "removed an image with no data", "image data must be non-empty")
            return None
        if isinstance(block, ImageBlock) and block.media_type not in IMAGE_MEDIA_TYPES:
            sniffed = _sniff_media_type(block.data)
            if sniffed:
                self.report(
                    path,
                    f"set the image type to {sniffed} (was {block.media_type!r})",
                    "the API accepts only JPEG, PNG, GIF and WebP, and the data is " + sniffed,
                )
                return ImageBlock(sniffed, block.data)
            self.report(
                path,
                "replaced an image of unknown type with a note",
                f"the API cannot read {block.media_type!r} images",
            )
            return note(f"an image of type {block.media_type!r} was here; the API cannot read it")
        if isinstance(block, ToolResultBlock) and not isinstance(block.content, str):
            parts = tuple(
                p for p in block.content if not (isinstance(p, TextBlock) and not p.text.strip())
            )
            if len(parts) != len(block.content):
                self.report(
                    path,
                    "removed empty text from a tool result",
                    "text content blocks must be non-empty",
                )
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
        out: list[_Entry] = []
        for entry in entries:
            if out and self.message(out[-1]).role == self.message(entry).role:
                prev = out[-1] = self.item(out[-1])
                item = self.item(entry)
                self.report(
                    f"messages.{item.origin}",
                    f"merged into the {item.msg.role} message before it",
                    "roles must alternate between user and assistant",
                )
                prev.msg = _revised(prev.msg, prev.msg.blocks + item.msg.blocks)
            else:
                out.append(entry)
        return out

    # -- step 3: thinking leads -------------------------------------------------------------

    def thinking_first(self, entries: list[_Entry]) -> list[_Entry]:
        for item in entries:
            if isinstance(item, int) or item.msg.role != "assistant":
                continue
            blocks = item.msg.blocks
            if isinstance(blocks[0], _THINKING):
                continue
            thinking = [b for b in blocks if isinstance(b, _THINKING)]
            if thinking:
                rest = [b for b in blocks if not isinstance(b, _THINKING)]
                item.msg = _revised(item.msg, (*thinking, *rest))
                self.report(
                    f"messages.{item.origin}",
                    "moved thinking blocks to the front",
                    "if an assistant message contains thinking, the first block must be thinking",
                )
        return entries

    # -- step 4: every call answered once, every result with its call -----------------------

    def pair_tool_calls(self, entries: list[_Entry]) -> list[_Entry]:
        out: list[_Entry] = []
        seen: set[str] = set()
        calls: list[ToolUseBlock] = []  # the previous assistant message's calls, in order
        renamed: dict[str, list[str]] = {}
        calls_dirty = False  # the previous assistant message was near a problem
        origin = 0
        for entry in entries:
            msg = self.message(entry)
            origin = entry if isinstance(entry, int) else entry.origin
            if msg.role == "assistant":
                if calls:
                    out.append(self.results_message(calls, origin))
                if isinstance(entry, int):  # valid already: its ids are unique and well-formed
                    calls, renamed = tool_calls(msg), {}
                    seen.update(c.id for c in calls)
                else:
                    calls, renamed = self.unique_calls(entry, seen)
                calls_dirty = not isinstance(entry, int)
            else:
                if calls_dirty or not isinstance(entry, int):
                    entry = self.item(entry)
                    self.answer_calls(entry, calls, renamed)
                calls, renamed = [], {}
            out.append(entry)
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
        others: list[Block] = []
        for block in item.msg.blocks:
            if not isinstance(block, ToolResultBlock):
                others.append(block)
                continue
            tid = block.tool_use_id
            if tid not in waiting and renamed.get(tid):
                tid = renamed[tid].pop(0)
                block = replace(block, tool_use_id=tid)
            if tid in waiting and tid not in results:
                results[tid] = block
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

    # -- step 5 and 6: the ends ---------------------------------------------------------------

    def user_first(self, entries: list[_Entry]) -> list[_Entry]:
        if entries and self.message(entries[0]).role != "user":
            self.report(
                "messages.0",
                "inserted a note as the first user message",
                "the first message must use the user role",
            )
            opener = Message(
                role="user",
                blocks=(note("the conversation starts with a reply from the assistant"),),
            )
            entries.insert(0, _Item(opener, 0))
        return entries

    def final_whitespace(self, entries: list[_Entry]) -> list[_Entry]:
        while entries and self.message(entries[-1]).role == "assistant":
            last = self.item(entries[-1])
            stripped = without_trailing_whitespace(last.msg)
            if stripped is last.msg:
                break
            self.report(
                f"messages.{last.origin}",
                "removed trailing whitespace",
                "final assistant content cannot end with trailing whitespace",
            )
            if stripped.blocks:
                last.msg = _revised(last.msg, stripped.blocks)
                entries[-1] = last
                break
            entries.pop()  # it held nothing but whitespace
        return entries


def _revised(msg: Message, blocks: tuple[Block, ...]) -> Message:
    return replace(msg, blocks=blocks, revision=msg.revision + 1)
