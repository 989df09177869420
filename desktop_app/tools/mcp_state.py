"""An MCP server's state as a value — `ServerStatus`, `ServerState`, `Failure` (why it
cannot be used, in the fixed words the model is told). The errors a call raises
(`McpUnavailable`, `McpCallFailed`) are in `tools/errors.py`.

Separate from `mcp_hub.py`, which holds the connections and changes these states,
because the tools view, the command line and the tool registry (`mcp_tools.py`) read
states without driving servers; values only, nothing of the SDK.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from desktop_app.config.mcp_servers import McpServer
from desktop_app.tools.mcp_names import McpToolInfo


class ServerStatus(StrEnum):
    NOT_STARTED = "not started"
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"
    STOPPED = "stopped"


class Failure(StrEnum):
    """Why a server cannot be used, in the fixed words the model is told: never the
    error's own text or the server's output, either of which may hold a secret (a URL
    with a password, a token); those stay in `ServerState.error`, for the user."""

    NO_START = "it could not start"
    START_TIMEOUT = "it did not start in time"
    STOPPED = "it stopped"
    NOT_ANSWERING = "it stopped answering"


_NOT_READY = {
    ServerStatus.NOT_STARTED: "it has not been started",
    ServerStatus.STARTING: "it is still starting",
    ServerStatus.READY: "it is ready",
    ServerStatus.FAILED: "it failed",
    ServerStatus.STOPPED: "it was stopped",
}


@dataclass(frozen=True, slots=True)
class ServerState:
    server: McpServer
    status: ServerStatus = ServerStatus.NOT_STARTED
    tools: tuple[McpToolInfo, ...] = ()
    error: str = ""  # why it failed or stopped, in full (the tools view, the log)
    failure: Failure | None = None  # why it failed, as the model is told
    protocol: str = ""  # the MCP protocol version negotiated ("2026-07-28", "2025-11-25"…)
    log_path: Path | None = None  # where its stderr goes
    withheld: str = ""  # why its tools are not offered (over its limits), for the user

    @property
    def offered(self) -> bool:
        """Its tools go to the model: it is ready, and they are within its limits."""
        return self.status is ServerStatus.READY and not self.withheld

    @property
    def name(self) -> str:
        return self.server.name

    @property
    def reason(self) -> str:
        """Why its tools cannot be used now, in fixed words: what the model is told."""
        return self.failure.value if self.failure else _NOT_READY[self.status]


FRESH: dict[str, Any] = {
    "error": "",
    "failure": None,
    "tools": (),
    "protocol": "",
    "withheld": "",
}  # a new run
