"""Connections to the user's MCP servers, through the official `mcp` SDK.

Each server is started in the background (never on the window's thread, never delaying
its first paint) and held open on one event-loop thread, from where any thread can call
its tools. A server that fails to start within its time, or dies, is a state with a
readable error — shown in the tools view, told to the model as "unavailable" — never a
hang: starts and calls have time limits, and a call is cancelled (the server is told, as
the protocol says) the moment the user presses Stop.

Protocol facts come from the installed SDK (mcp 2.3, read 2026-12-03): it negotiates
2026-07-28 with servers built on it and falls back to the `initialize` handshake with older
ones (mcp/client/_probe.py). 2026-07-28 has no `ping` (mcp/client/client.py `send_ping`),
so a server's death is noticed by its transport (`mcp_transport.py`); a handshake-era
server is pinged as well, to notice one that hangs. A server that says its tools changed
is listed again: on a `subscriptions/listen` stream at 2026-07-28, by a notification
before.

Here: `McpHub`, which starts and stops servers, holds their connections, calls their
tools and keeps their states. The states are values of `mcp_state.py`; the watch over a
running server (its end, pings, tool changes) is `mcp_liveness.py`'s; the limits on what
a server may offer are `mcp_limits.py`'s.

The SDK and its dependencies load only when a server is started.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Coroutine, Iterable
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

from desktop_app.config.logfile import keep_sdk_logs_off_the_terminal
from desktop_app.config.mcp_servers import McpConfig, Secrets, hide_values
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import Cancelled, ContextDeskError
from desktop_app.tools.errors import McpCallFailed, McpUnavailable
from desktop_app.tools.mcp_catalog import McpPrompt, McpResource, list_prompts, list_resources
from desktop_app.tools.mcp_limits import within_limits
from desktop_app.tools.mcp_liveness import (
    WATCH_EVERY_S,
    Run,
    connection_lost,
    last_words,
    listen_for_tool_changes,
    listens_for_tool_changes,
    message_handler,
    reason,
    watch,
)
from desktop_app.tools.mcp_names import McpToolInfo
from desktop_app.tools.mcp_state import FRESH, Failure, ServerState, ServerStatus
from desktop_app.tools.mcp_transport import transport_for

if TYPE_CHECKING:
    from mcp import Client

    from desktop_app.tokens.counter import TokenCounter

log = logging.getLogger(__name__)

STOP_TIMEOUT_S = 5.0


class McpHub:
    """Every configured server's state and connection. Thread-safe; listeners are called
    on the hub's thread with the name of the server whose state changed."""

    def __init__(
        self,
        config: McpConfig,
        log_dir: Path | None = None,
        *,
        watch_every: float = WATCH_EVERY_S,
        counter: TokenCounter | None = None,
    ) -> None:
        self.config = config
        self._counter = counter  # the tool definitions' tokens, against a server's limit
        self.log_dir = log_dir
        self.watch_every = watch_every
        keep_sdk_logs_off_the_terminal()
        self.listeners: list[Callable[[str], None]] = []
        self._lock = threading.Condition()
        self._states: dict[str, ServerState] = {}
        self._clients: dict[str, Client] = {}
        self._stops: dict[str, asyncio.Event] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._logs: dict[str, tuple[TextIO, int]] = {}  # stderr file, where this run began
        self._secrets: dict[str, Secrets] = {}  # each server's values, hidden in its errors
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.config_error = ""  # why mcp.json cannot be read at all
        self.skipped: dict[str, str] = {}  # its entries that cannot be used: name, why
        self.reload()

    # -- what there is ----------------------------------------------------------------------

    def reload(self) -> None:
        """Read the configuration again: new servers appear (not started), removed ones
        stop, changed ones restart when next started."""
        try:
            file = self.config.read()
            servers, self.skipped, self.config_error = file.servers, file.skipped, ""
        except ContextDeskError as exc:
            servers, self.skipped, self.config_error = {}, {}, exc.message
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
                self._set(name, status=ServerStatus.STARTING, **FRESH)
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
        return self._ask(
            server,
            tool,
            lambda client, timeout: client.call_tool(tool, arguments, read_timeout_seconds=timeout),
            cancel,
        )

    # -- what it offers beside tools ---------------------------------------------------------

    def resources(self, server: str) -> tuple[McpResource, ...]:
        """The server's resources (every page), asked now."""
        found: tuple[McpResource, ...] = self._ask(
            server, "resources/list", lambda c, _t: list_resources(c, server), CancelToken()
        )
        return found

    def read_resource(self, server: str, uri: str) -> list[Any]:
        """One resource's contents (the SDK's `TextResourceContents`/`BlobResourceContents`)."""
        result = self._ask(server, uri, lambda c, _t: c.read_resource(uri), CancelToken())
        return list(result.contents)

    def prompts(self, server: str) -> tuple[McpPrompt, ...]:
        """The server's prompts (every page), asked now."""
        found: tuple[McpPrompt, ...] = self._ask(
            server, "prompts/list", lambda c, _t: list_prompts(c, server), CancelToken()
        )
        return found

    def get_prompt(self, server: str, name: str, arguments: dict[str, str]) -> list[Any]:
        """A prompt filled with `arguments`: its messages (the SDK's `PromptMessage`s)."""
        result = self._ask(server, name, lambda c, _t: c.get_prompt(name, arguments), CancelToken())
        return list(result.messages)

    def _ask(
        self,
        server: str,
        what: str,
        make: Callable[[Client, float], Coroutine[Any, Any, Any]],
        cancel: CancelToken,
    ) -> Any:
        """Run `make(client, timeout)` on the hub's loop against a ready server; the
        errors as `call` says."""
        tool = what  # (named in the errors: a tool, a URI, a list)
        state = self.state(server)
        client = self._clients.get(server)
        if state is None or state.status is not ServerStatus.READY or client is None:
            raise McpUnavailable(server, state.reason if state else "it was removed")
        loop = self._ensure_loop()
        timeout = state.server.call_timeout
        future: Future[Any] = asyncio.run_coroutine_threadsafe(make(client, timeout), loop)
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
            if connection_lost(exc):
                errlog, start = self._logs.get(server, (None, 0))
                why = f"it stopped during a call ({reason(exc)})" + last_words(errlog, start)
                self._failed(server, Failure.STOPPED, why)
                raise McpUnavailable(server, Failure.STOPPED.value) from exc
            raise McpCallFailed(server, tool, self._hide(server, reason(exc))) from exc
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
        run = Run(name, stop=asyncio.Event())
        self._stops[name] = run.stop
        timed_out = False

        task = asyncio.current_task()
        assert task is not None

        def too_slow() -> None:
            nonlocal timed_out
            timed_out = True
            task.cancel()

        timer = asyncio.get_running_loop().call_later(server.start_timeout, too_slow)
        try:
            secrets = await asyncio.to_thread(self.config.secrets, server)
            self._secrets[name] = secrets
            run.errlog, log_path = self._open_log(name)
            run.log_start = run.errlog.tell() if run.errlog else 0
            if run.errlog is not None:
                self._logs[name] = (run.errlog, run.log_start)
            with self._lock:
                self._set(name, log_path=log_path)
            from mcp import Client

            async with Client(
                transport_for(server, secrets, run.errlog, run.ended),
                client_info=_client_info(),
                mode="auto",
                message_handler=message_handler(run),
            ) as client:
                tools = await _list_tools(client, name)
                timer.cancel()
                tools, withheld = await asyncio.to_thread(
                    within_limits, server, tools, self._token_counter
                )
                self._clients[name] = client
                with self._lock:
                    self._set(
                        name,
                        status=ServerStatus.READY,
                        tools=tools,
                        withheld=withheld,
                        error="",
                        protocol=client.protocol_version,
                    )
                self._notify([name])
                run.ready = True
                await self._hold(run, client, server.start_timeout)
        except asyncio.CancelledError:
            if timed_out:
                why = f"it did not start within {server.start_timeout:g} s" + run.tail()
                self._failed(name, Failure.START_TIMEOUT, why)
            # else: stopped on purpose
        except ContextDeskError as exc:
            self._failed(name, Failure.NO_START, exc.message)
        except Exception as exc:  # the SDK's and the OS's: all become the server's error
            log.info("MCP server %s failed", name, exc_info=True)
            if run.ready:  # e.g. an HTTP server gone: its listen stream fails the session
                self._failed(name, Failure.STOPPED, f"it stopped ({reason(exc)})" + run.tail())
            else:
                why = f"it could not start ({reason(exc)})" + run.tail()
                self._failed(name, Failure.NO_START, why)
        finally:
            timer.cancel()
            if self._tasks.get(name) is task:  # (a restart may have begun a newer run)
                self._clients.pop(name, None)
                self._stops.pop(name, None)
                self._tasks.pop(name, None)
                self._logs.pop(name, None)
            if run.errlog is not None:
                run.errlog.close()
            with self._lock:
                current = self._states.get(name)
                if current is not None and current.status is ServerStatus.READY:
                    self._set(name, status=ServerStatus.STOPPED)
                self._lock.notify_all()
            self._notify([name])

    async def _hold(self, run: Run, client: Client, list_timeout: float) -> None:
        """Hold the connection until it is stopped or lost, following the server's tool
        list meanwhile."""
        followers = [asyncio.create_task(self._follow_tools(run, client, list_timeout))]
        if listens_for_tool_changes(client):
            followers.append(asyncio.create_task(listen_for_tool_changes(run, client)))
        try:
            await watch(run, client, self.watch_every, self._failed)
        finally:
            for follower in followers:
                follower.cancel()
            await asyncio.gather(*followers, return_exceptions=True)

    async def _follow_tools(self, run: Run, client: Client, timeout: float) -> None:
        """Whenever the server says its tools changed, list them again (past the SDK's
        response cache, which may still hold the old list) and tell the listeners."""
        while True:
            await run.tools_changed.wait()
            run.tools_changed.clear()
            try:
                tools = await asyncio.wait_for(_list_tools(client, run.name, fresh=True), timeout)
            except Exception:  # a lost connection is the watch's to notice
                log.info("MCP server %s: tools not listed again", run.name, exc_info=True)
                continue
            listed = self.state(run.name)
            if listed is None:
                return
            tools, withheld = await asyncio.to_thread(
                within_limits, listed.server, tools, self._token_counter
            )
            with self._lock:
                current = self._states.get(run.name)
                if current is None or current.status is not ServerStatus.READY:
                    return
                self._set(run.name, tools=tools, withheld=withheld)
            self._notify([run.name])

    def _token_counter(self) -> TokenCounter:
        if self._counter is None:
            from desktop_app.tokens.counter import TokenCounter

            self._counter = TokenCounter()
        return self._counter

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

    def _failed(self, name: str, failure: Failure, why: str) -> None:
        """The server cannot be used: `failure` is what the model is told, `why` (with its
        last words) what the user is shown — without the secret values it may quote. The
        first failure of a run is the one kept."""
        why = self._hide(name, why)
        with self._lock:
            current = self._states.get(name)
            if current is not None and current.status is not ServerStatus.FAILED:
                self._set(
                    name,
                    status=ServerStatus.FAILED,
                    error=why,
                    failure=failure,
                    tools=(),
                    withheld="",
                )
            self._lock.notify_all()
        event = self._stops.get(name)
        if event is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(event.set)
        self._notify([name])

    def _hide(self, server: str, text: str) -> str:
        """`text` without the server's secret values, nor the API key (when the
        environment holds it): an error or a server's output may quote any of them."""
        secrets = self._secrets.get(server, Secrets())
        api_key = os.environ.get("ANTHROPIC_API_KEY", "")
        return hide_values(secrets.hide(text), [api_key] if api_key else [])

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


def _client_info() -> Any:
    from mcp import Implementation

    from desktop_app import __version__

    return Implementation(name="ContextDesk", version=__version__)


async def _list_tools(
    client: Client, server: str, *, fresh: bool = False
) -> tuple[McpToolInfo, ...]:
    """Every page of the server's tools; `fresh`: asked of the server, never the SDK's
    response cache (mcp/client/client.py `_cached_fetch`: "refresh" stores without
    serving; continuation pages skip the cache anyway)."""
    tools: list[McpToolInfo] = []
    cursor: str | None = None
    for _ in range(100):  # a server whose pages never end cannot hang the start
        page = await client.list_tools(cursor=cursor, cache_mode="refresh" if fresh else "use")
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
