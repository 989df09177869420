"""Reading the command line's values: KEY=VALUE pairs, tool names."""

from __future__ import annotations

from desktop_app.core.errors import ContextDeskError, ErrorKind


def key_values(pairs: list[str]) -> dict[str, str]:
    assignments = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ContextDeskError(
                "Not KEY=VALUE", f"{pair!r}: give a value, as in {pair}=…", kind=ErrorKind.USAGE
            )
        assignments[key.strip()] = value
    return assignments


def allowed_tools(names: str) -> set[str]:
    """--allow-tools: built-in tools by name, MCP tools as SERVER.TOOL (or as the model
    sees them)."""
    from desktop_app.chats.tool_servers import api_name

    return {api_name(n.strip()) for n in names.split(",") if n.strip()}
