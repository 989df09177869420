"""Events as data: what a backend's stream says, and what the agent loop reports.

`Stream*` events are the backend's words (one per SSE event that matters). The loop turns
them, plus tool calls and its own decisions, into the other events, which the worker
forwards to the GUI as signals and the CLI prints. All are frozen, so they may cross threads.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeAlias

from desktop_app.core.blocks import Block, ToolResultBlock, ToolUseBlock
from desktop_app.core.errors import ErrorInfo
from desktop_app.core.messages import Message, Usage
from desktop_app.core.request import ChatRequest

# -- what a ChatBackend yields ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StreamMessageStart:
    usage: Usage | None = None
    model: str = ""  # the model that answers, as the server says (a fallback may differ)


@dataclass(frozen=True, slots=True)
class StreamBlockStart:
    index: int
    block_type: str
    tool_id: str = ""
    tool_name: str = ""
    # The starting block when the backend has one: non-streamed types (redacted thinking,
    # server tool blocks) arrive whole here.
    block: Block | None = None


@dataclass(frozen=True, slots=True)
class StreamTextDelta:
    index: int
    text: str


@dataclass(frozen=True, slots=True)
class StreamThinkingDelta:
    index: int
    thinking: str


@dataclass(frozen=True, slots=True)
class StreamSignatureDelta:
    index: int
    signature: str


@dataclass(frozen=True, slots=True)
class StreamCitationDelta:
    """A citation for the text block at `index` (`citations_delta`: web search results,
    fetched pages, documents), kept with the block as the API sent it."""

    index: int
    citation: dict[str, Any]


@dataclass(frozen=True, slots=True)
class StreamInputDelta:
    index: int
    partial_json: str


@dataclass(frozen=True, slots=True)
class StreamBlockStop:
    index: int
    # The finished block when the backend has it (authoritative, e.g. from the SDK's
    # snapshot); otherwise the loop assembles it from the deltas.
    block: Block | None = None


@dataclass(frozen=True, slots=True)
class StreamMessageDelta:
    stop_reason: str | None
    usage: Usage | None = None


@dataclass(frozen=True, slots=True)
class StreamMessageStop:
    pass


@dataclass(frozen=True, slots=True)
class StreamRetryWait:
    """The server refused the request for now; the backend tries again in `seconds`."""

    seconds: float
    reason: str  # the refusal's title ("Rate limited")


StreamEvent: TypeAlias = (
    StreamMessageStart
    | StreamBlockStart
    | StreamTextDelta
    | StreamThinkingDelta
    | StreamSignatureDelta
    | StreamCitationDelta
    | StreamInputDelta
    | StreamBlockStop
    | StreamMessageDelta
    | StreamMessageStop
    | StreamRetryWait
)

# -- what the loop yields -------------------------------------------------------------------


class TransitionReason(StrEnum):
    """Why one step of the loop ended: the first two continue the loop, the rest stop it."""

    TOOL_USE = "tool_use"
    PAUSE_TURN = "pause_turn"
    END_TURN = "end_turn"
    STOP_SEQUENCE = "stop_sequence"
    MAX_TOKENS = "max_tokens"
    REFUSAL = "refusal"
    CONTEXT_WINDOW_EXCEEDED = "model_context_window_exceeded"
    UNKNOWN_STOP_REASON = "unknown_stop_reason"
    TURN_LIMIT = "turn_limit"
    CANCELLED = "cancelled"
    ERROR = "error"

    @property
    def continues(self) -> bool:
        return self in (TransitionReason.TOOL_USE, TransitionReason.PAUSE_TURN)


@dataclass(frozen=True, slots=True)
class RequestStarted:
    turn: int
    request: ChatRequest
    estimated_input_tokens: int | None


@dataclass(frozen=True, slots=True)
class MessageStarted:
    message_id: str


@dataclass(frozen=True, slots=True)
class BlockStarted:
    message_id: str
    index: int
    block_type: str
    tool_name: str = ""


@dataclass(frozen=True, slots=True)
class TextDelta:
    message_id: str
    index: int
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    message_id: str
    index: int
    thinking: str


@dataclass(frozen=True, slots=True)
class ToolInputDelta:
    message_id: str
    index: int
    partial_json: str


@dataclass(frozen=True, slots=True)
class BlockFinished:
    message_id: str
    index: int
    block: Block


@dataclass(frozen=True, slots=True)
class UsageUpdated:
    message_id: str
    usage: Usage


@dataclass(frozen=True, slots=True)
class MessageAdded:
    """A message was appended to the loop's history: persist it."""

    message: Message


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    call: ToolUseBlock


@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    call: ToolUseBlock
    result: ToolResultBlock
    seconds: float


@dataclass(frozen=True, slots=True)
class StepFinished:
    """One request/response step ended; the loop continues if `reason.continues`."""

    turn: int
    reason: TransitionReason
    detail: str = ""


@dataclass(frozen=True, slots=True)
class CompactionStarted:
    reason: str


@dataclass(frozen=True, slots=True)
class CompactionApplied:
    summary_number: int
    tokens_before: int
    tokens_after: int
    warnings: tuple[str, ...]  # hard facts the summary lost, accepted after one retry


@dataclass(frozen=True, slots=True)
class CompactionFailed:
    error: ErrorInfo
    paused: bool  # the circuit breaker opened: auto-compaction is off until resumed


@dataclass(frozen=True, slots=True)
class ContextStateChanged:
    """The chat's context state changed (a compaction, a breaker failure): persist it.
    `state` is the context layer's `ContextState` (core does not know its type)."""

    state: object


@dataclass(frozen=True, slots=True)
class RetryWaiting:
    """Nothing is wrong yet: the request is sent again in `seconds` (shown as a countdown)."""

    seconds: float
    reason: str


@dataclass(frozen=True, slots=True)
class TurnFinished:
    """The last event of `run_turn`: why it stopped, and the error if one stopped it."""

    reason: TransitionReason
    turn_count: int
    error: ErrorInfo | None = None
    detail: str = ""


LoopEvent: TypeAlias = (
    RequestStarted
    | RetryWaiting
    | MessageStarted
    | BlockStarted
    | TextDelta
    | ThinkingDelta
    | ToolInputDelta
    | BlockFinished
    | UsageUpdated
    | MessageAdded
    | ToolCallStarted
    | ToolCallFinished
    | StepFinished
    | CompactionStarted
    | CompactionApplied
    | CompactionFailed
    | ContextStateChanged
    | TurnFinished
)
