"""A scripted `ChatBackend`: each call to `stream` plays the next scripted reply.

A reply is a list of steps: stream events, `Hang()` (block until cancelled, like a silent
server), or an exception to raise at that point (a mid-stream failure).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field

from desktop_app.core.blocks import RedactedThinkingBlock
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import Cancelled, ContextDeskError, ErrorKind, Problem
from desktop_app.core.events import (
    StreamBlockStart,
    StreamBlockStop,
    StreamEvent,
    StreamInputDelta,
    StreamMessageDelta,
    StreamMessageStart,
    StreamMessageStop,
    StreamSignatureDelta,
    StreamTextDelta,
    StreamThinkingDelta,
)
from desktop_app.core.messages import Usage
from desktop_app.core.request import ChatRequest
from desktop_app.core.request_rules import request_problems


@dataclass(frozen=True)
class Hang:
    """Block like a silent server until the cancel token fires."""


@dataclass(frozen=True)
class CancelNow:
    """The user presses Stop at exactly this point of the stream (deterministic)."""


Step = StreamEvent | Hang | CancelNow | BaseException


class RejectedRequest(ContextDeskError):
    """What a strict server answers to a request that breaks the protocol: a 400."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("Bad request (400)", str(problems[0]), kind=ErrorKind.INVALID_REQUEST)
        self.problems = problems


@dataclass
class ScriptedBackend:
    replies: list[list[Step]] = field(default_factory=list)
    requests: list[ChatRequest] = field(default_factory=list)
    strict: bool = True  # answer invalid requests with a 400, as the API does

    def queue(self, *replies: list[Step]) -> ScriptedBackend:
        self.replies.extend(replies)
        return self

    def stream(self, request: ChatRequest, cancel: CancelToken) -> Iterator[StreamEvent]:
        self.requests.append(request)
        # The request rules of its model, as the API applies them (core/request_rules.py):
        # thinking, effort, sampling, prefill, tool_choice, max_tokens — not only shape.
        problems = request_problems(
            request.messages, request.settings(), cache_breakpoints=request.cache_breakpoints
        )
        if self.strict and problems:
            raise RejectedRequest(problems)
        if not self.replies:
            raise AssertionError("the scripted backend has no reply left for this request")
        for step in self.replies.pop(0):
            if cancel.cancelled:
                raise Cancelled()
            if isinstance(step, CancelNow):
                cancel.cancel()
                continue
            if isinstance(step, Hang):
                cancel.wait(30)
                raise Cancelled()
            if isinstance(step, BaseException):
                raise step
            yield step

    def release_thread(self) -> None:
        """Nothing is held per thread: there is no socket."""

    def close(self) -> None:
        """Nothing to close."""


class ReplyBuilder:
    """Builds the events of one reply, block by block, like the API streams them."""

    def __init__(self, input_tokens: int = 10) -> None:
        self.steps: list[Step] = [StreamMessageStart(Usage(input_tokens=input_tokens))]
        self.index = 0

    def text(self, text: str, chunks: int = 2) -> ReplyBuilder:
        self.steps.append(StreamBlockStart(self.index, "text"))
        size = max(1, len(text) // chunks)
        for start in range(0, len(text), size):
            self.steps.append(StreamTextDelta(self.index, text[start : start + size]))
        self.steps.append(StreamBlockStop(self.index))
        self.index += 1
        return self

    def thinking(self, thinking: str, signature: str) -> ReplyBuilder:
        self.steps.append(StreamBlockStart(self.index, "thinking"))
        self.steps.append(StreamThinkingDelta(self.index, thinking))
        self.steps.append(StreamSignatureDelta(self.index, signature))
        self.steps.append(StreamBlockStop(self.index))
        self.index += 1
        return self

    def redacted(self, data: str) -> ReplyBuilder:
        block = RedactedThinkingBlock(data)
        self.steps.append(StreamBlockStart(self.index, "redacted_thinking", block=block))
        self.steps.append(StreamBlockStop(self.index))
        self.index += 1
        return self

    def tool(self, tool_id: str, name: str, tool_input: dict[str, object] | str) -> ReplyBuilder:
        raw = tool_input if isinstance(tool_input, str) else json.dumps(tool_input)
        self.steps.append(StreamBlockStart(self.index, "tool_use", tool_id=tool_id, tool_name=name))
        half = len(raw) // 2
        for piece in (raw[:half], raw[half:]):
            if piece:
                self.steps.append(StreamInputDelta(self.index, piece))
        self.steps.append(StreamBlockStop(self.index))
        self.index += 1
        return self

    def then(self, step: Step) -> ReplyBuilder:
        self.steps.append(step)
        return self

    def end(self, stop_reason: str | None = None, output_tokens: int = 5) -> list[Step]:
        if stop_reason is None:
            has_tool = any(
                isinstance(s, StreamBlockStart) and s.block_type == "tool_use" for s in self.steps
            )
            stop_reason = "tool_use" if has_tool else "end_turn"
        self.steps.append(StreamMessageDelta(stop_reason, Usage(output_tokens=output_tokens)))
        self.steps.append(StreamMessageStop())
        return self.steps

    def cut(self) -> list[Step]:
        """The stream ends here, without message_stop (a dropped connection)."""
        return self.steps


def text_reply(text: str, stop_reason: str = "end_turn") -> list[Step]:
    return ReplyBuilder().text(text).end(stop_reason)
