"""Terse message builders for tests."""

from __future__ import annotations

from desktop_app.core.blocks import Block, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from desktop_app.core.messages import Message


def u(*blocks: Block | str) -> Message:
    return Message(
        role="user", blocks=tuple(TextBlock(b) if isinstance(b, str) else b for b in blocks)
    )


def a(*blocks: Block | str) -> Message:
    return Message(
        role="assistant", blocks=tuple(TextBlock(b) if isinstance(b, str) else b for b in blocks)
    )


def call(tool_id: str, name: str = "read_file", **tool_input: object) -> ToolUseBlock:
    return ToolUseBlock(tool_id, name, dict(tool_input))


def result(tool_id: str, content: str = "ok", *, is_error: bool = False) -> ToolResultBlock:
    return ToolResultBlock(tool_id, content, is_error)


def think(text: str = "hmm", signature: str = "sig==") -> ThinkingBlock:
    return ThinkingBlock(text, signature)


def results_of(message: Message) -> list[ToolResultBlock]:
    """The message's blocks, asserted to be tool results."""
    assert all(isinstance(b, ToolResultBlock) for b in message.blocks), message.blocks
    return [b for b in message.blocks if isinstance(b, ToolResultBlock)]
