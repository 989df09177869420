"""How the hub reaches one MCP server: the SDK's transport for it (a process over stdio, or
Streamable HTTP), with the end of its read stream made visible.

That end is how a server's death is noticed: a stdio server's stdout closes when its
process exits, and the SDK then ends the read stream it hands the session
(mcp/client/stdio.py `stdout_reader`); a dropped connection ends it too. The 2026-07-28
protocol has no `ping` to ask with (mcp/client/client.py `send_ping`: "ping is removed as
of 2026-07-28"), so the transport is what says a server is gone.

The SDK loads only when a server is started.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any, TextIO

from desktop_app.config.mcp_servers import McpServer, Secrets


def transport_for(
    server: McpServer, secrets: Secrets, errlog: TextIO | None, ended: asyncio.Event
) -> Any:
    """What `mcp.Client` connects to; `ended` is set when the server's side ends."""
    return _noticing_end(_target(server, secrets, errlog), ended)


def _target(server: McpServer, secrets: Secrets, errlog: TextIO | None) -> Any:
    """A stdio transport whose stderr goes to the log, or Streamable HTTP with the
    server's headers."""
    if server.url:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        http = httpx2.AsyncClient(
            headers=secrets.headers or None, timeout=httpx2.Timeout(30.0, read=300.0)
        )
        return _owning(streamable_http_client(server.url, http_client=http), http)
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=server.command,
        args=list(server.args),
        env=secrets.env or None,
        cwd=server.cwd or None,
    )
    return stdio_client(params, errlog=errlog or sys.stderr)


@contextlib.asynccontextmanager
async def _owning(transport: Any, http: Any) -> AsyncIterator[Any]:
    """The HTTP transport, closing the client we gave it when it ends."""
    async with http, transport as streams:
        yield streams


@contextlib.asynccontextmanager
async def _noticing_end(transport: Any, ended: asyncio.Event) -> AsyncIterator[Any]:
    async with transport as (read, write):
        yield EndNoticingStream(read, ended), write


class EndNoticingStream:
    """A transport's read stream that sets `ended` when it ends (end of stream, or closed
    or broken under the reader). Everything else is passed through: the shape is the
    SDK's `ReadStream` (mcp/shared/_stream_protocols.py)."""

    def __init__(self, stream: Any, ended: asyncio.Event) -> None:
        self._stream = stream
        self._ended = ended

    @property
    def last_context(self) -> Any:
        # The SDK reads this with getattr (mcp/shared/_stream_protocols.py): a stream that
        # carries the sender's context has it, a plain memory stream does not.
        return getattr(self._stream, "last_context", None)

    async def receive(self) -> Any:
        import anyio

        try:
            return await self._stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._ended.set()
            raise

    def __aiter__(self) -> EndNoticingStream:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> EndNoticingStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()
