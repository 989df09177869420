"""Connections to the user's MCP servers, through the official `mcp` SDK.

Each server is started in the background (never on the window's thread, never delaying
its first paint) and held open on one event-loop thread, from where any thread can call
its tools. A server that fails to start within its time, or dies, is a state with a
readable error — shown in the tools view, told to the model as "unavailable" — never a
hang: starts and calls have time limits, and a call is cancelled (the server is told, as
the protocol says) the moment the user presses Stop.

The SDK and its dependencies load only when a server is started.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

from desktop_app.config.mcp_servers import McpConfig, McpServer, Secrets
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import Cancelled, ContextDeskError

if TYPE_CHECKING:
    from mcp import Client

log = logging.getLogger(__name__)

STOP_TIMEOUT_S = 5.0
PING_EVERY_S = 10.0  # how soon a server that died while idle is noticed
PING_TIMEOUT_S = 10.0
LOG_TAIL_LINES = 4
LAST_WORDS = " — its last words: "  # what follows is the server's stderr


class ServerStatus(StrEnum):
    NOT_STARTED = "not started"
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"
    STOPPED = "stopped"


@dataclass(frozen=True, slots=True)
class McpToolInfo:
    """A tool as the server lists it."""

    server: str
    name: str
    description: str
    input_schema: dict[str, Any] = field(hash=False, compare=False)


@dataclass(frozen=True, slots=True)
class ServerState:
    server: McpServer
    status: ServerStatus = ServerStatus.NOT_STARTED
    tools: tuple[McpToolInfo, ...] = ()
    error: str = ""  # why it failed or stopped, in words
    log_path: Path | None = None  # where its stderr goes

    @property
    def name(self) -> str:
        return self.server.name

    @property
    def reason(self) -> str:
        """The error without the server's own output (which may hold secrets: a URL with
        a password, a token): what the model is told."""
        return self.error.split(LAST_WORDS)[0]


class McpHub:
    """Every configured server's state and connection. Thread-safe; listeners are called
    on the hub's thread with the name of the server whose state changed."""

    def __init__(self, config: McpConfig, log_dir: Path | None = None) -> None:
        self.config = config
        self.log_dir = log_dir
        self.listeners: list[Callable[[str], None]] = []
        self._lock = threading.Condition()
        self._states: dict[str, ServerState] = {}
        self._clients: dict[str, Client] = {}
        self._stops: dict[str, asyncio.Event] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._logs: dict[str, tuple[TextIO, int]] = {}  # stderr file, where this run began
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.config_error = ""
        self.reload()

    # -- what there is ----------------------------------------------------------------------

    def reload(self) -> None:
        """Read the configuration again: new servers appear (not started), removed ones
        stop, changed ones restart when next started."""
        try:
            servers = self.config.servers()
            self.config_error = ""
        except ContextDeskError as exc:
            servers, self.config_error = {}, exc.message
        with self._lock:
            gone = [n for n in self._states if n not in servers]
            for name, server in servers.items():
                old = self._states.get(name)
                if old is None or old.server != server:
                    if old is not None:
                        gone.append(name)
                    self._states[name] = ServerState(server)
            for name in gone:
                if name not in servers:
                    self._states.pop(name, None)
        for name in gone:
            self._request_stop(name)

    def states(self) -> list[ServerState]:
        with self._lock:
            return list(self._states.values())

    def state(self, name: str) -> ServerState | None:
        with self._lock:
            return self._states.get(name)

    @property
    def configured(self) -> bool:
        with self._lock:
            return bool(self._states)

    # -- starting and stopping -------------------------------------------------------------

    def start(self, names: Iterable[str] | None = None) -> None:
        """Start servers that are not running (all, or those named) in the background."""
        with self._lock:
            chosen = (
                list(self._states) if names is None else [n for n in names if n in self._states]
            )
            starting = [
                n
                for n in chosen
                if self._states[n].status in (ServerStatus.NOT_STARTED, ServerStatus.STOPPED)
            ]
            for name in starting:
                self._set(name, status=ServerStatus.STARTING, error="", tools=())
        if not starting:
            return
        loop = self._ensure_loop()
        for name in starting:
            loop.call_soon_threadsafe(self._spawn, name)
        self._notify(starting)

    def restart(self, name: str) -> None:
        """Stop the server (if it runs) and start it again."""
        self._request_stop(name, wait=True)
        with self._lock:
            if name in self._states:
                self._set(name, status=ServerStatus.STOPPED)
        self.start([name])

    def wait(self, names: Iterable[str] | None = None, timeout: float = 60.0) -> bool:
        """Block until none of the servers is still starting; False if time ran out."""
        chosen = None if names is None else set(names)
        ends = time.monotonic() + timeout
        with self._lock:
            while any(
                s.status is ServerStatus.STARTING
                for n, s in self._states.items()
                if chosen is None or n in chosen
            ):
                left = ends - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
        return True

    def close(self) -> None:
        """Stop every server (their processes end) and the hub's thread."""
        self.listeners.clear()  # closing: whoever listened is going too
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        for name in list(self._stops):
            self._request_stop(name)
        with contextlib.suppress(RuntimeError):
            asyncio.run_coroutine_threadsafe(self._drain(), loop).result(STOP_TIMEOUT_S + 1)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(STOP_TIMEOUT_S)
        self._loop = self._thread = None

    # -- calls ------------------------------------------------------------------------------

    def call(self, server: str, tool: str, arguments: dict[str, Any], cancel: CancelToken) -> Any:
        """Call a tool; returns the SDK's `CallToolResult`. Raises `Cancelled` when
        `cancel` fires (the server is told), `ContextDeskError` when the server is not
        running, dies, or does not answer within its time."""
        state = self.state(server)
        client = self._clients.get(server)
        if state is None or state.status is not ServerStatus.READY or client is None:
            why = state.reason if state and state.error else (state.status if state else "removed")
            raise McpUnavailable(server, str(why))
        loop = self._ensure_loop()
        timeout = state.server.call_timeout
        future: Future[Any] = asyncio.run_coroutine_threadsafe(
            client.call_tool(tool, arguments, read_timeout_seconds=timeout), loop
        )
        # Cancelling the task makes the SDK send notifications/cancelled.
        unregister = cancel.on_cancel(lambda: _cancel(future))
        try:
            return future.result(timeout + 5)  # the SDK's own limit comes first
        except TimeoutError as exc:
            future.cancel()
            raise McpCallFailed(server, tool, f"it did not answer within {timeout:g} s") from exc
        except asyncio.CancelledError as exc:
            raise Cancelled() from exc
        except Exception as exc:
            if cancel.cancelled:
                raise Cancelled() from exc
            if self._connection_lost(exc):
                errlog, start = self._logs.get(server, (None, 0))
                self._failed(
                    server, f"it stopped during a call ({_reason(exc)})" + _tail(errlog, start)
                )
                raise McpUnavailable(server, self._states[server].reason) from exc
            raise McpCallFailed(server, tool, _reason(exc)) from exc
        finally:
            unregister()

    # -- the event loop's side ------------------------------------------------------------

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()
                    loop.close()

                self._thread = threading.Thread(target=run, name="mcp-servers", daemon=True)
                self._thread.start()
                ready.wait(5)
                self._loop = loop
            return self._loop

    def _spawn(self, name: str) -> None:
        self._tasks[name] = asyncio.get_running_loop().create_task(self._serve(name))

    async def _serve(self, name: str) -> None:
        state = self.state(name)
        if state is None:
            return
        server = state.server
        stop = self._stops[name] = asyncio.Event()
        timed_out = False
        errlog: TextIO | None = None
        log_start = 0

        task = asyncio.current_task()
        assert task is not None

        def too_slow() -> None:
            nonlocal timed_out
            timed_out = True
            task.cancel()

        timer = asyncio.get_running_loop().call_later(server.start_timeout, too_slow)
        try:
            secrets = await asyncio.to_thread(self.config.secrets, server)
            errlog, log_path = self._open_log(name)
            log_start = errlog.tell() if errlog else 0
            if errlog is not None:
                self._logs[name] = (errlog, log_start)
            with self._lock:
                self._set(name, log_path=log_path)
            from mcp import Client

            async with Client(
                _target(server, secrets, errlog), client_info=_client_info(), mode="auto"
            ) as client:
                tools = await _list_tools(client, name)
                timer.cancel()
                self._clients[name] = client
                with self._lock:
                    self._set(name, status=ServerStatus.READY, tools=tools, error="")
                self._notify([name])
                await self._watch(name, client, stop, errlog, log_start)
        except asyncio.CancelledError:
            if timed_out:
                self._failed(
                    name,
                    f"it did not start within {server.start_timeout:g} s"
                    + _tail(errlog, log_start),
                )
            # else: stopped on purpose
        except ContextDeskError as exc:
            self._failed(name, exc.message)
        except Exception as exc:  # the SDK's and the OS's: all become the server's error
            log.info("MCP server %s failed", name, exc_info=True)
            self._failed(name, f"it could not start ({_reason(exc)})" + _tail(errlog, log_start))
        finally:
            timer.cancel()
            if self._tasks.get(name) is task:  # (a restart may have begun a newer run)
                self._clients.pop(name, None)
                self._stops.pop(name, None)
                self._tasks.pop(name, None)
                self._logs.pop(name, None)
            if errlog is not None:
                errlog.close()
            with self._lock:
                current = self._states.get(name)
                if current is not None and current.status is ServerStatus.READY:
                    self._set(name, status=ServerStatus.STOPPED)
                self._lock.notify_all()
            self._notify([name])

    def _request_stop(self, name: str, *, wait: bool = False) -> None:
        loop = self._loop
        if loop is None:
            return

        def stop() -> None:
            event = self._stops.get(name)
            if event is not None:
                event.set()
            task = self._tasks.get(name)
            if task is not None and name not in self._clients:  # still starting
                task.cancel()

        loop.call_soon_threadsafe(stop)
        if wait:
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self._drain([name]), loop).result(
                    STOP_TIMEOUT_S + 1
                )

    async def _drain(self, names: Iterable[str] | None = None) -> None:
        """Wait for the servers' runs to end (their clean-up stops their processes);
        one that will not is cancelled, and given a moment to clean up too."""
        tasks = [t for n, t in self._tasks.items() if names is None or n in set(names)]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=STOP_TIMEOUT_S)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=STOP_TIMEOUT_S)

    async def _watch(
        self,
        name: str,
        client: Client,
        stop: asyncio.Event,
        errlog: TextIO | None,
        log_start: int,
    ) -> None:
        """Hold the connection until stopped; a ping now and then notices a server that
        died while idle (its tools then leave the requests, and the model is told)."""
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), PING_EVERY_S)
                return
            try:
                await asyncio.wait_for(client.send_ping(), PING_TIMEOUT_S)
            except Exception as exc:
                if stop.is_set():
                    return
                why = "it stopped answering" if isinstance(exc, TimeoutError) else "it stopped"
                self._failed(name, f"{why} ({_reason(exc)})" + _tail(errlog, log_start))
                return

    def _failed(self, name: str, why: str) -> None:
        with self._lock:
            if name in self._states:
                self._set(name, status=ServerStatus.FAILED, error=why, tools=())
            self._lock.notify_all()
        event = self._stops.get(name)
        if event is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(event.set)
        self._notify([name])

    def _set(self, name: str, **changes: Any) -> None:
        """Change a server's state (with the lock held)."""
        self._states[name] = replace(self._states[name], **changes)
        self._lock.notify_all()

    def _notify(self, names: Iterable[str]) -> None:
        for name in names:
            for listener in list(self.listeners):
                try:
                    listener(name)
                except Exception:
                    log.exception("an MCP state listener failed")

    def _open_log(self, name: str) -> tuple[TextIO | None, Path | None]:
        """The server's stderr goes to a log file of its own (kept short)."""
        if self.log_dir is None:
            return None, None
        path = self.log_dir / f"mcp-{name}.log"
        try:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            mode = "w" if path.exists() and path.stat().st_size > 1_000_000 else "a"
            handle = cast(TextIO, open(path, mode, encoding="utf-8", errors="replace"))  # noqa: SIM115
            handle.write(f"--- started {time.strftime('%Y-%m-%d %H:%M:%S')}: {name}\n")
            handle.flush()
            return handle, path
        except OSError:
            log.warning("could not open the log of MCP server %s", name, exc_info=True)
            return None, None

    @staticmethod
    def _connection_lost(exc: BaseException) -> bool:
        """The server's end is gone (not: a tool's error that mentions a connection)."""
        import anyio

        if isinstance(exc, (anyio.ClosedResourceError, anyio.BrokenResourceError)):
            return True
        if isinstance(exc, (anyio.EndOfStream, BrokenPipeError, ConnectionResetError)):
            return True
        return type(exc).__name__ == "MCPError" and str(exc).strip() == "Connection closed"


