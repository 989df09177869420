"""What a chat needs from the engine that made it (`ChatHost`), as a protocol: a chat's
parts build on this, never on `Engine` itself, so that the engine, which hands chats
out, is never imported back by them (no cycle: docs/architecture.md, "Layers")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager

    from desktop_app.chats.connection import Connection
    from desktop_app.config.prices import PriceTable, Spend
    from desktop_app.config.settings import Settings
    from desktop_app.core.messages import Message
    from desktop_app.core.model_facts import ModelFacts
    from desktop_app.storage.chat_info import ChatInfo
    from desktop_app.storage.store import ChatStore
    from desktop_app.tokens.counter import TokenCounter
    from desktop_app.tools.mcp_hub import McpHub


class ChatHost(Protocol):
    """`Engine`, as its chats see it."""

    settings: Settings
    store: ChatStore
    connection: Connection

    @property
    def counter(self) -> TokenCounter: ...

    @property
    def mcp(self) -> McpHub | None: ...

    def model_of(self, chat: ChatInfo) -> str: ...

    def model_facts(self, model: str) -> ModelFacts: ...

    def model_window(self, model: str) -> int: ...

    def prices(self) -> PriceTable: ...

    def clock(self) -> float:
        """The time now (time.time; a test's clock in tests)."""
        ...

    def spend(self, since: float | None = None, chat_id: str | None = None) -> Spend: ...

    def reader(self, chat_id: str) -> Callable[[], Sequence[Message]]: ...

    def transcript_at_one_moment(
        self, chat_id: str
    ) -> AbstractContextManager[tuple[ChatStore, Sequence[Message]]]: ...

    def forget(self, chat_id: str) -> None: ...
