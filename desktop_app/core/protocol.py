"""The Messages API's conversation rules, checked before anything is sent.

`validate` returns every violation with its JSON path, worded like the API's own 400
messages, so a user who has met the API's error recognises ours. It checks invariants
1–6 and 9 (docs/architecture.md, *Invariants*) on the messages exactly as they would be sent.

It checks today's API, not yesterday's: consecutive messages of one role are one turn (the
API merges them) and a history may start with the assistant. Rules that depend on the
request's settings (extended thinking, prefill) are checked when the caller says what the
request carries; the body-level ones (budgets, cache breakpoints) live in `request_rules`.

It runs on every send, on import and in property tests, so it is written for speed: one
pass; a valid block costs a type check and C-speed string checks; JSON paths and
messages are built only for blocks that break a rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
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
    block_type,
)
from desktop_app.core.errors import Problem
from desktop_app.core.images import (
    MANY_IMAGES,
    MANY_IMAGES_MAX_EDGE,
    MAX_BASE64_BYTES,
    MAX_EDGE,
    ImageFacts,
    image_facts,
)
from desktop_app.core.messages import Message, as_list
from desktop_app.core.transcript import Continued, Transcript
from desktop_app.core.valid_prefix import SeenIds, ValidPrefix, lineage_at

TOOL_ID_PATTERN = re.compile(r"[a-zA-Z0-9_-]+")
SERVER_TOOL_ID = re.compile(r"srvtoolu_[a-zA-Z0-9_]+")
SURROGATE = re.compile("[\ud800-\udfff]")
_THINKING = (ThinkingBlock, RedactedThinkingBlock)

MISSING_RESULTS = (
    "`tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
    "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
)
EMPTY_MESSAGE = (
    "all messages must have non-empty content except for the optional final assistant message"
)
TRAILING_WHITESPACE = "final assistant content cannot end with trailing whitespace"
RESULTS_FIRST = "`tool_result` blocks must come first in the user message content"
DUPLICATE_RESULT = "each `tool_use` must have a single result; found another for {id}"
THINKING_FIRST = (
    "If an assistant message contains any thinking blocks, "
    "the first block must be `thinking` or `redacted_thinking`. Found `{found}`."
)
THINKING_LAST = "The final block in an assistant message cannot be `thinking`."
THINKING_DISABLED_FINAL = (
    "When thinking is disabled, an `assistant` message in the final position cannot contain "
    "`thinking`. To use thinking blocks, enable `thinking` in your request."
)
THINKING_ENABLED_FINAL = (
    "Expected `thinking` or `redacted_thinking`, but found `{found}`. When `thinking` is "
    "enabled, a final `assistant` message must start with a thinking block (preceeding the "
    "lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking "
    "blocks from previous turns. To avoid this requirement, disable `thinking`. Please "
    "consult our documentation at "
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
)
NO_PREFILL = (
    "This model does not support assistant message prefill. "
    "The conversation must end with a user message."
)
IMAGE_TYPES = "Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"
IMAGE_MISMATCH = (
    "The image was specified using the {declared} media type, "
    "but the image appears to be a {found} image"
)
IMAGE_UNREADABLE = "Could not process image"
IMAGE_TOO_LARGE = "image exceeds 5 MB maximum: {size} bytes > {limit} bytes"
IMAGE_TOO_WIDE = f"At least one of the image dimensions exceed max allowed size: {MAX_EDGE} pixels"
IMAGE_TOO_WIDE_MANY = (
    "At least one of the image dimensions exceed max allowed size for many-image requests: "
    f"{MANY_IMAGES_MAX_EDGE} pixels"
)
USE_IN_USER = "`tool_use` blocks can only be in `assistant` messages"
TOOL_ID_MISMATCH = "String should match pattern '^[a-zA-Z0-9_-]+$'"
SERVER_ID_PATTERN = "String should match pattern '^srvtoolu_[a-zA-Z0-9_]+$'"
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
DOCUMENT_CITATIONS = "Citations must be enabled on all or none of the documents within a request"
# A server call with no result is accepted only while the turn goes on: the next message
# answers the same turn's client tool calls (anthropics/anthropic-sdk-python#1339).
UNANSWERED_SERVER_CALL = (
    "`{name}` tool use with id `{id}` was found without a corresponding `{result}` block"
)


def server_result_kind(call: OpaqueBlock) -> str:
    """The result type that answers a server call: `mcp_tool_result` for MCP, else the
    tool's name + `_tool_result` (`web_search_tool_result`, …)."""
    if call.type == "mcp_tool_use":
        return "mcp_tool_result"
    return f"{call.raw.get('name', 'server')}_tool_result"


