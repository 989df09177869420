"""Building an assistant message from a backend's stream events.

The assembler keeps each block's pieces as they arrive, so a stream that stops half-way
(cancel, crash, dropped connection) still leaves what was said: finished blocks and the
text so far. What cannot be sent back is left out of the salvage: thinking that never got
its signature, and a tool call whose input never finished (it becomes a short note, so the
model knows the call did not happen).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from desktop_app.core.blocks import (
    Block,
    JSONObject,
    OpaqueBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
)
from desktop_app.core.errors import ContextDeskError, ErrorKind, MalformedToolInput
from desktop_app.core.events import (
    BlockFinished,
    BlockStarted,
    LoopEvent,
    StreamBlockStart,
    StreamBlockStop,
    StreamCitationDelta,
    StreamEvent,
    StreamInputDelta,
    StreamMessageDelta,
    StreamMessageStart,
    StreamMessageStop,
    StreamSignatureDelta,
    StreamTextDelta,
    StreamThinkingDelta,
    TextDelta,
    ThinkingDelta,
    ToolInputDelta,
    UsageUpdated,
)
from desktop_app.core.messages import Message, MessageStatus, Usage


@dataclass(slots=True)
class _Partial:
    block_type: str
    tool_id: str = ""
    tool_name: str = ""
    parts: list[str] = field(default_factory=list)
    signature: str = ""
    done: Block | None = None
    opaque: OpaqueBlock | None = None  # a server's call (server_tool_use…): input streamed
    citations: list[JSONObject] = field(default_factory=list)  # a text block's, in order


class MessageAssembler:
    def __init__(self, message_id: str, *, model: str = "", bound_to: str = "") -> None:
        self.message_id = message_id
        self.model = model  # who writes it (the server's word wins: `StreamMessageStart`)
        self.bound_to = bound_to  # the prefix it follows (core/binding.py)
        self._blocks: dict[int, _Partial] = {}
        self.stop_reason: str | None = None
        self.usage: Usage | None = None
        self.stopped = False  # message_stop seen

    def feed(self, event: StreamEvent) -> list[LoopEvent]:
        """Take one stream event; return what the loop should report for it."""
        mid = self.message_id
        if isinstance(event, StreamTextDelta):
            self._at(event.index).parts.append(event.text)
            return [TextDelta(mid, event.index, event.text)]
        if isinstance(event, StreamThinkingDelta):
            self._at(event.index).parts.append(event.thinking)
            return [ThinkingDelta(mid, event.index, event.thinking)]
        if isinstance(event, StreamInputDelta):
            self._at(event.index).parts.append(event.partial_json)
            return [ToolInputDelta(mid, event.index, event.partial_json)]
        if isinstance(event, StreamCitationDelta):
            self._at(event.index).citations.append(event.citation)
            return []
        if isinstance(event, StreamSignatureDelta):
            self._at(event.index).signature += event.signature
            return []
        if isinstance(event, StreamBlockStart):
            partial = _Partial(event.block_type, event.tool_id, event.tool_name, done=None)
            if isinstance(event.block, OpaqueBlock) and _streams_its_input(event.block):
                partial.opaque = event.block  # its input arrives as deltas, like a tool call's
            elif event.block is not None and not isinstance(
                event.block, TextBlock | ThinkingBlock | ToolUseBlock
            ):
                partial.done = event.block  # arrives whole (redacted thinking, server results)
            self._blocks[event.index] = partial
            return [BlockStarted(mid, event.index, event.block_type, event.tool_name)]
        if isinstance(event, StreamBlockStop):
            partial = self._at(event.index)
            partial.done = event.block or partial.done or self._build(partial)
            return [BlockFinished(mid, event.index, partial.done)]
        if isinstance(event, StreamMessageStart | StreamMessageDelta):
            if isinstance(event, StreamMessageStart) and event.model:
                self.model = event.model
            if isinstance(event, StreamMessageDelta) and event.stop_reason:
                self.stop_reason = event.stop_reason
            if event.usage is not None:
                self.usage = _merge_usage(self.usage, event.usage)
                return [UsageUpdated(mid, self.usage)]
            return []
        if isinstance(event, StreamMessageStop):
            self.stopped = True
        return []

    def finish(self) -> Message:
        """The complete message. Blocks still open (a stream that ended early) make this a
        retryable error; the caller then salvages what arrived."""
        if not self.stopped or any(p.done is None for p in self._blocks.values()):
            raise ContextDeskError(
                "The reply was cut off",
                "The connection ended before the reply was complete. What arrived is kept; "
                "Retry to ask again.",
                retryable=True,
                kind=ErrorKind.STREAM_CUT,
            )
        blocks = tuple(p.done for _, p in sorted(self._blocks.items()) if p.done is not None)
        return Message(
            role="assistant",
            blocks=blocks,
            id=self.message_id,
            stop_reason=self.stop_reason,
            usage=self.usage,
            model=self.model,
            bound_to=self.bound_to,
        )

    def salvage(self, status: MessageStatus) -> Message | None:
        """What arrived so far as a sendable message with `status`, or None if nothing did."""
        blocks: list[Block] = []
        for _, partial in sorted(self._blocks.items()):
            block = partial.done or self._salvage_open(partial)
            if block is not None:
                blocks.append(block)
        if not blocks:
            return None
        return Message(
            role="assistant",
            blocks=tuple(blocks),
            id=self.message_id,
            status=status,
            stop_reason=self.stop_reason,
            usage=self.usage,
            model=self.model,
            bound_to=self.bound_to,
        )

    def _at(self, index: int) -> _Partial:
        partial = self._blocks.get(index)
        if partial is None:  # a delta without a start: tolerate, as the SDK does
            partial = self._blocks[index] = _Partial("text")
        return partial

    def _build(self, partial: _Partial) -> Block:
        text = "".join(partial.parts)
        if partial.opaque is not None:
            name = str(partial.opaque.raw.get("name") or partial.block_type)
            raw = {**partial.opaque.raw, "input": _parse_input(name, text)}
            return OpaqueBlock(partial.opaque.type, raw)
        if partial.block_type == "thinking":
            return ThinkingBlock(text, partial.signature)
        if partial.block_type == "tool_use":
            return ToolUseBlock(
                partial.tool_id, partial.tool_name, _parse_input(partial.tool_name, text)
            )
        if partial.block_type == "redacted_thinking":
            return RedactedThinkingBlock(text)
        return TextBlock(text, tuple(partial.citations))

    @staticmethod
    def _salvage_open(partial: _Partial) -> Block | None:
        text = "".join(partial.parts)
        if partial.block_type == "text":
            return TextBlock(text, tuple(partial.citations)) if text.strip() else None
        if partial.block_type == "tool_use":
            name = partial.tool_name or "a tool"
            return TextBlock(
                f"[ContextDesk note: the call to {name} did not arrive complete; it was not run.]"
            )
        return None  # thinking without its signature cannot be sent back


def _streams_its_input(block: OpaqueBlock) -> bool:
    """A server-run call (`server_tool_use`, `mcp_tool_use`) starts with an empty input
    that `input_json_delta`s then fill — dropping them would send the call back empty."""
    return block.type.endswith("_tool_use") and block.raw.get("input") in ({}, None)


def _parse_input(name: str, raw: str) -> dict[str, object]:
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise MalformedToolInput(name, raw, str(exc)) from None
    if not isinstance(value, dict):
        raise MalformedToolInput(name, raw, f"expected an object, got {type(value).__name__}")
    return value


def _merge_usage(old: Usage | None, new: Usage) -> Usage:
    """`message_delta` usage is cumulative but may omit input fields: keep the larger."""
    if old is None:
        return new
    return Usage(
        input_tokens=new.input_tokens or old.input_tokens,
        output_tokens=max(new.output_tokens, old.output_tokens),
        cache_creation_input_tokens=new.cache_creation_input_tokens
        or old.cache_creation_input_tokens,
        cache_read_input_tokens=new.cache_read_input_tokens or old.cache_read_input_tokens,
        cache_write_1h_tokens=new.cache_write_1h_tokens or old.cache_write_1h_tokens,
        thinking_tokens=max(new.thinking_tokens, old.thinking_tokens),
        web_search_requests=max(new.web_search_requests, old.web_search_requests),
        web_fetch_requests=max(new.web_fetch_requests, old.web_fetch_requests),
    )
