"""`AnthropicBackend`: the `ChatBackend` port over the anthropic SDK.

Why asyncio: measured with SDK 2.14, `stream.close()` from another thread does not wake a
reader blocked on a silent server; cancelling an asyncio task does, in about a millisecond.
So each worker thread owns an event loop and an `AsyncAnthropic` client bound to it; the
sync `stream()` generator steps the async stream one event at a time, and a Stop cancels
the running step from whatever thread pressed it.

`import anthropic` costs ~2.5 s: it happens on first use, on the worker thread, never on
the path to the first window.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import threading
import time
from collections.abc import AsyncGenerator, Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlparse

from desktop_app.api.errors import map_error
from desktop_app.api.models import BUILTIN_MODELS
from desktop_app.core.blocks import OpaqueBlock, RedactedThinkingBlock
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import Cancelled, ContextDeskError, ErrorKind
from desktop_app.core.events import (
    StreamBlockStart,
    StreamBlockStop,
    StreamCitationDelta,
    StreamEvent,
    StreamInputDelta,
    StreamMessageDelta,
    StreamMessageStart,
    StreamMessageStop,
    StreamRetryWait,
    StreamSignatureDelta,
    StreamTextDelta,
    StreamThinkingDelta,
)
from desktop_app.core.messages import Usage
from desktop_app.core.model_facts import EFFORTS, facts_for
from desktop_app.core.ports import ModelInfo
from desktop_app.core.request import ChatRequest
from desktop_app.tokens.counter import TokenCounter

log = logging.getLogger(__name__)

ANTHROPIC_HOST = "api.anthropic.com"
PURPOSE_HEADER = "x-contextdesk-purpose"
DEFAULT_TIMEOUT_S = 600.0
RETRIED = {ErrorKind.RATE_LIMIT, ErrorKind.OVERLOADED, ErrorKind.SERVER_ERROR, ErrorKind.CONNECTION}


@dataclass(frozen=True, slots=True)
class Deadlines:
    """How long a request may take before it is an error a person can act on."""

    connect_s: float = 10.0  # to reach the server
    first_event_s: float = 60.0  # from sending to the reply's first event
    idle_s: float = 90.0  # between two events of the reply (pings do not count)
    max_wait_s: float = 60.0  # the longest retry-after we wait out
    retries: int = 2
    request_s: float = 1800.0  # one request, start to end, however steadily it trickles


def is_anthropic(base_url: str | None) -> bool:
    host = (urlparse(base_url).hostname or "") if base_url else ANTHROPIC_HOST
    return host == "anthropic.com" or host.endswith(".anthropic.com")


class AnthropicBackend:
    """Talks to Anthropic's API or any Anthropic-compatible server: the `ChatBackend`
    and `ModelLister` ports."""

    def __init__(
        self,
        api_key: str,
        base_url: str | None = None,
        *,
        max_retries: int = 2,
        timeout: float = DEFAULT_TIMEOUT_S,
        prompt_caching: bool | None = None,
        deadlines: Deadlines | None = None,
    ) -> None:
        self._api_key = api_key
        self.base_url = (
            base_url or os.environ.get("ANTHROPIC_BASE_URL") or f"https://{ANTHROPIC_HOST}"
        )
        self._max_retries = max_retries
        # Streams retry here, where the wait can be capped (the SDK waits whatever it is told).
        self.deadlines = deadlines or Deadlines(retries=max_retries)
        if deadlines is not None:
            self._max_retries = deadlines.retries
        self._timeout = timeout
        # On by default against Anthropic's API; other servers may reject cache_control.
        self.prompt_caching = (
            is_anthropic(self.base_url) if prompt_caching is None else prompt_caching
        )
        self._local = threading.local()  # one event loop + client per thread
        self._models: list[ModelInfo] | None = None  # fetched once per backend

    @classmethod
    def from_environment(cls, **options: Any) -> AnthropicBackend:
        """ANTHROPIC_API_KEY (required here) and ANTHROPIC_BASE_URL (optional)."""
        key = os.environ.get("ANTHROPIC_API_KEY", "")
        if not key:
            raise ContextDeskError(
                "No API key",
                "Set ANTHROPIC_API_KEY, or enter a key in Settings.",
                kind=ErrorKind.AUTH,
            )
        return cls(key, os.environ.get("ANTHROPIC_BASE_URL") or None, **options)

    def calibrate(self, counter: TokenCounter, request: ChatRequest) -> float | None:
        """Teach `counter` the server's count for `request` when it has count_tokens;
        None (and the local estimate stands) when it does not."""
        count = self.count_tokens(request)
        return None if count is None else counter.learn_from_usage(request, count)

    # -- the ChatBackend port -------------------------------------------------------------

    def stream(self, request: ChatRequest, cancel: CancelToken) -> Iterator[StreamEvent]:
        """Every stream ends: the first event must come within `first_event_s`, each
        later one within `idle_s` (pings carry nothing and do not count); a refused
        request is tried again up to `retries` times, waiting what the server asks up to
        `max_wait_s` — asking more is an error at once, not an hour of silence."""
        loop = self._loop()
        body = self._body(request)
        deadlines = self.deadlines
        for attempt in range(deadlines.retries + 1):
            events = self._events(body, request.purpose)
            started = False
            ends = time.monotonic() + deadlines.request_s
            try:
                while True:
                    cancel.raise_if_cancelled()
                    limit = deadlines.idle_s if started else deadlines.first_event_s
                    timed_out = functools.partial(self._silent, limit, started)
                    if ends - time.monotonic() < limit:  # the whole request's time runs out first
                        limit = ends - time.monotonic()
                        timed_out = functools.partial(self._too_long, deadlines.request_s)
                    if limit <= 0:
                        raise timed_out()
                    try:
                        event = self._step(loop, events.__anext__(), cancel, limit, timed_out)
                    except StopAsyncIteration:
                        return
                    started = True
                    yield event
            except ContextDeskError as exc:
                wait = None if started else self._retry_wait(exc, attempt)
                if wait is None:
                    raise
                log.info("retrying in %.1f s after: %s", wait, exc.title)
                reason = exc.title
            finally:
                self._step(loop, events.aclose(), None)  # closes the HTTP stream
            remaining = wait
            while remaining > 0:  # a second at a time: the countdown the user sees
                yield StreamRetryWait(remaining, reason)
                if cancel.wait(min(1.0, remaining)):
                    raise Cancelled()
                remaining -= 1.0

    def _retry_wait(self, exc: ContextDeskError, attempt: int) -> float | None:
        """Seconds to wait before trying again, or None: do not (raises when the server
        asks for a longer wait than we keep a user waiting)."""
        if not exc.retryable or exc.kind not in RETRIED or attempt >= self.deadlines.retries:
            return None
        if _header(exc.__cause__, "x-should-retry") == "false":
            return None  # the server's own word (the SDK honours it too: _base_client.py)
        asked = _retry_after(exc.__cause__)
        if asked is not None and asked > self.deadlines.max_wait_s:
            raise ContextDeskError(
                exc.title,
                f"The server asks to wait {_duration(asked)} before trying again; ContextDesk "
                f"waits at most {_duration(self.deadlines.max_wait_s)}. Retry later.",
                retryable=True,
                details=exc.info.details,
                kind=exc.kind,
            ) from exc
        return asked if asked is not None else min(0.5 * 2**attempt, 8.0)

    def count_tokens(self, request: ChatRequest, cancel: CancelToken | None = None) -> int | None:
        """The server's count for `request`, or None when it has no count_tokens endpoint."""
        body = {k: v for k, v in self._body(request).items() if k != "max_tokens"}
        headers = {PURPOSE_HEADER: "count"}
        counting = self._client().messages.count_tokens(**body, extra_headers=headers)
        try:
            result = self._step(self._loop(), counting, cancel)
        except ContextDeskError as exc:
            if getattr(exc.__cause__, "status_code", None) in (404, 405):
                return None  # Ollama and others have no count_tokens: the local estimate stands
            raise
        return int(result.input_tokens)

    def models(self, cancel: CancelToken | None = None) -> list[ModelInfo]:
        """The server's models with their limits; the built-in table if it has no list.
        A list the server gave is remembered: `model_info` is asked often."""
        if self._models is not None:
            return list(self._models)

        async def fetch() -> list[ModelInfo]:
            page = await self._client().models.list(extra_headers={PURPOSE_HEADER: "count"})
            return [_model_info(m) for m in page.data]

        try:
            found = self._step(self._loop(), fetch(), cancel)
        except ContextDeskError as exc:
            log.info(
                "no models list from %s (%s); using the built-in table", self.base_url, exc.title
            )
            return list(BUILTIN_MODELS)
        if not found:
            return list(BUILTIN_MODELS)
        self._models = found
        return list(found)

    def model_info(self, model_id: str, cancel: CancelToken | None = None) -> ModelInfo:
        for info in self.models(cancel):
            if info.id == model_id:
                return info
        facts = facts_for(model_id)
        return ModelInfo(model_id, facts.display_name, facts.context_window, facts.max_output)

    # -- internals -----------------------------------------------------------------------

    def _body(self, request: ChatRequest) -> dict[str, Any]:
        if request.prompt_caching and not self.prompt_caching:
            request = replace(request, prompt_caching=False)  # (the planner knew already)
        return request.body()

    async def _events(
        self, body: dict[str, Any], purpose: str
    ) -> AsyncGenerator[StreamEvent, None]:
        client = self._client().with_options(max_retries=0)  # `stream` retries, capped
        stream = await client.messages.create(
            **body, stream=True, extra_headers={PURPOSE_HEADER: purpose}
        )
        async with stream:
            async for raw in stream:
                event = _convert(raw)
                if event is not None:
                    yield event

    def _step(
        self,
        loop: asyncio.AbstractEventLoop,
        awaitable: Any,
        cancel: CancelToken | None,
        limit_s: float | None = None,
        timed_out: Callable[[], ContextDeskError] | None = None,
    ) -> Any:
        """Run one awaitable on this thread's loop; a cancel from any thread stops it now,
        and so does `limit_s` passing (a server that has gone silent)."""
        task = loop.create_task(_within(awaitable, limit_s))

        def stop() -> None:
            loop.call_soon_threadsafe(task.cancel)

        unregister = cancel.on_cancel(stop) if cancel else None
        try:
            return loop.run_until_complete(task)
        except asyncio.CancelledError:
            raise Cancelled() from None
        except TimeoutError:
            raise (timed_out or functools.partial(self._silent, limit_s or 0, False))() from None
        except (StopAsyncIteration, Cancelled, ContextDeskError):
            raise
        except ValueError as exc:  # a stream line that is not JSON
            raise ContextDeskError(
                "The server sent something unreadable",
                f"{self.base_url} sent a reply that is not the Messages API's format ({exc}). "
                "What arrived is kept; Retry, or check the server.",
                retryable=True,
                details=f"{type(exc).__name__}: {exc}",
                kind=ErrorKind.STREAM_ERROR,
            ) from exc
        except Exception as exc:
            if _is_sdk_or_transport_error(exc):
                raise map_error(exc, self.base_url) from exc
            raise
        finally:
            if unregister:
                unregister()

    def _too_long(self, seconds: float) -> ContextDeskError:
        return ContextDeskError(
            "The reply took too long",
            f"{self.base_url} was still sending after {_duration(seconds)}. What arrived is "
            "kept; Retry, or ask for a shorter answer.",
            retryable=True,
            kind=ErrorKind.TIMEOUT,
        )

    def _silent(self, seconds: float, started: bool) -> ContextDeskError:
        if started:
            message = (
                f"{self.base_url} sent nothing for {_duration(seconds)} in the middle of the "
                "reply. What arrived is kept; Retry to ask again."
            )
        else:
            message = (
                f"{self.base_url} did not start answering within {_duration(seconds)}. "
                "Retry, or check the server (a local model may still be loading)."
            )
        return ContextDeskError(
            "The server stopped answering", message, retryable=True, kind=ErrorKind.TIMEOUT
        )

    def _loop(self) -> asyncio.AbstractEventLoop:
        loop: asyncio.AbstractEventLoop | None = getattr(self._local, "loop", None)
        if loop is None or loop.is_closed():
            loop = self._local.loop = asyncio.new_event_loop()
            self._local.client = None
        return loop

    def _client(self) -> Any:
        client = getattr(self._local, "client", None)
        if client is None:
            if not self._api_key:
                raise ContextDeskError(
                    "No API key",
                    "Enter an API key in Settings, set ANTHROPIC_API_KEY, or try the offline demo.",
                    kind=ErrorKind.AUTH,
                )
            import anthropic  # slow: on the worker thread, on first use

            timeout = anthropic.Timeout(self._timeout, connect=self.deadlines.connect_s)
            client = self._local.client = anthropic.AsyncAnthropic(
                api_key=self._api_key,
                base_url=self.base_url,
                max_retries=self._max_retries,
                timeout=timeout,
                # Ollama, llama.cpp, vLLM and LiteLLM read the key from x-api-key.
                default_headers={"x-api-key": self._api_key},
                # The HTTP client the SDK makes by default (same class, base URL, timeout,
                # limits and redirects), over the process's one TLS context.
                http_client=anthropic.DefaultAsyncHttpxClient(
                    base_url=self.base_url, timeout=timeout, verify=_tls_context()
                ),
            )
        return client

    def close(self) -> None:
        self.release_thread()

    def release_thread(self) -> None:
        """Close the calling thread's client and event loop (and their sockets). A worker
        thread calls this before it ends; the next use on a thread makes new ones."""
        loop: asyncio.AbstractEventLoop | None = getattr(self._local, "loop", None)
        client = getattr(self._local, "client", None)
        self._local.client = None
        if loop is not None and not loop.is_closed():
            try:
                if client is not None:
                    loop.run_until_complete(client.close())
            finally:
                loop.close()


