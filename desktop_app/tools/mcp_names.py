"""An MCP tool's names and definition as a request carries them: sent to the model as
`mcp__SERVER__TOOL` (the API allows only letters, digits, `_` and `-` in a name, up to
128); named `SERVER.TOOL` by people (`--allow-tools`, the tools view, a chat's
`tools_off`). Both the hub (to hold a server to its limits) and the tools use them."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from desktop_app.core.request import ToolSpec


@dataclass(frozen=True, slots=True)
class McpToolInfo:
    """A tool as the server lists it."""

    server: str
    name: str
    description: str
    input_schema: dict[str, Any] = field(hash=False, compare=False)


PREFIX = "mcp__"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def api_name(server: str, tool: str) -> str:
    """The name the model sees: unique, and within the API's pattern and length."""
    name = f"{PREFIX}{server}__{_UNSAFE.sub('_', tool)}"
    if len(name) <= 128 and _UNSAFE.sub("_", tool) == tool:
        return name
    digest = hashlib.sha1(tool.encode()).hexdigest()[:8]  # a name, not security
    return f"{name[:119]}_{digest}"


def display_name(server: str, tool: str) -> str:
    return f"{server}.{tool}"


def people_name(api: str) -> str:
    """`mcp__git__git_log` as people name it: `git.git_log`."""
    server, _, tool = api.removeprefix(PREFIX).partition("__")
    return display_name(server, tool) if tool else api


def tool_spec(info: McpToolInfo) -> ToolSpec:
    """The tool's definition as the request carries it."""
    schema = info.input_schema
    if schema.get("type") != "object":  # the API wants an object at the root
        schema = {"type": "object", "properties": {}}
    description = info.description or f"{info.name} (from the MCP server {info.server})"
    return ToolSpec(api_name(info.server, info.name), description, schema)
