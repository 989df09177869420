"""On demand, not in CI: ContextDesk against the published MCP reference servers, as
installed from the package registries.

    .venv/bin/python -m pytest tests/reference

`mcp-server-time` and `mcp-server-git` (PyPI) go into their own virtual environment
(under ~/.cache/contextdesk-reference, made once); `@modelcontextprotocol/server-everything`
runs through `npx` when node is present. Each is started, its tools listed and counted,
one real call made and its result checked as the API would take it, and a chat with the
server's tools planned.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_app.config.mcp_servers import McpConfig, McpServer
from desktop_app.core.blocks import ImageBlock
from desktop_app.core.cancel import CancelToken
from desktop_app.tools.mcp_hub import McpHub, ServerStatus
from desktop_app.tools.mcp_tools import mcp_tools, outcome

pytestmark = pytest.mark.timeout(600)

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "contextdesk-reference"


@pytest.fixture(scope="module")
def python() -> str:
    """A Python with the PyPI reference servers installed (made once, then reused)."""
    env = CACHE / "venv"
    bin_dir = env / ("Scripts" if sys.platform == "win32" else "bin")
    if not (bin_dir / "mcp-server-time").exists():
        venv.create(env, with_pip=True)
        subprocess.run(
            [
                str(bin_dir / "python"),
                "-m",
                "pip",
                "install",
                "-q",
                "mcp-server-time",
                "mcp-server-git",
            ],
            check=True,
        )
    return str(bin_dir / "python")


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[McpHub]:
    config = McpConfig(tmp_path / "config")
    made = McpHub(config, tmp_path / "logs")
    yield made
    made.close()


def started(hub: McpHub, *servers: McpServer) -> McpHub:
    for server in servers:
        hub.config.add(server)
    hub.reload()
    hub.start()
    assert hub.wait(timeout=300)
    for state in hub.states():
        assert state.status is ServerStatus.READY, f"{state.name}: {state.error}"
    return hub


def test_mcp_server_time(hub: McpHub, python: str) -> None:
    started(hub, McpServer("time", command=python, args=("-m", "mcp_server_time")))
    names = {t.name for t in mcp_tools(hub)}
    assert "mcp__time__get_current_time" in names
    result = outcome(hub.call("time", "get_current_time", {"timezone": "UTC"}, CancelToken()))
    assert not result.is_error
    assert "UTC" in str(result.content)


def test_mcp_server_git(hub: McpHub, python: str, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "notes.md").write_text("hello\n")
    started(
        hub,
        McpServer("git", command=python, args=("-m", "mcp_server_git", "--repository", str(repo))),
    )
    result = outcome(hub.call("git", "git_status", {"repo_path": str(repo)}, CancelToken()))
    assert not result.is_error
    assert "notes.md" in str(result.content)


@pytest.mark.skipif(shutil.which("npx") is None, reason="node's npx is not installed")
def test_server_everything(hub: McpHub) -> None:
    npx = shutil.which("npx")
    assert npx is not None
    started(
        hub,
        McpServer(
            "everything",
            command=npx,
            args=("-y", "@modelcontextprotocol/server-everything"),
            start_timeout=240,
        ),
    )
    tools = {t.name for t in mcp_tools(hub)}
    assert "mcp__everything__echo" in tools
    echoed = outcome(hub.call("everything", "echo", {"message": "hi"}, CancelToken()))
    assert "hi" in str(echoed.content)
    image = outcome(hub.call("everything", "get-tiny-image", {}, CancelToken()))
    assert not image.is_error
    assert any(isinstance(p, ImageBlock) for p in image.content)
    structured = outcome(
        hub.call("everything", "get-structured-content", {"location": "New York"}, CancelToken())
    )
    assert not structured.is_error
    links = outcome(hub.call("everything", "get-resource-links", {"count": 2}, CancelToken()))
    assert "Resource link" in str(links.content)
