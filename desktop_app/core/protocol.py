"""The Messages API's conversation rules, checked before anything is sent.

`validate` returns every violation with its JSON path, worded like the API's own 400
messages, so a user who has met the API's error recognises ours. It checks invariants
1–6 and 9 (docs/architecture.md, *Invariants*) on the messages exactly as they would be sent.

It runs on every send, on import and in property tests, so it is written for speed: one
pass; a valid block costs a type check and C-speed string checks; JSON paths and
messages are built only for blocks that break a rule.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
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
from desktop_app.core.messages import Message

TOOL_ID_PATTERN = re.compile(r"[a-zA-Z0-9_-]+")
SURROGATE = re.compile("[\ud800-\udfff]")
_THINKING = (ThinkingBlock, RedactedThinkingBlock)

MISSING_RESULTS = (
    "`tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
    "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
)
ALTERNATE = (
    'roles must alternate between "user" and "assistant", '
    'but found multiple "{role}" roles in a row'
)
EMPTY_MESSAGE = (
    "all messages must have non-empty content except for the optional final assistant message"
)
TRAILING_WHITESPACE = "final assistant content cannot end with trailing whitespace"
RESULTS_FIRST = "`tool_result` blocks must come first in the user message content"
DUPLICATE_RESULT = "each `tool_use` must have a single result; found another for {id}"
THINKING_FIRST = (
    "If an assistant message contains any thinking blocks, "
    "the first block must be thinking or redacted_thinking"
)
ORPHAN_RESULT = (
    "unexpected `tool_use_id` found in `tool_result` blocks: {id}. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
)


EMPTY_ERROR_RESULT = "content cannot be empty if `is_error` is true"
# A server tool's result (web search, web fetch, code execution, advisor, MCP…) answers a
# call the server made earlier in the same assistant turn (anthropics/claude-code#66944).
ORPHAN_SERVER_RESULT = (
    "unexpected `tool_use_id` found in `{kind}` blocks: {id}. "
    "Each `{kind}` block must have a corresponding `{call}` block before it."
)
SERVER_CALLS = ("server_tool_use", "mcp_tool_use")


def server_call_kind(result_kind: str) -> str:
    return "mcp_tool_use" if result_kind == "mcp_tool_result" else "server_tool_use"


def orphan_server_result(block: Block, calls: set[str]) -> str | None:
    """The problem with a server tool result whose call is not among `calls` (the ids of
    the server calls earlier in its message), or None. A server call's id goes into
    `calls` here as it is met."""
    if not isinstance(block, OpaqueBlock):
        return None
    if block.type in SERVER_CALLS:
        calls.add(str(block.raw.get("id", "")))
        return None
    if block.type == "tool_result" or not block.type.endswith("_tool_result"):
        return None
    tool_use_id = str(block.raw.get("tool_use_id", ""))
    if tool_use_id in calls:
        return None
    return ORPHAN_SERVER_RESULT.format(
        kind=block.type, id=tool_use_id, call=server_call_kind(block.type)
    )


def error_has_content(block: ToolResultBlock) -> bool:
    """An error result must say something (the API's 400, seen in the wild: a tool that
    timed out, reported as `is_error` with `""` or `[]`; jlevy/markform#153)."""
    content = block.content
    if isinstance(content, str):
        return bool(content.strip())
    return bool(content)


def lone_surrogate_at(text: str) -> int:
    """Index of the first lone UTF-16 surrogate in `text`, or -1."""
    if _valid_utf8(text):
        return -1
    match = SURROGATE.search(text)
    return match.start() if match else -1


def _valid_utf8(text: str) -> bool:
    """Fast: ASCII is valid, and `encode` (C speed) fails only on lone surrogates."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _json_valid_utf8(value: Any) -> bool:
    """True when no string in nested JSON, keys included, holds a lone surrogate."""
    kind = type(value)
    if kind is str:
        return value.isascii() or _valid_utf8(value)
    if kind is dict:
        return all(
            (key.isascii() or _valid_utf8(key)) and _scalar_or_nested_ok(item)
            for key, item in value.items()
        )
    if kind is list:
        return all(_scalar_or_nested_ok(item) for item in value)
    return True


def _scalar_or_nested_ok(item: Any) -> bool:
    kind = type(item)
    if kind is str:
        return item.isascii() or _valid_utf8(item)
    if kind is dict or kind is list:
        return _json_valid_utf8(item)
    return True  # numbers, booleans, null


def _valid_tool_id(tool_id: str) -> bool:
    """^[a-zA-Z0-9_-]+$ without the regex engine (this runs for every call, every send)."""
    return tool_id.isascii() and tool_id.replace("_", "a").replace("-", "a").isalnum()


def _path(i: int, j: int, suffix: str = "") -> str:
    return f"messages.{i}.content.{j}{suffix}"


def _surrogate_problem(path: str, text: str, at: int) -> Problem:
    return Problem(
        path,
        f"no low surrogate in string: lone surrogate \\u{ord(text[at]):04x} at character {at} "
        "(not valid UTF-8)",
    )


def _check_json_strings(value: Any, path: str, out: list[Problem]) -> None:
    """Surrogates anywhere in nested JSON (tool inputs, opaque blocks), keys included."""
    if _json_valid_utf8(value):
        return
    if isinstance(value, str):
        at = lone_surrogate_at(value)
        if at >= 0:
            out.append(_surrogate_problem(path, value, at))
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_json_strings(key, path, out)
            _check_json_strings(item, f"{path}.{key}", out)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_json_strings(item, f"{path}.{i}", out)


def _check_text(block: TextBlock, path: str, out: list[Problem]) -> None:
    text = block.text
    if not text:
        out.append(Problem(path, "text content blocks must be non-empty"))
    elif text.isspace():
        out.append(Problem(path, "text content blocks must contain non-whitespace text"))
    else:
        at = lone_surrogate_at(text)
        if at >= 0:
            out.append(_surrogate_problem(f"{path}.text", text, at))
    if block.citations:
        _check_json_strings(list(block.citations), f"{path}.citations", out)


def _text_ok(block: TextBlock) -> bool:
    text = block.text
    return bool(text) and not text.isspace() and _valid_utf8(text) and not block.citations


def _check_image(block: ImageBlock, path: str, out: list[Problem]) -> None:
    if block.media_type not in IMAGE_MEDIA_TYPES:
        allowed = ", ".join(f"'{t}'" for t in IMAGE_MEDIA_TYPES)
        out.append(Problem(f"{path}.source.media_type", f"Input should be {allowed}"))
    if not block.data:
        out.append(Problem(f"{path}.source.data", "image data must be non-empty"))


def _check_result(block: ToolResultBlock, path: str, out: list[Problem]) -> None:
    content = block.content
    if block.is_error and not error_has_content(block):
        out.append(Problem(f"{path}.tool_result", EMPTY_ERROR_RESULT))
    if isinstance(content, str):
        if not _valid_utf8(content):
            out.append(_surrogate_problem(f"{path}.content", content, lone_surrogate_at(content)))
        return
    for k, part in enumerate(content):
        if not (isinstance(part, TextBlock) and _text_ok(part)):
            _check_common(part, f"{path}.content.{k}", out)


def validate(messages: Sequence[Message]) -> list[Problem]:
    """Every rule the sent `messages` break, in order; empty when the API would accept them."""
    if not messages:
        return [Problem("messages", "at least one message is required")]
    out: list[Problem] = []
    if messages[0].role != "user":
        out.append(Problem("messages.0.role", 'first message must use the "user" role'))

    last = len(messages) - 1
    seen_ids: set[str] = set()
    expected: list[str] = []  # tool_use ids of the previous assistant message, in order
    prev_role = ""
    for i, msg in enumerate(messages):
        role = msg.role
        if role == prev_role:
            out.append(Problem(f"messages.{i}", ALTERNATE.format(role=role)))
        if not msg.blocks and not (i == last and role == "assistant"):
            out.append(Problem(f"messages.{i}", EMPTY_MESSAGE))
        if role == "user":
            answered = _check_user_blocks(msg, i, expected, out)
            if len(answered) < len(expected):
                missing = ", ".join(t for t in expected if t not in answered)
                out.append(Problem(f"messages.{i - 1}", MISSING_RESULTS.format(ids=missing)))
            expected = []
        else:
            if expected:
                out.append(
                    Problem(f"messages.{i - 1}", MISSING_RESULTS.format(ids=", ".join(expected)))
                )
            expected = _check_assistant_blocks(msg, i, seen_ids, out)
        prev_role = role

    if expected:
        out.append(Problem(f"messages.{last}", MISSING_RESULTS.format(ids=", ".join(expected))))
    final = messages[last]
    if final.role == "assistant" and final.blocks:
        tail = final.blocks[-1]
        if isinstance(tail, TextBlock) and tail.text != tail.text.rstrip():
            out.append(Problem(f"messages.{last}", TRAILING_WHITESPACE))
    return out


def _check_user_blocks(msg: Message, i: int, expected: list[str], out: list[Problem]) -> set[str]:
    """Check a user message's blocks; return the tool_use ids its results answer."""
    answered: set[str] = set()
    results_first = True
    for j, block in enumerate(msg.blocks):
        kind = type(block)
        if kind is TextBlock:
            text = block.text  # type: ignore[union-attr]
            simple = not block.citations  # type: ignore[union-attr]
            if simple and text and (text.isascii() or _valid_utf8(text)) and not text.isspace():
                results_first = False
                continue
        if isinstance(block, ToolResultBlock):
            tid = block.tool_use_id
            if tid not in expected:
                out.append(Problem(_path(i, j), ORPHAN_RESULT.format(id=tid)))
            elif tid in answered:
                out.append(Problem(_path(i, j), DUPLICATE_RESULT.format(id=tid)))
            else:
                answered.add(tid)
                if not results_first:
                    out.append(Problem(_path(i, j), RESULTS_FIRST))
            _check_result(block, _path(i, j), out)
            continue
        results_first = False
        if isinstance(block, ToolUseBlock):
            out.append(
                Problem(_path(i, j), "`tool_use` blocks can only be in `assistant` messages")
            )
        elif isinstance(block, _THINKING):
            out.append(Problem(_path(i, j), "thinking blocks can only be in `assistant` messages"))
        elif kind is not ImageBlock or not _image_ok(block):  # type: ignore[arg-type]
            _check_common(block, _path(i, j), out)
    return answered


def _check_assistant_blocks(
    msg: Message, i: int, seen_ids: set[str], out: list[Problem]
) -> list[str]:
    """Check an assistant message's blocks; return its tool_use ids in order."""
    blocks = msg.blocks
    calls: list[str] = []
    server_calls: set[str] = set()
    thinking_first = bool(blocks) and isinstance(blocks[0], _THINKING)
    for j, block in enumerate(blocks):
        kind = type(block)
        if kind is TextBlock:
            text = block.text  # type: ignore[union-attr]
            simple = not block.citations  # type: ignore[union-attr]
            if simple and text and (text.isascii() or _valid_utf8(text)) and not text.isspace():
                continue
        if isinstance(block, ToolUseBlock):
            tid = block.id
            if tid in seen_ids:
                out.append(
                    Problem(
                        _path(i, j, ".id"), f"`tool_use` ids must be unique; {tid} is used twice"
                    )
                )
            elif not _valid_tool_id(tid):
                out.append(
                    Problem(_path(i, j, ".id"), "String should match pattern '^[a-zA-Z0-9_-]+$'")
                )
            seen_ids.add(tid)
            calls.append(tid)
            if not block.name:
                out.append(Problem(_path(i, j, ".name"), "String should have at least 1 character"))
            if not _json_valid_utf8(block.input):
                _check_json_strings(block.input, _path(i, j, ".input"), out)
        elif isinstance(block, ToolResultBlock):
            out.append(Problem(_path(i, j), "`tool_result` blocks can only be in `user` messages"))
        elif isinstance(block, _THINKING):
            if not thinking_first:
                out.append(Problem(f"messages.{i}", THINKING_FIRST))
                thinking_first = True  # say it once per message
            if isinstance(block, ThinkingBlock):
                if not block.signature:
                    out.append(Problem(_path(i, j, ".signature"), "Field required"))
                if not _valid_utf8(block.thinking):
                    at = lone_surrogate_at(block.thinking)
                    out.append(_surrogate_problem(_path(i, j, ".thinking"), block.thinking, at))
        else:
            orphan = orphan_server_result(block, server_calls)
            if orphan:
                out.append(Problem(_path(i, j), orphan))
            _check_common(block, _path(i, j), out)
    return calls


def _image_ok(block: ImageBlock) -> bool:
    return block.media_type in IMAGE_MEDIA_TYPES and bool(block.data)


def _check_common(
    block: TextBlock | ImageBlock | OpaqueBlock, path: str, out: list[Problem]
) -> None:
    if isinstance(block, TextBlock):
        _check_text(block, path, out)
    elif isinstance(block, ImageBlock):
        _check_image(block, path, out)
    else:
        _check_json_strings(block.raw, path, out)


def is_clean_start(messages: Sequence[Message], index: int) -> bool:
    """Can a kept window start at `index`? (invariant 9: a user message that does not
    start with a tool result, so no call is separated from its result)."""
    msg = messages[index]
    return msg.role == "user" and not (msg.blocks and type(msg.blocks[0]) is ToolResultBlock)


def clean_cut_points(messages: Sequence[Message]) -> list[int]:
    """Every index where truncation or compaction may cut, in order."""
    return [i for i in range(len(messages)) if is_clean_start(messages, i)]