class McpUnavailable(ContextDeskError):
    def __init__(self, server: str, why: str) -> None:
        super().__init__(
            "MCP server unavailable",
            f"The MCP server {server!r} is unavailable: {why}. Its tools cannot be used until "
            "it is restarted (File → Tools and MCP servers… → Restart; its output is in its log).",
        )


class McpCallFailed(ContextDeskError):
    def __init__(self, server: str, tool: str, why: str) -> None:
        super().__init__("MCP tool failed", f"{server}.{tool} failed: {why}.")


def _target(server: McpServer, secrets: Secrets, errlog: TextIO | None) -> Any:
    """What `mcp.Client` connects to: a stdio transport whose stderr goes to the log, or
    Streamable HTTP with the server's headers."""
    if server.url:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        http = httpx2.AsyncClient(
            headers=secrets.headers or None, timeout=httpx2.Timeout(30.0, read=300.0)
        )
        return _owning(streamable_http_client(server.url, http_client=http), http)
    import sys

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
async def _owning(transport: Any, http: Any) -> Any:
    """The HTTP transport, closing the client we gave it when it ends."""
    async with http, transport as streams:
        yield streams


def _client_info() -> Any:
    from mcp import Implementation

    from desktop_app import __version__

    return Implementation(name="ContextDesk", version=__version__)


async def _list_tools(client: Client, server: str) -> tuple[McpToolInfo, ...]:
    tools: list[McpToolInfo] = []
    cursor: str | None = None
    for _ in range(100):  # a server whose pages never end cannot hang the start
        page = await client.list_tools(cursor=cursor)
        tools += [
            McpToolInfo(server, t.name, t.description or "", dict(t.input_schema or {}))
            for t in page.tools
        ]
        cursor = page.next_cursor
        if not cursor:
            break
    return tuple(tools)


def _cancel(future: Future[Any]) -> None:
    future.cancel()


def _reason(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_reason(e) for e in exc.exceptions)
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, FileNotFoundError):
        text = f"the command was not found: {exc.filename or text}"
    return text


def _tail(errlog: TextIO | None, start: int) -> str:
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
