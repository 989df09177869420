"""What the simulator answers: scripted replies and fault modes, as data."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


@dataclass(frozen=True, slots=True)
class Reply:
    """One assistant message to stream (or return), block by block, as API JSON."""

    content: tuple[dict[str, Any], ...]
    stop_reason: str = "end_turn"
    output_tokens: int | None = None

    @staticmethod
    def text(text: str, stop_reason: str = "end_turn") -> Reply:
        return Reply(({"type": "text", "text": text},), stop_reason)

    @staticmethod
    def tools(*calls: tuple[str, str, dict[str, Any]], text: str = "") -> Reply:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        blocks += [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls]
        return Reply(tuple(blocks), "tool_use")


class FaultKind(StrEnum):
    RATE_LIMITED = "rate_limited"  # 429 with retry-after
    OVERLOADED = "overloaded"  # 529 with retry-after
    SERVER_ERROR = "server_error"  # 500
    MID_STREAM_ERROR = "mid_stream_error"  # an `error` event after some events
    HANG = "hang"  # stop sending after some events (or before any)
    PINGS = "pings"  # after some events, only `ping` events, forever
    SILENT = "silent"  # accept the connection, read the request, answer nothing
    MALFORMED_SSE = "malformed_sse"  # after some events, a data line that is not JSON
    CUT_OFF = "cut_off"  # close the connection after some events, no message_stop
    MALFORMED_TOOL_JSON = "malformed_tool_json"  # input_json_delta that is not JSON
    NO_COUNT_TOKENS = "no_count_tokens"  # count_tokens answers 404 (like Ollama)


@dataclass(frozen=True, slots=True)
class Fault:
    kind: FaultKind
    after_events: int = 0  # for faults inside a stream
    retry_after_ms: int = 50
    reply: Reply | None = None  # what the stream carries before the fault
    should_retry: bool = True  # the `x-should-retry` header of a refusal


@dataclass
class Script:
    """A queue of answers for POST /v1/messages; empty means: ask the demo model."""

    items: list[Reply | Fault] = field(default_factory=list)

    def next(self) -> Reply | Fault | None:
        return self.items.pop(0) if self.items else None
