"""Terse message builders for tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path

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


def database_at(path: Path, version: int) -> sqlite3.Connection:
    """A database as version `version` of ContextDesk left it (its first migrations only),
    open in autocommit: the test fills it in, closes it, and opens it with today's store."""
    from desktop_app.storage.db import MIGRATIONS

    db = sqlite3.connect(path, isolation_level=None)
    for migration in MIGRATIONS[:version]:
        migration(db)
    db.execute(f"PRAGMA user_version = {version}")
    return db
