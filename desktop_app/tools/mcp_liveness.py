"""Is an MCP server still there? One run of a server (`Run`, from its start to its
end) and the watch over it: the end of its transport's read stream, pings for a
handshake-era server (to notice one that hangs), and the `subscriptions/listen` stream
that tells of changed tools at 2026-07-28 (over HTTP, also the only sign of a server's
end). Also how an error is told: its reason, and the server's last words on stderr.

Separate from `mcp_hub.py` (which starts servers, holds their connections and their
states) because this is the protocol's side of liveness, read against the SDK's
sources; it tells the hub of a failure through a callback (`Failed`), never changing a
state itself. The SDK loads only when a server is started: here, inside functions.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from desktop_app.tools.mcp_state import Failure

if TYPE_CHECKING:
    from mcp import Client

log = logging.getLogger(__name__)

WATCH_EVERY_S = 10.0  # how often a handshake-era server is pinged (one that hangs is noticed)
PING_TIMEOUT_S = 10.0
LOG_TAIL_LINES = 4
LAST_WORDS = " — its last words: "  # what follows is the server's stderr

# The server named cannot be used: the failure the model is told, why (for the user).
Failed = Callable[[str, Failure, str], None]


@dataclass
class Run:
    """One run of a server (from its start to its end), on the hub's loop."""

    name: str
    stop: asyncio.Event  # set to stop it (or once it failed)
    ended: asyncio.Event = field(default_factory=asyncio.Event)  # its transport's end
    tools_changed: asyncio.Event = field(default_factory=asyncio.Event)  # list them again
    errlog: TextIO | None = None  # its stderr's log file
    log_start: int = 0  # where this run's output begins in it
    ready: bool = False  # it started (a failure after this is a stop, not a failed start)

    def tail(self) -> str:
        return last_words(self.errlog, self.log_start)


async def watch(run: Run, client: Client, every: float, failed: Failed) -> None:
    """Until stopped: the end of the transport's read stream is the server's end (its
    process exited, its connection dropped). A handshake-era server is also pinged
    every `every` s, to notice one that hangs."""
    pings = client.protocol_version not in modern_versions()
    while True:
        await either(run.stop, run.ended, timeout=every if pings else None)
        if run.stop.is_set():
            return
        if run.ended.is_set():
            why = "it stopped (its connection closed)" + run.tail()
            failed(run.name, Failure.STOPPED, why)
            return
        pings = await ping(run, client, failed)


async def ping(run: Run, client: Client, failed: Failed) -> bool:
    """Ping a handshake-era server; False when it should not be pinged again (it has
    no ping, or it failed). Any answer, an error included, says it is alive."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import METHOD_NOT_FOUND

    try:
        # The session's ping, not `Client.send_ping`: that one warns MCPDeprecationWarning
        # for every era (mcp/client/client.py).
        await asyncio.wait_for(client.session.send_ping(), PING_TIMEOUT_S)
        return True
    except MCPError as exc:
        if not connection_lost(exc):
            return exc.code != METHOD_NOT_FOUND  # it answered: alive
        failure, why = Failure.STOPPED, f"it stopped ({reason(exc)})"
    except TimeoutError:
        failure = Failure.NOT_ANSWERING
        why = f"it did not answer a ping within {PING_TIMEOUT_S:g} s"
    except Exception as exc:
        failure, why = Failure.STOPPED, f"it stopped ({reason(exc)})"
    if not run.stop.is_set():
        failed(run.name, failure, why + run.tail())
    return False


def message_handler(run: Run) -> Any:
    """What the session hands us besides answers: a server's notifications, and faults of
    the transport (mcp/client/session.py `IncomingMessage`)."""
    from mcp_types import ToolListChangedNotification

    async def handle(message: Any) -> None:
        if isinstance(message, ToolListChangedNotification):
            run.tools_changed.set()  # before 2026-07-28: the notification itself
        elif isinstance(message, Exception):  # e.g. a line on stdout that is not JSON-RPC
            log.info("MCP server %s: %s", run.name, reason(message))

    return handle


def listens_for_tool_changes(client: Client) -> bool:
    """At 2026-07-28 a server tells of changes only on a `subscriptions/listen` stream
    (mcp/client/subscriptions.py), when it advertises `tools.listChanged`."""
    tools = client.server_capabilities.tools
    listed = bool(tools and tools.list_changed)
    return listed and client.protocol_version in modern_versions()


async def listen_for_tool_changes(run: Run, client: Client) -> None:
    try:
        async with client.listen(tools_list_changed=True) as subscription:
            if not subscription.honored.tools_list_changed:
                return
            async for _event in subscription:
                run.tools_changed.set()
    except Exception as exc:  # the stream dropped, or was refused: the tools stay as listed
        log.info("MCP server %s: no longer told of tool changes", run.name, exc_info=True)
        if server_gone(exc):  # over HTTP this stream is the only sign of the server's end:
            run.ended.set()  # lost, or never opened because the server went first


def server_gone(exc: BaseException) -> bool:
    """A listen stream that failed because the server is gone (its connection refused
    or dropped), not because it declined to listen."""
    if isinstance(exc, BaseExceptionGroup):
        return any(server_gone(e) for e in exc.exceptions)
    if connection_lost(exc) or isinstance(exc, OSError):
        return True
    names = {type(e).__name__ for e in (exc, exc.__cause__, exc.__context__) if e is not None}
    return bool(names & {"SubscriptionLost", "ConnectError", "RemoteProtocolError", "ReadError"})


def modern_versions() -> tuple[str, ...]:
    """The protocol versions without the handshake (and without `ping`), as the SDK
    lists them (mcp_types/version.py)."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return MODERN_PROTOCOL_VERSIONS


async def either(first: asyncio.Event, second: asyncio.Event, timeout: float | None) -> None:
    """Wait until one of the events is set, or `timeout` passes."""
    waits = [asyncio.create_task(first.wait()), asyncio.create_task(second.wait())]
    try:
        await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()


def connection_lost(exc: BaseException) -> bool:
    """The server's end is gone (not: a tool's error that mentions a connection)."""
    import anyio
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED

    if isinstance(exc, (anyio.ClosedResourceError, anyio.BrokenResourceError)):
        return True
    if isinstance(exc, (anyio.EndOfStream, BrokenPipeError, ConnectionResetError)):
        return True
    # The SDK's own code for "the transport ended" (mcp/shared/jsonrpc_dispatcher.py).
    return isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED


def reason(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(reason(e) for e in exc.exceptions)
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, FileNotFoundError):
        text = f"the command was not found: {exc.filename or text}"
    return text


def last_words(errlog: TextIO | None, start: int) -> str:
    """The last lines the server wrote to stderr, for its error."""
    if errlog is None:
        return ""
    try:
        errlog.flush()
        with open(errlog.name, encoding="utf-8", errors="replace") as handle:
            handle.seek(start)
            lines = [line.rstrip() for line in handle.read().splitlines() if line.strip()]
    except OSError:
        return ""
    lines = [line for line in lines if not line.startswith("--- started")][-LOG_TAIL_LINES:]
    return (LAST_WORDS + " | ".join(lines)) if lines else ""
