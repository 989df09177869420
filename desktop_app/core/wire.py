"""Reading Messages-API JSON into typed messages, with a JSON path for every problem.

This checks *shape* only (types, required fields). Whether the history obeys the API's
conversation rules is `protocol.validate`'s job, and `repair`'s to fix.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from desktop_app.core.blocks import (
    Block,
    ImageBlock,
    JSONObject,
    OpaqueBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from desktop_app.core.errors import HistoryFormatError, Problem
from desktop_app.core.messages import Message, MessageStatus, Role, Usage

_MAX_PROBLEMS = 200


class _Reader:
    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def problem(self, path: str, message: str) -> None:
        if len(self.problems) < _MAX_PROBLEMS:
            self.problems.append(Problem(path, message))

    def string(self, obj: JSONObject, key: str, path: str, *, required: bool = True) -> str:
        value = obj.get(key)
        if isinstance(value, str):
            return value
        if value is None and not required:
            return ""
        self.problem(
            f"{path}.{key}", "Field required" if value is None else "Input should be a valid string"
        )
        return ""

    def messages(self, data: object, path: str) -> list[Message]:
        if not isinstance(data, list):
            self.problem(path, "Input should be a valid list")
            return []
        out = []
        for i, item in enumerate(data):
            msg = self.message(item, f"{path}.{i}")
            if msg is not None:
                out.append(msg)
        return out

    def message(self, data: object, path: str) -> Message | None:
        if not isinstance(data, dict):
            self.problem(path, "Input should be a valid dictionary")
            return None
        role = data.get("role")
        if role not in ("user", "assistant"):
            hint = (
                " (put system instructions in the top-level `system` field)"
                if role == "system"
                else ""
            )
            self.problem(f"{path}.role", f"Input should be 'user' or 'assistant'{hint}")
            return None
        content = data.get("content")
        if isinstance(content, str):
            blocks: list[Block] = [TextBlock(content)] if content else []
        elif isinstance(content, list):
            blocks = [
                b for i, raw in enumerate(content) if (b := self.block(raw, f"{path}.content.{i}"))
            ]
        else:
            self.problem(
                f"{path}.content",
                "Field required" if content is None else "Input should be a valid list or string",
            )
            return None
        return Message(role=cast(Role, role), blocks=tuple(blocks))

    def block(self, raw: object, path: str) -> Block | None:
        if not isinstance(raw, dict):
            self.problem(path, "Input should be a valid dictionary")
            return None
        kind = raw.get("type")
        if kind == "text" and len(raw) == 2 and type(raw.get("text")) is str:
            return TextBlock(raw["text"])  # the common case, without the general checks
        if not isinstance(kind, str):
            self.problem(f"{path}.type", "Field required")
            return None
        parse = _BLOCK_PARSERS.get(kind)
        if parse is None:
            # `cache_control` is request decoration we place ourselves; never carried over.
            return OpaqueBlock(kind, {k: v for k, v in raw.items() if k != "cache_control"})
        return parse(self, raw, path)

    def text(self, raw: JSONObject, path: str) -> Block:
        citations = raw.get("citations") or []
        if not isinstance(citations, list) or not all(isinstance(c, dict) for c in citations):
            self.problem(f"{path}.citations", "Input should be a valid list of objects")
            citations = []
        return TextBlock(self.string(raw, "text", path), tuple(citations))

    def thinking(self, raw: JSONObject, path: str) -> Block:
        # A missing signature parses as "" so the validator can name it; repair drops it.
        return ThinkingBlock(
            self.string(raw, "thinking", path), self.string(raw, "signature", path, required=False)
        )

    def redacted(self, raw: JSONObject, path: str) -> Block:
        return RedactedThinkingBlock(self.string(raw, "data", path))

    def tool_use(self, raw: JSONObject, path: str) -> Block:
        tool_input = raw.get("input")
        if not isinstance(tool_input, dict):
            self.problem(f"{path}.input", "Input should be a valid dictionary")
            tool_input = {}
        return ToolUseBlock(
            self.string(raw, "id", path), self.string(raw, "name", path), tool_input
        )

    def tool_result(self, raw: JSONObject, path: str) -> Block:
        content = raw.get("content", "")
        parsed: str | tuple[TextBlock | ImageBlock | OpaqueBlock, ...]
        if isinstance(content, str):
            parsed = content
        elif isinstance(content, list):
            parts = []
            for i, item in enumerate(content):
                part = self.block(item, f"{path}.content.{i}")
                if isinstance(part, TextBlock | ImageBlock | OpaqueBlock):
                    parts.append(part)
                elif part is not None:
                    self.problem(
                        f"{path}.content.{i}",
                        "tool_result content may hold only text, image and document blocks",
                    )
            parsed = tuple(parts)
        else:
            self.problem(f"{path}.content", "Input should be a valid list or string")
            parsed = ""
        is_error = raw.get("is_error", False)
        if not isinstance(is_error, bool):
            self.problem(f"{path}.is_error", "Input should be a valid boolean")
            is_error = False
        return ToolResultBlock(self.string(raw, "tool_use_id", path), parsed, is_error)

    def image(self, raw: JSONObject, path: str) -> Block:
        source = raw.get("source")
        if not isinstance(source, dict):
            self.problem(f"{path}.source", "Field required")
            return OpaqueBlock("image", dict(raw))
        if source.get("type") != "base64":
            return OpaqueBlock("image", dict(raw))  # URL and file images are kept as they are
        return ImageBlock(
            self.string(source, "media_type", f"{path}.source"),
            self.string(source, "data", f"{path}.source"),
        )


_BLOCK_PARSERS: dict[str, Callable[[_Reader, JSONObject, str], Block]] = {
    "text": _Reader.text,
    "thinking": _Reader.thinking,
    "redacted_thinking": _Reader.redacted,
    "tool_use": _Reader.tool_use,
    "tool_result": _Reader.tool_result,
    "image": _Reader.image,
}


class BlockReader:
    """Reads many blocks with one reader (stored blocks, known valid): no per-block setup."""

    def __init__(self) -> None:
        self._reader = _Reader()

    def block(self, data: object, path: str = "block") -> Block:
        block = self._reader.block(data, path)
        if self._reader.problems or block is None:
            problems, self._reader.problems = self._reader.problems, []
            raise HistoryFormatError(
                problems or [Problem(path, "Input should be a valid dictionary")]
            )
        return block


class MessageReader:
    """Reads messages one at a time — a long file's, as it is read — keeping each
    problem with its JSON path, as `messages_from_api` does for a whole list."""

    def __init__(self) -> None:
        self._reader = _Reader()

    @property
    def problems(self) -> list[Problem]:
        return self._reader.problems

    def message(self, data: object, path: str) -> Message | None:
        return self._reader.message(data, path)


def messages_from_api(data: object, path: str = "messages") -> list[Message]:
    """Parse a Messages-API `messages` array. Raises `HistoryFormatError` listing every
    shape problem with its JSON path; returns messages that may still break protocol rules."""
    reader = _Reader()
    messages = reader.messages(data, path)
    if reader.problems:
        raise HistoryFormatError(reader.problems)
    return messages


def block_from_api(data: object, path: str = "block") -> Block:
    reader = _Reader()
    block = reader.block(data, path)
    if reader.problems or block is None:
        raise HistoryFormatError(
            reader.problems or [Problem(path, "Input should be a valid dictionary")]
        )
    return block


def usage_from_api(data: object) -> Usage | None:
    """Usage from an API response or a stored record; unknown or wrong fields count as 0."""
    if not isinstance(data, dict):
        return None

    def num(key: str, within: object = data) -> int:
        value = within.get(key) if isinstance(within, dict) else None
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

    return Usage(
        input_tokens=num("input_tokens"),
        output_tokens=num("output_tokens"),
        cache_creation_input_tokens=num("cache_creation_input_tokens"),
        cache_read_input_tokens=num("cache_read_input_tokens"),
        cache_write_1h_tokens=num("ephemeral_1h_input_tokens", data.get("cache_creation")),
        thinking_tokens=num("thinking_tokens", data.get("output_tokens_details")),
        web_search_requests=num("web_search_requests", data.get("server_tool_use")),
        web_fetch_requests=num("web_fetch_requests", data.get("server_tool_use")),
    )


_STATUSES = {status.value: status for status in MessageStatus}  # Enum(...) is slow per call


def status_from_text(value: object) -> MessageStatus:
    return _STATUSES.get(str(value), MessageStatus.COMPLETE)