def unanswered_server_calls(blocks: Sequence[Block]) -> list[int]:
    """Where in `blocks` the server calls are that no later block there answers."""
    waiting: dict[str, list[int]] = {}
    for j, block in enumerate(blocks):
        if type(block) is not OpaqueBlock:
            continue
        if block.type in SERVER_CALLS:
            waiting.setdefault(str(block.raw.get("id", "")), []).append(j)
        elif block.type.endswith("_tool_result") and block.type != "tool_result":
            answered = waiting.get(str(block.raw.get("tool_use_id", "")))
            if answered:
                answered.pop(0)
    return sorted(j for positions in waiting.values() for j in positions)


def continues_turn(message: Message | None) -> bool:
    """Does `message` carry the assistant's turn on (a user message of tool results only)?"""
    return (
        message is not None
        and message.role == "user"
        and bool(message.blocks)
        and all(type(b) is ToolResultBlock for b in message.blocks)
    )


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
    """True when no string in nested JSON, keys included, holds a lone surrogate.

    Plain loops, not `all(...)` over generators: this runs for every tool call's input on
    every send, and a generator costs more than the check it feeds."""
    kind = type(value)
    if kind is str:
        return value.isascii() or _valid_utf8(value)
    if kind is dict:
        for key in value:
            if not (key.isascii() or _valid_utf8(key)):
                return False
        return _items_valid_utf8(value.values())
    if kind is list:
        return _items_valid_utf8(value)
    return True  # numbers, booleans, null


def _items_valid_utf8(items: Iterable[Any]) -> bool:
    for item in items:
        inner = type(item)
        if inner is str:
            if not (item.isascii() or _valid_utf8(item)):
                return False
        elif (inner is dict or inner is list) and not _json_valid_utf8(item):
            return False
    return True


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


def validate(
    messages: Sequence[Message], *, thinking: bool | None = None, prefill: bool = True
) -> list[Problem]:
    """Every rule the sent `messages` break, in order; empty when the API would accept them.

    The API merges consecutive messages of one role into one turn and accepts a history
    that starts with the assistant, so runs of one role are checked as the turn they
    become. `thinking` (on, off, or None: not known) and `prefill` (may the history end
    with the assistant?) add the rules that depend on the request's settings."""
    return validate_from(messages, None, thinking=thinking, prefill=prefill)[0]


