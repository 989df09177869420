"""MCP tools as the registry's tools, and their results as the API's tool_result content.

A tool is sent to the model as `mcp__SERVER__TOOL` (the API allows only letters, digits,
`_` and `-` in a name, up to 128); people name it `SERVER.TOOL` (`--allow-tools`, the
tools view, a chat's `tools_off`). Every MCP tool asks before it runs, showing the server,
the tool and the arguments, as the built-in tools that act on the world do.

Results become tool_result content in `mcp_results.py` (`outcome`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any

from desktop_app.core.ports import ApprovalPolicy, ToolOutcome
from desktop_app.core.request import ToolSpec
from desktop_app.tools.mcp_hub import McpHub
from desktop_app.tools.mcp_names import PREFIX, McpToolInfo, api_name, display_name
from desktop_app.tools.mcp_results import outcome as outcome  # (its old home, re-exported)
from desktop_app.tools.mcp_state import ServerState, ServerStatus
from desktop_app.tools.registry import Tool, ToolContext, ToolRegistry

if TYPE_CHECKING:
    from desktop_app.context.planner import ContextPlanner

WITHHELD = "its tools are not offered (they are over its limit of tool definitions)"


def is_off(server: str, tool: str, off: Collection[str]) -> bool:
    """A chat's `tools_off` names whole servers ("git") or single tools ("git.git_log")."""
    return server in off or display_name(server, tool) in off


def mcp_tools(hub: McpHub, off: Collection[str] = ()) -> list[Tool]:
    """The tools of the ready servers, less those a chat turned off."""
    tools: list[Tool] = []
    taken: set[str] = set()
    for state in hub.states():
        if not state.offered or state.name in off:
            continue
        for info in state.tools:
            name = api_name(info.server, info.name)
            if is_off(info.server, info.name, off) or name in taken:
                continue
            taken.add(name)
            tools.append(_tool(hub, state, info, name))
    return tools


def unavailable_note(hub: McpHub, off: Collection[str] = ()) -> str:
    """What the model is told about servers whose tools it does not have now (and could
    see in the history): one line each, or ""."""
    lines = []
    for state in hub.states():
        if state.name in off or state.offered:
            continue
        if state.status is ServerStatus.READY and state.withheld:  # the user sees the numbers
            lines.append(f"- {state.name}: {WITHHELD}")
        elif state.status is ServerStatus.FAILED:
            lines.append(f"- {state.name}: unavailable ({state.reason})")
        elif state.status is ServerStatus.STARTING:
            lines.append(f"- {state.name}: still starting; its tools are not in this request")
    if not lines:
        return ""
    return "MCP tool servers not available right now:\n" + "\n".join(lines)


class McpOffer:
    """The MCP tools one chat offers, and what the model is told of servers that are not
    ready — read from the hub again before each request of a turn, so a server that died
    mid-turn leaves the very next request (with a line saying so), and one whose tools
    changed, or that came back, is offered as it is now."""

    def __init__(self, hub: McpHub, off: Collection[str] = ()) -> None:
        self.hub = hub
        self.off = frozenset(off)
        self.tools, self.note = self._now()  # as the chat's planner is built

    def _now(self) -> tuple[list[Tool], str]:
        return mcp_tools(self.hub, self.off), unavailable_note(self.hub, self.off)

    def refresher(
        self, registry: ToolRegistry, system_prompt: str, extras: Sequence[ToolSpec] = ()
    ) -> Callable[[ContextPlanner], None]:
        """The planner's `refresh`: brings its tools and system line (and the registry
        that runs the calls) up to the servers' state now. A tool that left stays in the
        registry, so a late call to it says why it cannot run; it is no longer offered."""

        def refresh(planner: ContextPlanner) -> None:
            tools, note = self._now()
            if [t.spec for t in tools] == [t.spec for t in self.tools] and note == self.note:
                return  # nothing changed: the request (and its cache) stays as it was
            self.tools, self.note = tools, note
            registry.update(tools)
            offered = {t.name for t in tools}
            own = [
                t.spec for t in registry.tools if not t.name.startswith(PREFIX) or t.name in offered
            ]
            taken = {spec.name for spec in own}
            planner.tools = [*own, *(spec for spec in extras if spec.name not in taken)]
            planner.system = "\n\n".join(part for part in (system_prompt, note) if part)

        return refresh


def _tool(hub: McpHub, state: ServerState, info: McpToolInfo, name: str) -> Tool:
    def run(arguments: dict[str, Any], context: ToolContext) -> ToolOutcome:
        return outcome(hub.call(info.server, info.name, arguments, context.cancel))

    def describe(arguments: dict[str, Any], _context: ToolContext) -> str:
        shown = json.dumps(arguments, ensure_ascii=False)
        return (
            f"run the tool {info.name!r} of the MCP server {info.server!r} "
            f"({state.server.where}) with {shown}"
        )

    schema = (
        info.input_schema
        if info.input_schema.get("type") == "object"
        else {
            "type": "object",
            "properties": {},
        }
    )
    return Tool(
        name=name,
        description=info.description or f"{info.name} (from the MCP server {info.server})",
        input_schema=schema,
        handler=run,
        policy=ApprovalPolicy.ASK,
        timeout=state.server.call_timeout + 10,  # the hub's own limit ends it first
        describe=describe,
        lane=f"mcp:{info.server}",  # calls to different servers run at once
    )
