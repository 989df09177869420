"""Messages: who said it, the ordered blocks, and how the saying ended."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Literal, TypeAlias

from desktop_app.core.blocks import Block, JSONObject, TextBlock, ToolResultBlock, block_to_api

Role: TypeAlias = Literal["user", "assistant"]


class MessageStatus(StrEnum):
    COMPLETE = "complete"
    STREAMING = "streaming"
    INTERRUPTED = "interrupted"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage as the API reports it. `input_tokens` excludes cached tokens."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    # Of the cache writes, those kept an hour (`cache_creation.ephemeral_1h_input_tokens`:
    # priced at the 1-hour rate); of the output, the thinking (its text may be omitted).
    cache_write_1h_tokens: int = 0
    thinking_tokens: int = 0
    # Server tools run for this reply (`server_tool_use`): searches are billed apiece
    # (config/prices.py), fetches cost only the tokens they bring.
    web_search_requests: int = 0
    web_fetch_requests: int = 0

    @property
    def prompt_tokens(self) -> int:
        """The whole prompt: uncached + cache writes + cache reads."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def to_api(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        }
        if self.cache_write_1h_tokens:
            out["cache_creation"] = {
                "ephemeral_5m_input_tokens": self.cache_creation_input_tokens
                - self.cache_write_1h_tokens,
                "ephemeral_1h_input_tokens": self.cache_write_1h_tokens,
            }
        if self.thinking_tokens:
            out["output_tokens_details"] = {"thinking_tokens": self.thinking_tokens}
        if self.web_search_requests or self.web_fetch_requests:
            out["server_tool_use"] = {
                "web_search_requests": self.web_search_requests,
                "web_fetch_requests": self.web_fetch_requests,
            }
        return out


def new_id(prefix: str = "msg") -> str:
    """A fresh local id. Time-ordered hex, so ids sort roughly by creation; 40 random bits
    keep ids made in the same nanosecond apart."""
    return f"{prefix}_{time.time_ns():016x}{os.urandom(5).hex()}"


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    blocks: tuple[Block, ...]
    id: str = field(default_factory=new_id)
    status: MessageStatus = MessageStatus.COMPLETE
    stop_reason: str | None = None
    usage: Usage | None = None
    created_at: float = field(default_factory=time.time)
    # Bumped by every explicit edit; views cache layouts by (id, revision).
    revision: int = 0
    # A reply's origin (core/binding.py): the model that wrote it, and the digest of the
    # request prefix it followed. "" for the user's messages, imports and older replies.
    model: str = ""
    bound_to: str = ""

    def to_api(self) -> JSONObject:
        return {"role": self.role, "content": [block_to_api(b) for b in self.blocks]}

    def with_blocks(self, blocks: tuple[Block, ...]) -> Message:
        return replace(self, blocks=blocks)

    @property
    def text(self) -> str:
        """The message's plain text (text blocks only), for display and search."""
        return "".join(b.text for b in self.blocks if isinstance(b, TextBlock))

    @property
    def is_tool_results(self) -> bool:
        """A user turn that only carries tool results back: part of Claude's work, not
        something the person wrote."""
        return (
            self.role == "user"
            and bool(self.blocks)
            and all(isinstance(b, ToolResultBlock) for b in self.blocks)
        )


def user_text(text: str) -> Message:
    return Message(role="user", blocks=(TextBlock(text),))


def as_list(messages: Sequence[Message]) -> list[Message]:
    """`messages` as a list — itself when it is one (a list compares with a list's slice
    at C speed; a long history is not copied to check it)."""
    return messages if isinstance(messages, list) else list(messages)


def start_of_last_turns(messages: Sequence[Message], turns: int) -> int:
    """Where the last `turns` turns begin (0: the chat has no more), found from the
    newest back: every plan shows it, and a 100,000-message chat's walk took 140 ms."""
    seen = 0
    for n in range(len(messages) - 1, -1, -1):
        if messages[n].role == "user" and not messages[n].is_tool_results:
            seen += 1
            if seen == turns:
                return n
    return 0