def validate_from(
    messages: Sequence[Message],
    since: ValidPrefix | None,
    *,
    thinking: bool | None = None,
    prefill: bool = True,
) -> tuple[list[Problem], ValidPrefix | None]:
    """`validate`, read on from `since` when `messages` begin with its messages (the same
    objects, a turn ending there); and the prefix the next check may read on from (None
    when a problem came before the last turn)."""
    if not messages:
        return [Problem("messages", "at least one message is required")], None
    check = _Pass()
    last = len(messages) - 1
    # where the check starts, and the tool_use ids of the assistant turn before, in order
    start, expected = check.resume(messages, since)
    point = None
    while start <= last:
        role = messages[start].role
        end = start
        while end < last and messages[end + 1].role == role:
            end += 1
        if end == last and start and not check.out:  # the last turn: the next check's start
            point = check.point(messages, start, expected)
        if not messages[start].blocks or start != end:
            for i in range(start, end + 1):
                if not messages[i].blocks and not (i == last and role == "assistant"):
                    check.out.append(Problem(f"messages.{i}", EMPTY_MESSAGE))
        if role == "user":
            answered = check.user_turn(messages, start, end, expected)
            if len(answered) < len(expected):  # (a duplicate id makes it longer, too)
                missing = ", ".join(dict.fromkeys(t for t in expected if t not in answered))
                if missing:
                    check.out.append(
                        Problem(f"messages.{start - 1}", MISSING_RESULTS.format(ids=missing))
                    )
            expected = []
        else:
            expected = check.assistant_turn(messages, start, end)
            if check.server_calls:
                check.unanswered_server_calls(messages, start, end)
        start = end + 1

    out = check.out
    if expected:
        out.append(Problem(f"messages.{last}", MISSING_RESULTS.format(ids=", ".join(expected))))
    check.many_images()
    check.documents_agree()
    final = messages[last]
    if final.role == "assistant" and final.blocks:
        tail = final.blocks[-1]
        if isinstance(tail, TextBlock) and tail.text != tail.text.rstrip():
            out.append(Problem(f"messages.{last}", TRAILING_WHITESPACE))
        elif isinstance(tail, _THINKING):
            out.append(Problem(f"messages.{last}", THINKING_LAST))
        if not prefill and not _paused_turn(final):
            out.append(Problem(f"messages.{last}", NO_PREFILL))
    if thinking is not None:
        out.extend(thinking_problems(messages, enabled=thinking))
    return out, point


def _paused_turn(message: Message) -> bool:
    """A reply the API paused mid-way through its own tools (`stop_reason: pause_turn`),
    sent back as it is so it goes on: not a prefill (server-tools page, 2026-12-03). Where
    the stop reason is not known (a body read back, as the API reads it), a reply that
    ends with a server tool's call or result."""
    if message.stop_reason is not None:
        return message.stop_reason == "pause_turn"
    tail = message.blocks[-1] if message.blocks else None
    return isinstance(tail, OpaqueBlock) and (
        tail.type in SERVER_CALLS or tail.type.endswith("_tool_result")
    )


def thinking_problems(messages: Sequence[Message], *, enabled: bool) -> list[Problem]:
    """The rules extended thinking's setting adds: with it off, the final assistant message
    may not hold thinking; with it on, an assistant turn still in progress (a prefill, or a
    tool loop awaiting its next step) must start with thinking."""
    last = len(messages) - 1
    if not enabled:
        final = messages[last]
        if final.role != "assistant":
            return []
        at = next((j for j, b in enumerate(final.blocks) if isinstance(b, _THINKING)), -1)
        return [] if at < 0 else [Problem(_path(last, at), THINKING_DISABLED_FINAL)]
    first = turn_in_progress(messages)
    if first is None or not messages[first].blocks:
        return []
    lead = messages[first].blocks[0]
    if isinstance(lead, _THINKING):
        return []
    found = block_type(lead)
    return [Problem(_path(first, 0, ".type"), THINKING_ENABLED_FINAL.format(found=found))]


def turn_in_progress(messages: Sequence[Message]) -> int | None:
    """The index of the first assistant message of the turn the next reply continues (the
    history ends with the assistant, or with tool results), or None when it ends with the
    user's own words."""
    first = None
    for i in range(len(messages) - 1, -1, -1):
        msg = messages[i]
        if msg.role == "assistant":
            first = i
        elif not msg.blocks or not all(type(b) is ToolResultBlock for b in msg.blocks):
            break
    return first


