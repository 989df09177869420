"""The MCP tool servers, as the faces (the window, the command line) use them: configure,
start, look at — each server's state, its tools and what their definitions cost — and
turn servers or single tools off for one chat; list a server's resources and prompts,
read one as a message's blocks. One home for each of these actions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from desktop_app.config.mcp_servers import ImportReport, McpServer, Secrets
from desktop_app.core.errors import ContextDeskError, ErrorKind

if TYPE_CHECKING:
    from desktop_app.chats.chat import Chat
    from desktop_app.config.mcp_servers import McpConfig
    from desktop_app.core.blocks import Block
    from desktop_app.tokens.counter import TokenCounter
    from desktop_app.tools.mcp_catalog import McpPrompt, McpResource
    from desktop_app.tools.mcp_hub import McpHub


class ToolServersHost(Protocol):
    """`Engine`, as its tool servers see it (a protocol: no cycle back to the engine)."""

    @property
    def counter(self) -> TokenCounter: ...

    @property
    def mcp(self) -> McpHub | None: ...

    def mcp_config(self) -> McpConfig: ...

    def mcp_changed(self) -> None: ...


@dataclass(frozen=True, slots=True)
class ToolRow:
    name: str  # as people name it: server.tool
    api_name: str  # as the model sees it
    description: str
    tokens: int  # its definition, as sent (the local estimate, not calibrated)
    on: bool  # offered in the chat asked about


@dataclass(frozen=True, slots=True)
class ServerView:
    name: str
    transport: str  # stdio or http
    where: str  # the command line, or the URL
    status: str  # not started, starting, ready, failed, stopped
    error: str
    protocol: str  # the MCP protocol version negotiated ("" until it is ready)
    log_path: Path | None
    secrets: tuple[str, ...]  # names of the values kept in the keyring
    in_file: tuple[str, ...]  # names of env values kept in mcp.json (the user chose it)
    tools: tuple[ToolRow, ...]
    on: bool  # the whole server is offered in the chat asked about
    withheld: str = ""  # why its tools are not offered: over its limits (mcp.json)

    @property
    def tokens(self) -> int:
        """What this server's tools add to every request of the chat (those turned on)."""
        return sum(t.tokens for t in self.tools if t.on) if self.on else 0


