"""One Messages-API request as data, and its exact JSON body.

The body built here is what is sent, what the "next request" view shows and what an
export carries, so all three always agree.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from desktop_app.core.blocks import JSONObject, RedactedThinkingBlock, ThinkingBlock
from desktop_app.core.errors import ContextDeskError, ErrorKind, Problem, ProtocolViolationError
from desktop_app.core.messages import Message
from desktop_app.core.prompt_cache import ttl_marker
from desktop_app.core.protocol import lone_surrogate_at
from desktop_app.core.request_rules import request_problems

RequestPurpose: TypeAlias = Literal["chat", "compaction", "count"]
MAX_REQUEST_BYTES = 32 * 1024 * 1024

TOOL_NAME_PATTERN = re.compile(r"[a-zA-Z0-9_-]{1,128}")


@dataclass(frozen=True, slots=True)
class SystemPart:
    """A piece of the system prompt; `cache` puts a cache breakpoint right after it."""

    text: str
    cache: bool = False


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    input_schema: JSONObject

    def to_api(self) -> JSONObject:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }


@dataclass(frozen=True, slots=True)
class RequestExtras:
    """What an imported request carried beyond its messages: client tool definitions,
    `tool_choice` and `metadata` — sent on with the chat's own."""

    tools: tuple[ToolSpec, ...] = ()
    tool_choice: JSONObject | None = None
    metadata: JSONObject | None = None

    @classmethod
    def read(cls, text: str) -> RequestExtras | None:
        """From the chat's stored JSON; None when it is not what `to_json` writes."""
        try:
            data = json.loads(text) if text else {}
        except ValueError:
            return None
        if not isinstance(data, dict):
            return None
        tools = tuple(
            ToolSpec(t["name"], str(t.get("description", "")), t["input_schema"])
            for t in data.get("tools") or ()
            if isinstance(t, dict)
            and isinstance(t.get("name"), str)
            and isinstance(t.get("input_schema"), dict)
        )
        choice, metadata = data.get("tool_choice"), data.get("metadata")
        return cls(
            tools,
            choice if isinstance(choice, dict) else None,
            metadata if isinstance(metadata, dict) else None,
        )

    def to_json(self) -> str:
        if not (self.tools or self.tool_choice or self.metadata):
            return ""
        data: JSONObject = {"tools": [t.to_api() for t in self.tools]}
        if self.tool_choice:
            data["tool_choice"] = self.tool_choice
        if self.metadata:
            data["metadata"] = self.metadata
        return json.dumps(data, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class ChatRequest:
    model: str
    messages: tuple[Message, ...]
    max_tokens: int
    system: tuple[SystemPart, ...] = ()
    tools: tuple[ToolSpec, ...] = ()
    # The `thinking` field as the model takes it (core/thinking.py); None: left out.
    thinking: JSONObject | None = None
    effort: str = ""  # `output_config.effort`; "": left out (the model's default)
    cache_last_message: bool = False
    purpose: RequestPurpose = "chat"
    # An imported chat's own, where the model takes it (core/thinking.allowed_tool_choice).
    tool_choice: JSONObject | None = None
    metadata: JSONObject | None = None
    # `cache_control` markers go only to servers that take them (Anthropic's API); the
    # body shown before sending follows the same rule, so it is what is sent.
    prompt_caching: bool = True
    cache_ttl: str = "5m"  # how long each breakpoint is kept: "5m" or "1h" (core/prompt_cache.py)

    @property
    def cache_breakpoints(self) -> int:
        """How many `cache_control` markers the body carries."""
        if not self.prompt_caching:
            return 0
        marked = sum(1 for p in self.system if p.text and p.cache)
        return marked + (1 if self.cache_last_message and self.messages else 0)

    @property
    def thinking_budget(self) -> int | None:
        """The extended-thinking budget, when the request carries one."""
        if self.thinking and self.thinking.get("type") == "enabled":
            budget = self.thinking.get("budget_tokens")
            return budget if isinstance(budget, int) else None
        return None

    @property
    def system_text(self) -> str:
        """The effective system prompt as the model reads it."""
        return "\n\n".join(p.text for p in self.system if p.text)

    def body(self) -> JSONObject:
        """The exact JSON body of `POST /v1/messages` (without `stream`)."""
        body: JSONObject = {"model": self.model, "max_tokens": self.max_tokens}
        marker = ttl_marker(self.cache_ttl) if self.prompt_caching else None
        system = [_system_block(p, marker) for p in self.system if p.text]
        if system:
            body["system"] = system
        messages = [m.to_api() for m in self.messages]
        if self.cache_last_message and marker and messages:
            _mark_cache_breakpoint(self.messages[-1], messages[-1], marker)
        body["messages"] = messages
        if self.tools:
            body["tools"] = [t.to_api() for t in self.tools]
            if self.tool_choice:
                body["tool_choice"] = self.tool_choice
        if self.metadata:
            body["metadata"] = self.metadata
        if self.thinking:
            body["thinking"] = dict(self.thinking)
        if self.effort:
            body["output_config"] = {"effort": self.effort}
        return body

    def settings(self) -> JSONObject:
        """The body without its messages, system and tools: what the request rules
        check beside the messages (cheap: no history is serialised)."""
        out: JSONObject = {"model": self.model, "max_tokens": self.max_tokens}
        if self.thinking:
            out["thinking"] = self.thinking
        if self.effort:
            out["output_config"] = {"effort": self.effort}
        if self.tools and self.tool_choice:
            out["tool_choice"] = self.tool_choice
        return out


def _system_block(part: SystemPart, marker: dict[str, str] | None) -> JSONObject:
    block: JSONObject = {"type": "text", "text": part.text}
    if part.cache and marker:
        block["cache_control"] = dict(marker)
    return block


def _mark_cache_breakpoint(
    message: Message, api_message: JSONObject, marker: dict[str, str]
) -> None:
    """Put `cache_control` on the last block that may carry one (not thinking)."""
    content: list[Any] = api_message["content"]
    for index in range(len(message.blocks) - 1, -1, -1):
        if not isinstance(message.blocks[index], ThinkingBlock | RedactedThinkingBlock):
            content[index] = {**content[index], "cache_control": dict(marker)}
            return


def check_request(
    request: ChatRequest, *, context_window: int, estimated_input: int | None
) -> None:
    """Refuse, with a clear error, a request the API would reject (invariants 1–6, 8, 9)."""
    problems = request_problems(
        request.messages, request.settings(), cache_breakpoints=request.cache_breakpoints
    )
    for i, part in enumerate(request.system):
        at = lone_surrogate_at(part.text)
        if at >= 0:
            problems.append(
                Problem(f"system.{i}.text", f"no low surrogate in string at character {at}")
            )
    for i, tool in enumerate(request.tools):
        if not TOOL_NAME_PATTERN.fullmatch(tool.name):
            problems.append(
                Problem(f"tools.{i}.name", "String should match pattern '^[a-zA-Z0-9_-]{1,128}$'")
            )
    if problems:
        raise ProtocolViolationError(problems)
    if estimated_input is not None and estimated_input + request.max_tokens > context_window:
        raise ContextDeskError(
            "The conversation is too long for the model",
            f"About {estimated_input:,} input tokens plus {request.max_tokens:,} reserved for the "
            f"reply exceed the model's {context_window:,}-token window. Compact the chat, exclude "
            "old messages, or lower the maximum reply length.",
            kind=ErrorKind.CONTEXT_OVERFLOW,
        )
    size = len(json.dumps(request.body(), ensure_ascii=False).encode("utf-8"))
    if size > MAX_REQUEST_BYTES:
        raise ContextDeskError(
            "The request is too large",
            f"The request body is {size / 1e6:.1f} MB; the API accepts at most 32 MB. Remove "
            "large images or attachments from the context, or compact the chat.",
            kind=ErrorKind.REQUEST_TOO_LARGE,
        )
