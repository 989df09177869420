"""Whether a server's tools may be offered: no more tools, and no more tokens in their
definitions, than its limits in mcp.json (`maxTools`, `maxToolTokens`).

Separate from `mcp_hub.py` because it is a rule about a list of tools, not about a
connection: it runs off the hub's event loop (the count can take a moment), and it
loads the token counter only when a list is within the count of tools.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from desktop_app.config.mcp_servers import McpServer
from desktop_app.tools.mcp_names import McpToolInfo, tool_spec

if TYPE_CHECKING:
    from desktop_app.tokens.counter import TokenCounter


def within_limits(
    server: McpServer, tools: tuple[McpToolInfo, ...], counter: Callable[[], TokenCounter]
) -> tuple[tuple[McpToolInfo, ...], str]:
    """The server's tools, or none and why: more tools, or more tokens in their
    definitions, than its limits (counted as a request carries them, and only as far
    as the limit: a 2 MB description is not counted whole). `counter` gives the
    counter, made on first need."""
    if len(tools) > server.max_tools:
        return (), (
            f"its {len(tools):,} tools are more than its limit of {server.max_tools:,} "
            "(maxTools in mcp.json)"
        )
    tokens = counter()
    total = 0
    for info in tools:
        total += tokens.tools((tool_spec(info),))
        if total > server.max_tool_tokens:
            return (), (
                f"its tool definitions come to more than its limit of "
                f"{server.max_tool_tokens:,} tokens (maxToolTokens in mcp.json)"
            )
    return tools, ""