class ToolServers:
    def __init__(self, engine: ToolServersHost) -> None:
        self.engine = engine

    # -- configuration --------------------------------------------------------------------

    def configured(self) -> list[McpServer]:
        return list(self.engine.mcp_config().servers().values())

    def add(  # (any thread: the keyring may take seconds)
        self,
        name: str,
        *,
        command: Sequence[str] = (),
        url: str = "",
        env: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        call_timeout: float = 0,
    ) -> McpServer:
        """Add a server (its env and header values go to the keyring) and start it."""
        server = McpServer(
            name=name,
            command=command[0] if command else "",
            args=tuple(command[1:]),
            url=url,
        )
        if call_timeout > 0:
            server = replace(server, call_timeout=call_timeout)
        self.engine.mcp_config().add(server, Secrets(dict(env or {}), dict(headers or {})))
        self._reload()
        return server

    def remove(self, name: str) -> McpServer:
        server = self.engine.mcp_config().remove(name)
        self._reload()
        return server

    def import_claude_desktop(
        self, path: Path | None = None, *, env_in_file: bool = False
    ) -> ImportReport:
        """Claude desktop's servers. Without a keyring, servers with environment values
        raise `SecretsNeedKeyring` (nothing is added) unless `env_in_file`: the values are
        then kept in mcp.json, readable only by the user."""
        report = self.engine.mcp_config().import_claude_desktop(path, env_in_file=env_in_file)
        if report.added:
            self._reload()
        return report

    def config_path(self) -> Path:
        return self.engine.mcp_config().path

    def _reload(self) -> None:
        """The configuration changed: the servers follow it (any thread; chats plan again
        when the face calls `Engine.mcp_changed` on the database thread)."""
        hub = self.engine.mcp
        if hub is not None:
            hub.reload()

    def skipped(self) -> dict[str, str]:
        """The entries of mcp.json that cannot be used, each with why (the others load)."""
        hub = self.engine.mcp
        if hub is not None:
            return dict(hub.skipped)
        try:
            return self.engine.mcp_config().skipped()
        except ContextDeskError:
            return {}  # the file cannot be read at all: `config_problem` says why

    def config_problem(self) -> str:
        """Why the configuration file cannot be read ("" when it can)."""
        hub = self.engine.mcp
        return hub.config_error if hub is not None else ""

    # -- running ----------------------------------------------------------------------------

    def start(self, names: Sequence[str] | None = None, *, wait: bool = False) -> None:
        """Start servers in the background (`wait`: until each is ready or has failed)."""
        hub = self.engine.mcp
        if hub is None:
            return
        hub.start(names)
        if wait:
            chosen = [s for s in hub.states() if names is None or s.name in names]
            hub.wait(names, timeout=max((s.server.start_timeout for s in chosen), default=0) + 5)
            self.engine.mcp_changed()

    def restart(self, name: str) -> None:
        hub = self.engine.mcp
        if hub is not None:
            hub.restart(name)

    # -- resources and prompts (tools/mcp_catalog.py) ------------------------------------------

    def resources(self, name: str) -> tuple[McpResource, ...]:
        """The server's resources, asked now (it is started first, if need be)."""
        return self._ready(name).resources(name)

    def prompts(self, name: str) -> tuple[McpPrompt, ...]:
        return self._ready(name).prompts(name)

    def resource_blocks(self, name: str, uri: str) -> list[Block]:
        """A resource as the blocks a message carries: its text under its URI, or an image."""
        from desktop_app.tools.mcp_catalog import resource_blocks

        return resource_blocks(name, uri, self._ready(name).read_resource(name, uri))

    def prompt_text(self, name: str, prompt: str, arguments: dict[str, str]) -> str:
        """A server's prompt, filled with `arguments`, as the text of a draft."""
        from desktop_app.tools.mcp_catalog import prompt_text

        return prompt_text(self._ready(name).get_prompt(name, prompt, arguments))

    def _ready(self, name: str) -> McpHub:
        hub = self.engine.mcp
        if hub is None or hub.state(name) is None:
            raise ContextDeskError(
                "No such MCP server",
                f"{name!r} is not one of the servers in mcp.json.",
                kind=ErrorKind.NOT_FOUND,
            )
        self.start([name], wait=True)
        return hub

    def views(self, chat: Chat | None = None) -> list[ServerView]:
        """Every server with its state and tools; on/off as `chat` has them."""
        hub = self.engine.mcp
        if hub is None:
            return []
        from desktop_app.tools.mcp_names import display_name, tool_spec
        from desktop_app.tools.mcp_tools import is_off

        off = frozenset(chat.settings.tools_off) if chat is not None else frozenset()
        counter = self.engine.counter
        views = []
        for state in hub.states():
            rows = []
            for info in state.tools:
                spec = tool_spec(info)
                rows.append(
                    ToolRow(
                        display_name(info.server, info.name),
                        spec.name,
                        info.description,
                        counter.tools((spec,)),
                        not is_off(info.server, info.name, off),
                    )
                )
            server = state.server
            views.append(
                ServerView(
                    state.name,
                    server.transport,
                    server.where,
                    state.status.value,
                    state.error,
                    state.protocol,
                    state.log_path,
                    (*server.env, *server.headers),
                    tuple(name for name, _ in server.file_env),
                    tuple(rows),
                    state.name not in off,
                    state.withheld if state.status.value == "ready" else "",
                )
            )
        return views

    def set_on(self, chat: Chat, name: str, on: bool) -> None:
        """Offer (or stop offering) a server ("git") or one tool ("git.git_log") in this
        chat: only its next requests change."""
        off = set(chat.settings.tools_off)
        if on:
            off.discard(name)
        else:
            off.add(name)
        chat.setup.set_settings(replace(chat.settings, tools_off=tuple(sorted(off))))


def api_name(name: str) -> str:
    """`server.tool` (as people name an MCP tool) as the model sees it; other names as
    they are."""
    if "." not in name:
        return name
    from desktop_app.tools.mcp_names import api_name as mcp_name

    server, _, tool = name.partition(".")
    return mcp_name(server, tool)


def people_name(api: str) -> str:
    """An MCP tool's API name as people name it (`git.git_log`); other names as they are."""
    from desktop_app.tools.mcp_names import PREFIX
    from desktop_app.tools.mcp_names import people_name as named

    return named(api) if api.startswith(PREFIX) else api