_tls: Any = None  # an ssl.SSLContext, made on first use (ssl loads with the SDK)
_tls_made = threading.Lock()


def _tls_context() -> Any:
    """The TLS context every client in this process shares: the one httpx would make for
    each (the system's CA certificates, or SSL_CERT_FILE/SSL_CERT_DIR), made once. Made
    per client it cost 50–120 ms of reading certificates, for every turn (each turn's
    thread has a client of its own) and every command, even against an http:// server."""
    global _tls
    with _tls_made:
        if _tls is None:
            import httpx2

            _tls = httpx2.create_ssl_context()
        return _tls


async def _within(awaitable: Any, limit_s: float | None) -> Any:
    if limit_s is None:
        return await awaitable
    return await asyncio.wait_for(awaitable, limit_s)


def _header(cause: BaseException | None, name: str) -> str | None:
    """A header of the HTTP response an SDK error carries (None: no such header)."""
    headers = getattr(getattr(cause, "response", None), "headers", None)
    value = headers.get(name) if headers is not None else None
    return value.strip().lower() if isinstance(value, str) else None


def _retry_after(cause: BaseException | None) -> float | None:
    """What an HTTP error's `retry-after-ms` / `retry-after` header asks, in seconds."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            return max(0.0, float(_header(cause, name)) / scale)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            continue
    return None


def _duration(seconds: float) -> str:
    if seconds >= 90 * 60:
        return f"{seconds / 3600:.1f} hours"
    if seconds >= 90:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds:.0f} seconds"


def _is_sdk_or_transport_error(exc: BaseException) -> bool:
    module = type(exc).__module__
    return module.startswith(("anthropic", "httpx", "httpcore", "h11", "ssl")) or isinstance(
        exc, OSError
    )


def _usage(raw: Any) -> Usage | None:
    if raw is None:
        return None

    def num(name: str) -> int:
        value = getattr(raw, name, None)
        return value if isinstance(value, int) else 0

    creation = getattr(raw, "cache_creation", None)
    details = getattr(raw, "output_tokens_details", None)
    hour = getattr(creation, "ephemeral_1h_input_tokens", None)
    thinking = getattr(details, "thinking_tokens", None)
    servers = getattr(raw, "server_tool_use", None)

    def used(name: str) -> int:
        value = getattr(servers, name, None)
        return value if isinstance(value, int) else 0

    return Usage(
        input_tokens=num("input_tokens"),
        output_tokens=num("output_tokens"),
        cache_creation_input_tokens=num("cache_creation_input_tokens"),
        cache_read_input_tokens=num("cache_read_input_tokens"),
        cache_write_1h_tokens=hour if isinstance(hour, int) else 0,
        thinking_tokens=thinking if isinstance(thinking, int) else 0,
        web_search_requests=used("web_search_requests"),
        web_fetch_requests=used("web_fetch_requests"),
    )


def _convert(raw: Any) -> StreamEvent | None:
    """One SDK raw event as a core stream event (None: nothing the loop needs)."""
    kind = getattr(raw, "type", "")
    if kind == "message_start":
        model = getattr(raw.message, "model", "")
        return StreamMessageStart(
            _usage(raw.message.usage), model if isinstance(model, str) else ""
        )
    if kind == "content_block_start":
        block = raw.content_block
        block_type = block.type
        if block_type == "tool_use":
            return StreamBlockStart(raw.index, "tool_use", tool_id=block.id, tool_name=block.name)
        if block_type in ("text", "thinking"):
            return StreamBlockStart(raw.index, block_type)
        if block_type == "redacted_thinking":
            return StreamBlockStart(raw.index, block_type, block=RedactedThinkingBlock(block.data))
        return StreamBlockStart(
            raw.index, block_type, block=OpaqueBlock(block_type, block.to_dict())
        )
    if kind == "content_block_delta":
        delta = raw.delta
        if delta.type == "text_delta":
            return StreamTextDelta(raw.index, delta.text)
        if delta.type == "thinking_delta":
            return StreamThinkingDelta(raw.index, delta.thinking)
        if delta.type == "signature_delta":
            return StreamSignatureDelta(raw.index, delta.signature)
        if delta.type == "input_json_delta":
            return StreamInputDelta(raw.index, delta.partial_json)
        if delta.type == "citations_delta":
            return StreamCitationDelta(raw.index, delta.citation.to_dict())
        return None  # future delta types
    if kind == "content_block_stop":
        return StreamBlockStop(raw.index)
    if kind == "message_delta":
        return StreamMessageDelta(raw.delta.stop_reason, _usage(raw.usage))
    if kind == "message_stop":
        return StreamMessageStop()
    return None


def _model_info(raw: Any) -> ModelInfo:
    """A Models API entry (SDK `types/model_info.py`) as ours: its limits, and what its
    `capabilities` say of thinking types and effort levels (None where it says nothing:
    the built-in table stands there, core/model_facts.py)."""
    facts = facts_for(raw.id)
    window = getattr(raw, "max_input_tokens", None)
    output = getattr(raw, "max_tokens", None)
    capabilities = getattr(raw, "capabilities", None)
    return ModelInfo(
        id=raw.id,
        display_name=getattr(raw, "display_name", None) or raw.id,
        context_window=window if isinstance(window, int) and window > 0 else facts.context_window,
        max_output=output if isinstance(output, int) and output > 0 else facts.max_output,
        thinking_types=_thinking_types(capabilities),
        efforts=_efforts(capabilities),
        lifecycle=str(getattr(raw, "lifecycle", None) or "active"),
        source="server",
        web_search=_web_search(capabilities),
    )


def _web_search(capabilities: Any) -> bool | None:
    """`capabilities.server_tools.web_search.supported` (SDK `server_tools_capability.py`);
    None when the list says nothing of server tools."""
    tools = getattr(capabilities, "server_tools", None)
    search = getattr(tools, "web_search", None)
    return None if search is None else _supported(search)


def _supported(capability: Any) -> bool:
    return bool(getattr(capability, "supported", False))


def _thinking_types(capabilities: Any) -> frozenset[str] | None:
    thinking = getattr(capabilities, "thinking", None)
    types = getattr(thinking, "types", None)
    if types is None:
        return None
    names = ("adaptive", "enabled", "disabled", "between_tools")
    return frozenset(n for n in names if _supported(getattr(types, n, None)))


def _efforts(capabilities: Any) -> tuple[str, ...] | None:
    effort = getattr(capabilities, "effort", None)
    if effort is None:
        return None
    if not _supported(effort):
        return ()
    return tuple(level for level in EFFORTS if _supported(getattr(effort, level, None)))
