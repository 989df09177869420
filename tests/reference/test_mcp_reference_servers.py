"""On demand, not in CI: ContextDesk against the published MCP reference servers, as
installed from the package registries.

    .venv/bin/python -m pytest tests/reference

`mcp-server-time` and `mcp-server-git` (PyPI) go into their own virtual environment
(under ~/.cache/contextdesk-reference, made once); `@modelcontextprotocol/server-everything`
runs through `npx` when node is present. Each is started, its tools listed and counted,
held open for 30 s — three times the old ping interval, so a server its protocol version
does not let us ping is not failed for it — and then called for real, its result checked
as the API would take it. The protocol version each negotiated is recorded
(`record_property`: add `-o junit_family=legacy --junitxml=FILE` to keep it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import threading
import venv
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from desktop_app.config.mcp_servers import McpConfig, McpServer
from desktop_app.core.blocks import ImageBlock
from desktop_app.core.cancel import CancelToken
from desktop_app.tools.mcp_catalog import resource_blocks
from desktop_app.tools.mcp_hub import McpHub
from desktop_app.tools.mcp_state import ServerStatus
from desktop_app.tools.mcp_tools import mcp_tools, outcome

pytestmark = pytest.mark.timeout(600)
HELD_FOR_S = 30.0  # how long each server is held open, idle, before it is called
KNOWN_PROTOCOLS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")

RecordProperty = Callable[[str, object], None]  # pytest's record_property fixture

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "contextdesk-reference"


@pytest.fixture(scope="module")
def python() -> str:
    """A Python with the PyPI reference servers installed (made once, then reused)."""
    env = CACHE / "venv"
    bin_dir = env / ("Scripts" if sys.platform == "win32" else "bin")
    with _one_at_a_time(CACHE / "venv.lock"):  # pytest's two workers (-n 2) share it
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


@contextlib.contextmanager
def _one_at_a_time(path: Path) -> Iterator[None]:
    """Held by one process at a time (the others wait): a lock on `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+b") as file:
        if sys.platform == "win32":
            import msvcrt

            file.seek(0)
            while True:  # LK_LOCK waits itself (ten tries a second apart), then raises
                try:
                    msvcrt.locking(file.fileno(), msvcrt.LK_LOCK, 1)
                    break
                except OSError:
                    continue
        else:
            import fcntl

            fcntl.flock(file, fcntl.LOCK_EX)  # let go when the file closes
        yield


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


def held_open(hub: McpHub, name: str, record_property: RecordProperty) -> None:
    """Hold the server, idle, for HELD_FOR_S: a deadline on the signal that it left READY
    (a listener), not a sleep. Then it must still be READY."""
    left = threading.Event()

    def heard(changed: str) -> None:
        state = hub.state(changed)
        if changed == name and (state is None or state.status is not ServerStatus.READY):
            left.set()

    hub.listeners.append(heard)
    assert not left.wait(HELD_FOR_S), f"{name} left READY: {hub.state(name)}"
    state = hub.state(name)
    assert state is not None
    assert state.status is ServerStatus.READY, state.error
    assert state.protocol in KNOWN_PROTOCOLS
    record_property(f"{name} protocol", state.protocol)
    record_property(f"{name} tools", len(state.tools))


def test_mcp_server_time(hub: McpHub, python: str, record_property: RecordProperty) -> None:
    started(hub, McpServer("time", command=python, args=("-m", "mcp_server_time")))
    names = {t.name for t in mcp_tools(hub)}
    assert "mcp__time__get_current_time" in names
    held_open(hub, "time", record_property)
    result = outcome(hub.call("time", "get_current_time", {"timezone": "UTC"}, CancelToken()))
    assert not result.is_error
    assert "UTC" in str(result.content)


def test_mcp_server_git(
    hub: McpHub, python: str, tmp_path: Path, record_property: RecordProperty
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "notes.md").write_text("hello\n")
    started(
        hub,
        McpServer("git", command=python, args=("-m", "mcp_server_git", "--repository", str(repo))),
    )
    held_open(hub, "git", record_property)
    result = outcome(hub.call("git", "git_status", {"repo_path": str(repo)}, CancelToken()))
    assert not result.is_error
    assert "notes.md" in str(result.content)


@pytest.mark.skipif(shutil.which("npx") is None, reason="node's npx is not installed")
def test_server_everything(hub: McpHub, record_property: RecordProperty) -> None:
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
    held_open(hub, "everything", record_property)
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
    # What it offers beside tools: resources (one read as a message's blocks) and prompts.
    resources = hub.resources("everything")
    assert resources, "server-everything lists resources"
    first = resources[0]
    blocks = resource_blocks("everything", first.uri, hub.read_resource("everything", first.uri))
    assert blocks
    assert first.uri in str(blocks[0])
    prompts = {p.name for p in hub.prompts("everything")}
    assert prompts, "server-everything lists prompts"
    record_property("everything_resources", len(resources))
    record_property("everything_prompts", ",".join(sorted(prompts)))
