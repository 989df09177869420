"""The tools layer's errors: a path refused by the workspace, an MCP server that cannot be
used, an MCP tool call that failed.

Light on purpose (the standard library and `core.errors` only): any module can catch
them without loading the MCP SDK or the process runner.
"""

from __future__ import annotations

from desktop_app.core.errors import ContextDeskError, ErrorKind


class OutsideWorkspace(ContextDeskError):
    def __init__(self, path: str, why: str) -> None:
        super().__init__(
            "Path outside the workspace",
            f"{path!r} was refused: {why}.",
            kind=ErrorKind.PATH_REFUSED,
        )


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
