"""The ports: what the loop needs from the outside world, as `Protocol`s.

Outer layers implement them (`api` a ChatBackend and a ModelLister, `tools` a ToolRunner, `tokens` a
TokenCounter, `context` a RequestPlanner, the GUI and CLI an Approver); tests use fakes.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

from desktop_app.core.blocks import ImageBlock, OpaqueBlock, TextBlock, ToolUseBlock

if TYPE_CHECKING:  # in signatures only: `ModelInfo` users need not load the loop's events
    from desktop_app.core.cancel import CancelToken
    from desktop_app.core.events import LoopEvent, StreamEvent
    from desktop_app.core.messages import Message
    from desktop_app.core.request import ChatRequest, ToolSpec


class ChatBackend(Protocol):
    def stream(self, request: ChatRequest, cancel: CancelToken) -> Iterator[StreamEvent]:
        """Send `request`, yield its stream. Raise `ContextDeskError` on failure and
        `Cancelled` once `cancel` fires (promptly, even while the server is silent)."""
        ...

    def release_thread(self) -> None:
        """Close what the calling thread opened (its client, event loop, sockets). A
        worker thread calls this before it ends; a later call on it opens new ones."""
        ...

    def close(self) -> None:
        """Done with the backend: close what the calling thread holds. Threads that used
        it have released their own (`release_thread`)."""
        ...


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """A model as a server lists it (or as we know it when the server cannot say)."""

    id: str
    display_name: str
    context_window: int
    max_output: int
    # What the Models API reported of its capabilities (None: it did not say).
    thinking_types: frozenset[str] | None = None
    efforts: tuple[str, ...] | None = None
    lifecycle: str = "active"
    source: str = "table"  # "server": the server listed it; "table": our built-in table
    web_search: bool | None = None  # `capabilities.server_tools.web_search.supported`


class ModelLister(Protocol):
    def models(self, cancel: CancelToken | None = None) -> list[ModelInfo]:
        """The server's models (fetched once per connection); raise `ContextDeskError`
        when the server cannot say."""
        ...


class ServerBackend(ChatBackend, ModelLister, Protocol):
    """A server to talk to: it streams replies, lists its models and counts a request's
    tokens as the model will (None where it has no count_tokens endpoint)."""

    def count_tokens(
        self, request: ChatRequest, cancel: CancelToken | None = None
    ) -> int | None: ...


class RequestPlanner(Protocol):
    def prepare(
        self, messages: Sequence[Message], cancel: CancelToken
    ) -> Generator[LoopEvent, None, ChatRequest]:
        """Project the history into the next request (compacting first if due), yielding
        any events on the way; return the request."""
        ...


class TokenCounter(Protocol):
    def count_request(self, request: ChatRequest) -> int:
        """Estimated input tokens of the whole request."""
        ...


class ApprovalPolicy(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


@dataclass(frozen=True, slots=True)
class ToolCheck:
    """What the runner says about a call before it runs: may it, and what exactly it does."""

    policy: ApprovalPolicy
    summary: str  # the fully resolved action, for the approval dialog ("write /home/a/x.py")
    error: str = ""  # non-empty: refuse the call with this message (unknown tool, bad input)
    # Calls in different lanes may run at the same time (an MCP server each); a lane's
    # calls run one after another, in order. The built-in tools share the default lane.
    lane: str = ""


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    content: str | tuple[TextBlock | ImageBlock | OpaqueBlock, ...]
    is_error: bool = False


class ToolRunner(Protocol):
    def specs(self) -> Sequence[ToolSpec]: ...

    def check(self, call: ToolUseBlock) -> ToolCheck: ...

    def run(self, call: ToolUseBlock, cancel: CancelToken) -> ToolOutcome:
        """Run an approved call. Failures become an `is_error` outcome or an exception
        (the loop turns either into an error result); `Cancelled` once `cancel` fires."""
        ...


class ApprovalDecision(StrEnum):
    ALLOW_ONCE = "allow_once"
    ALLOW_ALWAYS = "allow_always"  # for this chat
    DENY = "deny"


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    call: ToolUseBlock
    summary: str


class Approver(Protocol):
    def approve(self, request: ApprovalRequest, cancel: CancelToken) -> ApprovalDecision:
        """Ask the user; block until they answer. Raise `Cancelled` if `cancel` fires."""
        ...
