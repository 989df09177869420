"""Content blocks: the typed parts of a message, and their exact Anthropic JSON.

Blocks are frozen: a block, once received or written, never changes. Thinking blocks keep
their text and signature exactly as received, so they can be sent back byte for byte.
Block types ContextDesk does not model (documents, server tool calls, URL images, …) are
kept whole as `OpaqueBlock`, so nothing a user imports is silently lost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

JSONObject: TypeAlias = dict[str, Any]

IMAGE_MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")


@dataclass(frozen=True, slots=True)
class TextBlock:
    text: str
    citations: tuple[JSONObject, ...] = ()


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    thinking: str
    signature: str


@dataclass(frozen=True, slots=True)
class RedactedThinkingBlock:
    data: str


@dataclass(frozen=True, slots=True)
class ToolUseBlock:
    id: str
    name: str
    input: JSONObject


@dataclass(frozen=True, slots=True)
class ImageBlock:
    """A base64 image; `data` is the base64 text, never decoded here."""

    media_type: str
    data: str


@dataclass(frozen=True, slots=True)
class OpaqueBlock:
    """A block type we do not model, kept exactly as it came."""

    type: str
    raw: JSONObject


ResultPart: TypeAlias = "TextBlock | ImageBlock | OpaqueBlock"


@dataclass(frozen=True, slots=True)
class ToolResultBlock:
    tool_use_id: str
    content: str | tuple[TextBlock | ImageBlock | OpaqueBlock, ...]
    is_error: bool = False

    @property
    def text(self) -> str:
        """The result's text, whatever its shape (used for notes and token counts)."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(p.text for p in self.content if isinstance(p, TextBlock))


Block: TypeAlias = (
    TextBlock
    | ThinkingBlock
    | RedactedThinkingBlock
    | ToolUseBlock
    | ToolResultBlock
    | ImageBlock
    | OpaqueBlock
)

THINKING_TYPES = (ThinkingBlock, RedactedThinkingBlock)


def block_type(block: Block) -> str:
    """The block's API `type` string."""
    if isinstance(block, OpaqueBlock):
        return block.type
    return _TYPE_NAMES[type(block)]


_TYPE_NAMES: dict[type, str] = {
    TextBlock: "text",
    ThinkingBlock: "thinking",
    RedactedThinkingBlock: "redacted_thinking",
    ToolUseBlock: "tool_use",
    ToolResultBlock: "tool_result",
    ImageBlock: "image",
}


def block_to_api(block: Block) -> JSONObject:
    """The block as the Messages API expects it (key order as the API sends it)."""
    if isinstance(block, TextBlock):
        out: JSONObject = {"type": "text", "text": block.text}
        if block.citations:
            out["citations"] = list(block.citations)
        return out
    if isinstance(block, ThinkingBlock):
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, RedactedThinkingBlock):
        return {"type": "redacted_thinking", "data": block.data}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if isinstance(block, ToolResultBlock):
        content: Any = (
            block.content
            if isinstance(block.content, str)
            else [block_to_api(p) for p in block.content]
        )
        out = {"type": "tool_result", "tool_use_id": block.tool_use_id, "content": content}
        if block.is_error:
            out["is_error"] = True
        return out
    if isinstance(block, ImageBlock):
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": block.media_type, "data": block.data},
        }
    return dict(block.raw)