class _Pass:
    """One validation pass: the problems found, and what later rules need (tool ids seen,
    the images met, for the many-image rule)."""

    def __init__(self) -> None:
        self.out: list[Problem] = []
        self.seen_ids = SeenIds()
        self.image_count = 0  # images met (the many-image rule counts them all)
        self.wide_images: list[tuple[str, ImageFacts]] = []  # sides over 2,000 px: (path, facts)
        self.server_calls = False  # the last assistant turn made a server tool call
        self.documents: list[tuple[str, bool]] = []  # (path, citations on) of each document
        self.since: ValidPrefix | None = None  # the check gone on from (`resume`)

    def resume(
        self, messages: Sequence[Message], since: ValidPrefix | None
    ) -> tuple[int, list[str]]:
        """Take `since`'s state if `messages` go on from its prefix (`begins`) with a
        turn's start: where to go on from, and the calls due."""
        at = since.length if since is not None else 0
        if (
            since is None
            or not 0 < at < len(messages)
            or messages[at].role == messages[at - 1].role
            # the turn before was checked with this one in view: do its server calls go
            # on here? If they did then, they must now (else they were never checked)
            or (since.continued and not continues_turn(messages[at]))
            or not since.begins(messages)
        ):
            return 0, []
        self.seen_ids, self.image_count = SeenIds(since.seen_ids), since.image_count
        self.wide_images, self.documents = list(since.wide_images), list(since.documents)
        self.server_calls, self.since = since.server_calls, since
        return at, list(since.expected)

    def point(self, messages: Sequence[Message], at: int, expected: list[str]) -> ValidPrefix:
        """The check's state before the turn at `at` (none found yet)."""
        kept = messages if isinstance(messages, Transcript | Continued) else as_list(messages[:at])
        return ValidPrefix(
            kept,
            at,
            lineage_at(messages, at, self.since),
            continues_turn(messages[at]),
            tuple(expected),
            self.seen_ids.frozen(),
            self.image_count,
            tuple(self.wide_images),
            self.server_calls,
            tuple(self.documents),
        )

    def user_turn(
        self, messages: Sequence[Message], start: int, end: int, expected: list[str]
    ) -> set[str]:
        """Check a run of user messages (one turn); return the tool_use ids it answers."""
        out = self.out
        answered: set[str] = set()
        results_first = True
        for i in range(start, end + 1):
            for j, block in enumerate(messages[i].blocks):
                kind = type(block)
                if kind is TextBlock:  # inline, as in assistant_turn: most blocks are text
                    text = block.text  # type: ignore[union-attr]
                    simple = not block.citations  # type: ignore[union-attr]
                    ascii_or_valid = text.isascii() or _valid_utf8(text)
                    if simple and text and ascii_or_valid and not text.isspace():
                        results_first = False
                        continue
                elif kind is ImageBlock and self.image_ok(block):  # type: ignore[arg-type]
                    results_first = False
                    continue
                if kind is ToolResultBlock:
                    tid = block.tool_use_id  # type: ignore[union-attr]
                    if tid not in expected:
                        out.append(Problem(_path(i, j), ORPHAN_RESULT.format(id=tid)))
                    elif tid in answered:
                        out.append(Problem(_path(i, j), DUPLICATE_RESULT.format(id=tid)))
                    else:
                        answered.add(tid)
                        if not results_first:
                            out.append(Problem(_path(i, j), RESULTS_FIRST))
                    content = block.content  # type: ignore[union-attr]
                    if (
                        type(content) is not str
                        or block.is_error  # type: ignore[union-attr]
                        or not (content.isascii() or _valid_utf8(content))
                    ):  # the common case, a text result, needs no path built
                        self.result(block, _path(i, j))  # type: ignore[arg-type]
                    continue
                results_first = False
                if kind is ToolUseBlock:
                    out.append(Problem(_path(i, j), USE_IN_USER))
                elif isinstance(block, _THINKING):
                    out.append(
                        Problem(_path(i, j), "thinking blocks can only be in `assistant` messages")
                    )
                else:
                    self.common(block, _path(i, j))  # type: ignore[arg-type]
        return answered

    def assistant_turn(self, messages: Sequence[Message], start: int, end: int) -> list[str]:
        """Check a run of assistant messages (one turn); return its tool_use ids in order."""
        out = self.out
        calls: list[str] = []
        server_calls: set[str] = set()
        seen = self.seen_ids
        first = messages[start].blocks
        lead = first[0] if first else None
        thinking_first = isinstance(lead, _THINKING)
        for i in range(start, end + 1):
            for j, block in enumerate(messages[i].blocks):
                kind = type(block)
                if kind is TextBlock:
                    text = block.text  # type: ignore[union-attr]
                    simple = not block.citations  # type: ignore[union-attr]
                    ascii_or_valid = text.isascii() or _valid_utf8(text)
                    if simple and text and ascii_or_valid and not text.isspace():
                        continue
                if kind is ToolUseBlock:
                    tid = block.id  # type: ignore[union-attr]
                    if (
                        tid not in seen
                        and block.name  # type: ignore[union-attr]
                        and _valid_tool_id(tid)
                        and _json_valid_utf8(block.input)  # type: ignore[union-attr]
                    ):
                        seen.add(tid)
                    else:
                        self.tool_use(block, i, j)  # type: ignore[arg-type]
                    calls.append(tid)
                elif kind is ToolResultBlock:
                    out.append(
                        Problem(_path(i, j), "`tool_result` blocks can only be in `user` messages")
                    )
                elif isinstance(block, _THINKING):
                    if not thinking_first:
                        found = block_type(lead) if lead is not None else "text"
                        out.append(Problem(_path(start, 0), THINKING_FIRST.format(found=found)))
                        thinking_first = True  # say it once per turn
                    if kind is ThinkingBlock and not (
                        block.signature  # type: ignore[union-attr]
                        and (
                            block.thinking.isascii()  # type: ignore[union-attr]
                            or _valid_utf8(block.thinking)  # type: ignore[union-attr]
                        )
                    ):
                        self.thinking(block, i, j)  # type: ignore[arg-type]
                else:
                    path = _path(i, j)
                    if isinstance(block, OpaqueBlock):
                        self.server_block(block, server_calls, path)
                    self.common(block, path)  # type: ignore[arg-type]
        return calls

    def tool_use(self, block: ToolUseBlock, i: int, j: int) -> None:
        out = self.out
        tid = block.id
        if tid in self.seen_ids:
            out.append(Problem(_path(i, j), "`tool_use` ids must be unique"))
        elif not _valid_tool_id(tid):
            out.append(Problem(_path(i, j, ".tool_use.id"), TOOL_ID_MISMATCH))
        self.seen_ids.add(tid)
        if not block.name:
            out.append(Problem(_path(i, j, ".name"), "String should have at least 1 character"))
        if not _json_valid_utf8(block.input):
            _check_json_strings(block.input, _path(i, j, ".input"), out)

    def thinking(self, block: ThinkingBlock, i: int, j: int) -> None:
        if not block.signature:
            self.out.append(Problem(_path(i, j, ".thinking.signature"), "Field required"))
        if not _valid_utf8(block.thinking):
            at = lone_surrogate_at(block.thinking)
            self.out.append(_surrogate_problem(_path(i, j, ".thinking"), block.thinking, at))

    def unanswered_server_calls(self, messages: Sequence[Message], start: int, end: int) -> None:
        self.server_calls = False
        if continues_turn(messages[end + 1] if end + 1 < len(messages) else None):
            return
        placed = [(i, b) for i in range(start, end + 1) for b in messages[i].blocks]
        for at in unanswered_server_calls([b for _, b in placed]):
            where, call = placed[at]
            assert isinstance(call, OpaqueBlock)
            message = UNANSWERED_SERVER_CALL.format(
                name=call.raw.get("name", call.type),
                id=call.raw.get("id", ""),
                result=server_result_kind(call),
            )
            self.out.append(Problem(f"messages.{where}", message))

    def server_block(self, block: OpaqueBlock, calls: set[str], path: str) -> None:
        """A server tool's call (its id's shape) or result (its call before it in the turn)."""
        if block.type in SERVER_CALLS:
            self.server_calls = True
        if block.type == "server_tool_use" and not SERVER_TOOL_ID.fullmatch(
            str(block.raw.get("id", ""))
        ):
            self.out.append(Problem(f"{path}.server_tool_use.id", SERVER_ID_PATTERN))
        orphan = orphan_server_result(block, calls)
        if orphan:
            self.out.append(Problem(path, orphan))

    def result(self, block: ToolResultBlock, path: str) -> None:
        out = self.out
        content = block.content
        if block.is_error and not error_has_content(block):
            out.append(Problem(f"{path}.tool_result", EMPTY_ERROR_RESULT))
        if isinstance(content, str):
            if not _valid_utf8(content):
                out.append(
                    _surrogate_problem(f"{path}.content", content, lone_surrogate_at(content))
                )
            return
        for k, part in enumerate(content):
            if isinstance(part, TextBlock) and _text_ok(part):
                continue
            if type(part) is ImageBlock and self.image_ok(part):
                continue
            self.common(part, f"{path}.tool_result.content.{k}")

    def common(self, block: TextBlock | ImageBlock | OpaqueBlock, path: str) -> None:
        if isinstance(block, TextBlock):
            _check_text(block, path, self.out)
        elif isinstance(block, ImageBlock):
            self.image(block, path)
        else:
            _check_json_strings(block.raw, path, self.out)
            if block.type == "document":
                cited = bool((block.raw.get("citations") or {}).get("enabled"))
                self.documents.append((path, cited))

    def documents_agree(self) -> None:
        """Citations on all of the request's documents or on none (citations page)."""
        if len({cited for _, cited in self.documents}) > 1:
            path = next(p for p, cited in self.documents if cited != self.documents[0][1])
            self.out.append(Problem(f"{path}.citations", DOCUMENT_CITATIONS))

    def image_ok(self, block: ImageBlock) -> bool:
        """The common case, fast: an image the API takes in any request (counted)."""
        data = block.data
        if not data or len(data) > MAX_BASE64_BYTES:
            return False
        facts = image_facts(data)
        if facts.media_type != block.media_type:
            return False
        if facts.size is not None and max(facts.size) > MANY_IMAGES_MAX_EDGE:
            return False  # the slow path notes it for the many-image rule
        self.image_count += 1
        return True

    def image(self, block: ImageBlock, path: str) -> None:
        out = self.out
        where = f"{path}.image.source.base64"
        self.image_count += 1
        if block.media_type not in IMAGE_MEDIA_TYPES:
            out.append(Problem(f"{where}.media_type", IMAGE_TYPES))
        if not block.data:
            out.append(Problem(f"{where}.data", "image data must be non-empty"))
            return
        if len(block.data) > MAX_BASE64_BYTES:
            size = len(block.data)
            out.append(Problem(where, IMAGE_TOO_LARGE.format(size=size, limit=MAX_BASE64_BYTES)))
        facts = image_facts(block.data)
        if facts.media_type is None:
            out.append(Problem(f"{where}.data", IMAGE_UNREADABLE))
            return
        if facts.media_type != block.media_type and block.media_type in IMAGE_MEDIA_TYPES:
            found = IMAGE_MISMATCH.format(declared=block.media_type, found=facts.media_type)
            out.append(Problem(where, found))
        if facts.size and max(facts.size) > MAX_EDGE:
            out.append(Problem(f"{where}.data", IMAGE_TOO_WIDE))
        elif facts.size and max(facts.size) > MANY_IMAGES_MAX_EDGE:
            self.wide_images.append((where, facts))

    def many_images(self) -> None:
        """More than 20 images in one request: each side at most 2,000 px."""
        if self.image_count > MANY_IMAGES:
            for where, _ in self.wide_images:
                self.out.append(Problem(f"{where}.data", IMAGE_TOO_WIDE_MANY))


def is_clean_start(messages: Sequence[Message], index: int) -> bool:
    """Can a kept window start at `index`? (invariant 9: a user message that does not
    start with a tool result, so no call is separated from its result)."""
    msg = messages[index]
    return msg.role == "user" and not (msg.blocks and type(msg.blocks[0]) is ToolResultBlock)


def clean_cut_points(messages: Sequence[Message]) -> list[int]:
    """Every index where truncation or compaction may cut, in order."""
    return [i for i in range(len(messages)) if is_clean_start(messages, i)]
