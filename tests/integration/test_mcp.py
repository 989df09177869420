"""MCP tool servers against real servers written with the `mcp` SDK (tests/fakes/
mcp_server.py), over stdio and Streamable HTTP: starting, failing, dying, hanging,
cancelling, images, 100 tools, and a chat that calls them through the simulator."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import keyring
import pytest

from desktop_app.api.simulator import Reply, SimulatorServer
from desktop_app.app import main
from desktop_app.config.mcp_servers import McpConfig, McpServer, Secrets
from desktop_app.core.blocks import ImageBlock, TextBlock
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import Cancelled, ContextDeskError
from desktop_app.core.images import image_size
from desktop_app.core.request import ToolSpec
from desktop_app.tokens.counter import TokenCounter
from desktop_app.tokens.images import API_MAX_EDGE
from desktop_app.tools.mcp_hub import McpHub
from desktop_app.tools.mcp_names import api_name
from desktop_app.tools.mcp_state import ServerStatus
from desktop_app.tools.mcp_tools import mcp_tools, outcome, unavailable_note
from tests.fakes.keyring_backend import LockedKeyring
from tests.integration.conftest import TEST_KEY

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(120)
WATCH_EVERY_S = 0.05  # the hub's watch interval in these tests: many pass in a second
MODERN = "2026-07-28"  # what the installed SDK negotiates with a server built on it
LEGACY = "2025-11-25"  # the newest handshake-era version (tests/fakes/mcp_server.py --legacy)


def fake(name: str = "t", *extra: str, **options: Any) -> McpServer:
    return McpServer(
        name,
        command=sys.executable,
        args=("-m", "tests.fakes.mcp_server", *extra),
        cwd=str(ROOT),
        **options,
    )


@pytest.fixture
def config(tmp_path: Path) -> McpConfig:
    return McpConfig(tmp_path / "config")


@pytest.fixture
def hub_of(config: McpConfig, tmp_path: Path) -> Iterator[Any]:
    hubs: list[McpHub] = []

    def make(
        *servers: McpServer, secrets: Secrets | None = None, watch_every: float = WATCH_EVERY_S
    ) -> McpHub:
        for server in servers:
            config.add(server, secrets or Secrets())
        hub = McpHub(config, tmp_path / "logs", watch_every=watch_every)
        hubs.append(hub)
        hub.start()
        assert hub.wait(timeout=60)
        return hub

    yield make
    for hub in hubs:
        hub.close()


def test_a_stdio_server_s_tools_and_results_become_the_api_s(hub_of: Any) -> None:
    hub = hub_of(fake("t"), secrets=Secrets({"TEST_SECRET": "s3cret"}))
    state = hub.state("t")
    assert state.status is ServerStatus.READY, state.error
    assert {"echo", "add", "picture", "notes", "fail", "crash", "hang"} <= {
        t.name for t in state.tools
    }
    call = lambda tool, **a: outcome(hub.call("t", tool, a, CancelToken()))  # noqa: E731
    assert call("echo", text="héllo").content == "héllo"
    assert json.loads(str(call("add", a=2, b=3).content)) == {"sum": 5}
    picture = call("picture").content
    assert isinstance(picture, tuple)
    assert isinstance(picture[0], ImageBlock)
    assert picture[0].media_type == "image/png"
    assert call("notes").content == "Resource memo://notes/1:\nBuy milk."
    failed = call("fail", why="no such order")
    assert failed.is_error
    assert failed.content  # never empty: the API refuses an empty error
    # The env value came from the keyring, not the settings file.
    assert call("secret").content == "s3cret"
    assert "s3cret" not in (hub.config.path).read_text()


def test_stop_cancels_a_hanging_call_fast_and_the_server_is_told(
    hub_of: Any, tmp_path: Path
) -> None:
    marker = tmp_path / "cancelled"
    hub = hub_of(fake("t", "--cancelled-marker", str(marker)))
    cancel = CancelToken()
    threading.Timer(0.3, cancel.cancel).start()
    started = time.monotonic()
    with pytest.raises(Cancelled):
        hub.call("t", "hang", {}, cancel)
    assert time.monotonic() - started - 0.3 < 0.2  # within 200 ms of Stop
    # The server answers this once its `hang` was cancelled (its call times out if never).
    told = outcome(hub.call("t", "was_hang_cancelled", {}, CancelToken()))
    assert told.content == "cancelled", "the server never heard of the cancellation"
    assert marker.read_text() == "cancelled"
    assert outcome(hub.call("t", "echo", {"text": "still here"}, CancelToken())).content == (
        "still here"
    )


def test_a_server_that_dies_mid_call_is_a_readable_error_and_the_others_go_on(
    hub_of: Any,
) -> None:
    hub = hub_of(fake("doomed"), fake("steady"))
    with pytest.raises(ContextDeskError) as raised:
        hub.call("doomed", "crash", {}, CancelToken())
    assert "'doomed' is unavailable" in raised.value.message
    # Its last words (stderr) are for the user, never sent: they may hold a secret.
    assert "about to crash" not in raised.value.message
    assert "about to crash" in hub.state("doomed").error
    assert hub.state("doomed").status is ServerStatus.FAILED
    assert [t.name for t in mcp_tools(hub) if t.name.startswith("mcp__doomed__")] == []
    assert outcome(hub.call("steady", "echo", {"text": "ok"}, CancelToken())).content == "ok"
    hub.restart("doomed")
    assert hub.wait(timeout=60)
    assert hub.state("doomed").status is ServerStatus.READY


@pytest.mark.parametrize(
    ("server", "said"),
    [
        (fake("t", "--slow-start", "30", start_timeout=1.5), "did not start within 1.5 s"),
        (fake("t", "--die-on-start"), "fatal: no configuration found"),
        (McpServer("t", command="/nonexistent/mcp-server"), "not found"),
    ],
    ids=["hangs on start", "dies on start", "no such command"],
)
def test_a_server_that_cannot_start_says_why_without_holding_anything_up(
    hub_of: Any, server: McpServer, said: str
) -> None:
    started = time.monotonic()
    hub = hub_of(server)
    assert time.monotonic() - started < 20
    state = hub.state("t")
    assert state.status is ServerStatus.FAILED
    assert said in state.error
    assert mcp_tools(hub) == []
    with pytest.raises(ContextDeskError, match="unavailable"):
        hub.call("t", "echo", {"text": "x"}, CancelToken())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class HttpServer:
    url: str
    process: subprocess.Popen[str]


@pytest.fixture
def http_server() -> Iterator[HttpServer]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.mcp_server", "--http", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    for line in process.stderr:  # uvicorn says when it listens
        if "Uvicorn running on" in line:
            break
    drain = threading.Thread(target=process.stderr.read, daemon=True)  # (a full pipe blocks it)
    drain.start()
    try:
        yield HttpServer(f"http://127.0.0.1:{port}/mcp", process)
    finally:
        process.terminate()
        process.wait(10)
        drain.join(10)
        process.stderr.close()


def test_a_streamable_http_server_with_a_header_kept_in_the_keyring(
    http_server: HttpServer, hub_of: Any
) -> None:
    # (http_server first: the hub, with its open subscriptions/listen stream, closes
    # before the server is stopped, whose graceful shutdown would wait for that stream)
    hub = hub_of(
        McpServer("web", url=http_server.url), secrets=Secrets(headers={"X-Token": "tok-123"})
    )
    assert hub.state("web").status is ServerStatus.READY, hub.state("web").error
    assert hub.state("web").protocol == MODERN
    assert outcome(hub.call("web", "echo", {"text": "over http"}, CancelToken())).content == (
        "over http"
    )
    assert "tok-123" not in hub.config.path.read_text()
    assert keyring.get_password("ContextDesk MCP", "web/header/X-Token") == "tok-123"


def test_a_streamable_http_server_that_goes_away_is_noticed(
    http_server: HttpServer, hub_of: Any
) -> None:
    hub = hub_of(McpServer("web", url=http_server.url))
    assert hub.state("web").status is ServerStatus.READY, hub.state("web").error
    left = _told_when_not_ready(hub)
    http_server.process.kill()
    assert left.wait(20), "the server's end went unnoticed"
    assert hub.state("web").status is ServerStatus.FAILED
    assert hub.state("web").reason == "it stopped"
    with pytest.raises(ContextDeskError, match="'web' is unavailable: it stopped"):
        hub.call("web", "echo", {"text": "x"}, CancelToken())


def test_a_locked_keyring_adds_nothing(config: McpConfig) -> None:
    previous = keyring.get_keyring()
    keyring.set_keyring(LockedKeyring())
    try:
        with pytest.raises(ContextDeskError, match="keyring is locked"):
            config.add(fake("t"), Secrets({"TOKEN": "x"}))
    finally:
        keyring.set_keyring(previous)
    assert config.servers() == {}


def test_claude_desktop_s_configuration_is_imported_with_its_secrets_moved(
    config: McpConfig, tmp_path: Path
) -> None:
    desktop = tmp_path / "claude_desktop_config.json"
    desktop.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "git hub": {
                        "command": "npx",
                        "args": ["-y", "@modelcontextprotocol/server-github"],
                        "env": {"GITHUB_TOKEN": "ghp_secret"},
                    },
                    "remote": {"type": "http", "url": "https://example.test/mcp"},
                    "old": {"type": "sse", "url": "https://example.test/sse"},
                }
            }
        )
    )
    report = config.import_claude_desktop(desktop)
    assert report.added == ("git-hub", "remote")
    assert len(report.skipped) == 1
    assert "SSE" in report.skipped[0]
    assert "ghp_secret" not in config.path.read_text()
    assert config.secrets(config.server("git-hub")).env == {"GITHUB_TOKEN": "ghp_secret"}
    again = config.import_claude_desktop(desktop)
    assert again.added == ()
    assert any("already configured" in s for s in again.skipped)


def test_a_hundred_tools_each_with_its_tokens_and_each_can_be_turned_off(
    hub_of: Any, tmp_path: Path
) -> None:
    hub = hub_of(fake("many", "--many", "100"))
    tools = mcp_tools(hub)
    assert len(tools) >= 100
    off = {"many.tool_007", "many.echo"}
    kept = {t.name for t in mcp_tools(hub, off)}
    assert api_name("many", "tool_007") not in kept
    assert api_name("many", "echo") not in kept
    assert len(kept) == len(tools) - 2
    assert mcp_tools(hub, {"many"}) == []  # the whole server


# -- through a chat: the request, the approval, the result -----------------------------------


@pytest.fixture
def home(tmp_path: Path, sim: SimulatorServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", sim.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    return tmp_path / "home"


def cli(home: Path, capsys: pytest.CaptureFixture[str], *args: str, status: int = 0) -> str:
    code = main(["--home", str(home), *args])
    out, err = capsys.readouterr()
    assert code == status, f"exit {code}: {out} {err}"
    return out + err


def test_a_chat_offers_calls_and_turns_off_mcp_tools(
    home: Path, sim: SimulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server = ["--", sys.executable, "-m", "tests.fakes.mcp_server"]
    cli(home, capsys, "mcp", "add", "t", "--env", "TEST_SECRET=abc", *server)
    assert "t " in cli(home, capsys, "mcp", "list")
    tested = json.loads(cli(home, capsys, "mcp", "test", "t", "--json"))
    assert tested["status"] == "ready"
    assert tested["tokens"] > 0
    echo_tokens = next(t["tokens"] for t in tested["tools"] if t["name"] == "t.echo")

    chat = cli(home, capsys, "chat", "new", "--model", "claude-haiku-4-5").strip()
    echo = api_name("t", "echo")
    sim.queue(Reply.tools(("toolu_m1", echo, {"text": "from MCP"}), text="Let me ask it."))
    out = cli(home, capsys, "send", chat, "Use the echo tool.", "--allow-tools", "t.echo")
    first, second = sim.message_requests()[-2:]
    offered = {t["name"]: t for t in first.body["tools"]}
    assert echo in offered
    # The tools view's count is the definition as sent (its own estimate).
    sent = offered[echo]
    assert (
        TokenCounter().tools((ToolSpec(sent["name"], sent["description"], sent["input_schema"]),))
        == echo_tokens
    )
    result = second.body["messages"][-1]["content"][0]
    assert result["type"] == "tool_result"
    assert result["tool_use_id"] == "toolu_m1"
    assert result["content"] in ("from MCP", [{"type": "text", "text": "from MCP"}])
    assert "Let me ask it." in out

    # Not allowed: refused, named as people name it.
    sim.queue(Reply.tools(("toolu_m2", echo, {"text": "again"})))
    refused = cli(home, capsys, "send", chat, "Once more.")
    assert "refused t.echo" in refused
    assert "--allow-tools t.echo" in refused

    # Turned off for this chat: gone from the next request, the others stay.
    cli(home, capsys, "chat", "set", chat, "tools_off=t.echo")
    body = json.loads(cli(home, capsys, "context", chat, "--request", "--draft", "hi"))
    names = {t["name"] for t in body["tools"]}
    assert echo not in names
    assert api_name("t", "add") in names
    cli(home, capsys, "chat", "set", chat, "tools_off=t")
    body = json.loads(cli(home, capsys, "context", chat, "--request", "--draft", "hi"))
    assert not any(t["name"].startswith("mcp__") for t in body["tools"])


def test_a_server_that_fails_is_told_to_the_model_and_the_chat_goes_on(
    home: Path, sim: SimulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    cli(
        home,
        capsys,
        "mcp",
        "add",
        "broken",
        "--",
        sys.executable,
        "-m",
        "tests.fakes.mcp_server",
        "--die-on-start",
    )
    assert "fatal: no configuration" in cli(home, capsys, "mcp", "test", "broken", status=1)
    chat = cli(home, capsys, "chat", "new", "--model", "claude-haiku-4-5").strip()
    cli(home, capsys, "send", chat, "Hello there.")
    body = sim.message_requests()[-1].body
    system = json.dumps(body.get("system", ""))
    assert "broken: unavailable" in system
    assert not any(t["name"].startswith("mcp__broken") for t in body.get("tools", []))


def test_a_server_killed_mid_turn_gives_the_model_a_readable_error_and_the_chat_goes_on(
    home: Path, sim: SimulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    cli(home, capsys, "mcp", "add", "t", "--", sys.executable, "-m", "tests.fakes.mcp_server")
    chat = cli(home, capsys, "chat", "new", "--model", "claude-haiku-4-5").strip()
    crash = api_name("t", "crash")
    sim.queue(Reply.tools(("toolu_c1", crash, {})))
    cli(home, capsys, "send", chat, "Crash it.", "--allow-tools", "t.crash")
    result = sim.message_requests()[-1].body["messages"][-1]["content"][0]
    assert result["tool_use_id"] == "toolu_c1"
    assert result["is_error"] is True
    said = json.dumps(result["content"])
    assert "'t' is unavailable" in said
    assert "about to crash" not in said  # its stderr stays out of what is sent
    cli(home, capsys, "send", chat, "Are you still there?")  # a new process: started afresh
    assert sim.message_requests()[-1].body["messages"][-1]["role"] == "user"


def _running(marker: str) -> bool:
    found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    return bool(found.stdout.strip())


def test_an_http_server_gone_before_its_listen_stream_opens_is_noticed(
    http_server: HttpServer, hub_of: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over HTTP the server's end shows only on its connections: one gone before the listen
    stream opens (a busy machine) is noticed all the same. (A guard: a clean-clone CI run
    once missed an HTTP server's end; the hub now also takes a listen stream that drops
    or cannot open for a server gone.)"""
    import asyncio

    from desktop_app.tools import mcp_hub, mcp_liveness

    opened = threading.Event()
    listen = mcp_liveness.listen_for_tool_changes

    async def late_listen(run: Any, client: Any) -> None:
        await asyncio.to_thread(opened.wait, 20)  # the server is killed meanwhile
        await listen(run, client)

    monkeypatch.setattr(mcp_hub, "listen_for_tool_changes", late_listen)  # (as the hub calls it)
    hub = hub_of(McpServer("web", url=http_server.url))
    assert hub.state("web").status is ServerStatus.READY, hub.state("web").error
    left = _told_when_not_ready(hub)
    http_server.process.kill()
    http_server.process.wait(10)
    opened.set()
    assert left.wait(20), "the server's end went unnoticed"
    assert hub.state("web").reason == "it stopped"


def _told_when_not_ready(hub: McpHub) -> threading.Event:
    """Set when a listener hears that a server is no longer ready."""
    left = threading.Event()

    def heard(name: str) -> None:
        state = hub.state(name)
        if state is None or state.status is not ServerStatus.READY:
            left.set()

    hub.listeners.append(heard)
    return left


ERAS = pytest.mark.parametrize(
    ("extra", "protocol"),
    [((), MODERN), (("--legacy",), LEGACY), (("--legacy", "--no-ping"), LEGACY)],
    ids=["2026-07-28 (no ping)", "handshake era", "handshake era without ping"],
)


@ERAS
def test_a_server_stays_ready_across_many_watch_intervals_and_answers(
    hub_of: Any, extra: tuple[str, ...], protocol: str
) -> None:
    """A server whose protocol has no ping (or that answers it "Method not found") is
    alive: it is never failed for it, and a call after many intervals is answered."""
    hub = hub_of(fake("t", *extra))
    assert hub.state("t").status is ServerStatus.READY, hub.state("t").error
    assert hub.state("t").protocol == protocol
    left = _told_when_not_ready(hub)
    assert not left.wait(40 * WATCH_EVERY_S), hub.state("t").error  # forty watch intervals
    assert outcome(hub.call("t", "echo", {"text": "still here"}, CancelToken())).content == (
        "still here"
    )


@ERAS
def test_a_server_that_dies_while_idle_is_noticed_with_its_last_words(
    hub_of: Any, tmp_path: Path, extra: tuple[str, ...], protocol: str
) -> None:
    marker = str(tmp_path / "idle-marker")
    hub = hub_of(fake("t", "--cancelled-marker", marker, *extra))
    assert hub.state("t").status is ServerStatus.READY
    left = _told_when_not_ready(hub)
    subprocess.run(["pkill", "-9", "-f", marker], check=True)
    assert left.wait(20), "the death went unnoticed"
    state = hub.state("t")
    assert state.status is ServerStatus.FAILED
    assert "test server up" in state.error  # its stderr's tail, for the user
    assert state.reason == "it stopped"  # what the model may be told: fixed words
    assert mcp_tools(hub) == []
    with pytest.raises(ContextDeskError, match="'t' is unavailable: it stopped"):
        hub.call("t", "echo", {"text": "x"}, CancelToken())


def test_closing_while_a_server_starts_ends_its_process(config: McpConfig, tmp_path: Path) -> None:
    marker = str(tmp_path / "slow-marker")
    fifo = tmp_path / "started"
    os.mkfifo(fifo)
    config.add(
        fake("t", "--started-fifo", str(fifo), "--slow-start", "60", "--cancelled-marker", marker)
    )
    hub = McpHub(config, tmp_path / "logs")
    hub.start()
    assert fifo.read_text() == "started"  # blocks until the process runs
    assert _running(marker)
    started = time.monotonic()
    hub.restart("t")  # a restart while starting: the new run is the one kept
    assert fifo.read_text() == "started"  # the new run's process
    hub.close()
    assert time.monotonic() - started < 15
    assert not _running(marker), "the server outlived the hub"


def test_a_server_name_cannot_make_tool_names_collide(config: McpConfig) -> None:
    with pytest.raises(ContextDeskError, match="not '__'"):
        config.add(fake("a__b"))
    with pytest.raises(ContextDeskError, match="at most 3600"):
        config.add(fake("slow", call_timeout=5000))


@pytest.mark.parametrize(("extra", "protocol"), [((), MODERN), (("--legacy",), LEGACY)])
def test_mcp_test_says_which_protocol_version_was_negotiated(
    home: Path, capsys: pytest.CaptureFixture[str], extra: tuple[str, ...], protocol: str
) -> None:
    server = ["--", sys.executable, "-m", "tests.fakes.mcp_server", *extra]
    cli(home, capsys, "mcp", "add", "t", *server)
    said = cli(home, capsys, "mcp", "test", "t")
    assert f"t: ready, MCP {protocol}," in said
    assert json.loads(cli(home, capsys, "mcp", "test", "t", "--json"))["protocol"] == protocol


@pytest.mark.parametrize(
    "extra", [(), ("--legacy",)], ids=["2026-07-28: listen", "handshake era: notification"]
)
def test_a_server_whose_tools_change_is_listed_again_and_the_listeners_told(
    hub_of: Any, extra: tuple[str, ...]
) -> None:
    hub = hub_of(fake("t", *extra))
    told = threading.Event()

    def heard(name: str) -> None:
        if any(t.name == "grown_1" for t in hub.state(name).tools):
            told.set()

    hub.listeners.append(heard)
    assert outcome(hub.call("t", "grow", {}, CancelToken())).content == "grown_1"
    assert told.wait(20), "the server's new tool was not listed"
    assert api_name("t", "grown_1") in {t.name for t in mcp_tools(hub)}
    grown = outcome(hub.call("t", "grown_1", {"value": "x"}, CancelToken()))
    assert grown.content == "tool 1001 got 'x'"


# -- results: structured content and images ---------------------------------------------------


def test_structured_content_never_repeats_what_the_content_says(hub_of: Any) -> None:
    hub = hub_of(fake("t"))
    call = lambda tool, **a: outcome(hub.call("t", tool, a, CancelToken()))  # noqa: E731
    # A 400 × 400 noisy PNG (≈480 KB), in the content and again, base64, in the structured
    # content: one image is sent, and its data never as text.
    shot = call("screenshot", width=400, height=400)
    assert isinstance(shot.content, tuple)
    images = [p for p in shot.content if isinstance(p, ImageBlock)]
    assert len(images) == 1
    assert len(images[0].data) > 600_000  # (base64 of ≈480 KB)
    texts = [p.text for p in shot.content if isinstance(p, TextBlock)]
    assert sum(len(t) for t in texts) < 1_000, "the image went as text too"
    # Text that is the structured content (as JSON, or FastMCP's {"result": …}) once.
    assert json.loads(str(call("add", a=2, b=3).content)) == {"sum": 5}
    assert call("echo", text="héllo").content == "héllo"
    # A text that does not say what the structured content holds: both are sent.
    rows = str(call("summary_with_rows").content)
    assert rows.startswith("2 rows.")
    assert '"id": 2' in rows


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("not-base64", "[image not sent: its data is not base64]"),
        ("mislabelled", "[image not sent: its bytes are image/png, not image/jpeg]"),
        ("unscalable", "[image not sent: 30,000×30,000 px"),
    ],
)
def test_a_broken_image_from_a_tool_is_a_note_and_the_turn_goes_on(
    home: Path, sim: SimulatorServer, capsys: pytest.CaptureFixture[str], kind: str, said: str
) -> None:
    cli(home, capsys, "mcp", "add", "t", "--", sys.executable, "-m", "tests.fakes.mcp_server")
    chat = cli(home, capsys, "chat", "new", "--model", "claude-haiku-4-5").strip()
    sim.queue(Reply.tools(("toolu_i1", api_name("t", "picture_as"), {"kind": kind})))
    sim.queue(Reply.text("I could not see it."))
    out = cli(home, capsys, "send", chat, "Show me.", "--allow-tools", "t.picture_as")
    assert "I could not see it." in out
    result = sim.message_requests()[-1].body["messages"][-1]["content"][0]
    assert result["tool_use_id"] == "toolu_i1"
    sent = json.dumps(result["content"], ensure_ascii=False)
    assert said in sent
    assert '"type": "image"' not in sent


def test_an_image_too_large_for_the_api_is_scaled_as_attachments_are(hub_of: Any) -> None:
    hub = hub_of(fake("t"))
    huge = outcome(hub.call("t", "picture_as", {"kind": "huge"}, CancelToken()))  # 9,000×20
    assert isinstance(huge.content, tuple)
    (image,) = huge.content
    assert isinstance(image, ImageBlock)
    size = image_size(image.data)
    assert size is not None
    assert max(size) <= API_MAX_EDGE


def test_a_server_that_dies_mid_turn_leaves_the_next_request_and_the_model_is_told(
    home: Path, sim: SimulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("steady", "doomed"):
        cli(home, capsys, "mcp", "add", name, "--", sys.executable, "-m", "tests.fakes.mcp_server")
    chat = cli(home, capsys, "chat", "new", "--model", "claude-haiku-4-5").strip()
    sim.queue(Reply.tools(("toolu_d1", api_name("doomed", "crash"), {})))
    sim.queue(Reply.text("It is gone; the other one is still here."))
    cli(home, capsys, "send", chat, "Crash it.", "--allow-tools", "doomed.crash")
    first, second = sim.message_requests()[-2:]  # two requests of one turn
    assert any(t["name"] == api_name("doomed", "crash") for t in first.body["tools"])
    offered = {t["name"] for t in second.body["tools"]}
    assert not any(n.startswith("mcp__doomed__") for n in offered)
    assert api_name("steady", "echo") in offered
    system = json.dumps(second.body["system"], ensure_ascii=False)
    assert "doomed: unavailable (it stopped)" in system
    sent = json.dumps(second.body, ensure_ascii=False)
    assert "about to crash" not in sent  # its stderr: for the user only
    assert "during a call" not in sent  # the error's own words too


# -- Claude desktop's configuration, without a keyring ----------------------------------------


@pytest.fixture
def no_keyring() -> Iterator[None]:
    """No keyring service at all, as on a headless Linux box (the `keyring` package's own
    backend for that case)."""
    import keyring.backends.fail

    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())
    yield
    keyring.set_keyring(previous)


def claude_desktop_file(tmp_path: Path, env: dict[str, Any]) -> Path:
    desktop = tmp_path / "claude_desktop_config.json"
    server = {"command": sys.executable, "args": ["-m", "tests.fakes.mcp_server"], "cwd": str(ROOT)}
    desktop.write_text(
        json.dumps({"mcpServers": {"plain": dict(server), "with env": {**server, "env": env}}})
    )
    return desktop


def test_importing_env_values_without_a_keyring_refuses_and_names_the_option(
    home: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path, no_keyring: None
) -> None:
    desktop = claude_desktop_file(tmp_path, {"TEST_SECRET": "s3cret"})
    said = cli(home, capsys, "mcp", "import", str(desktop), status=1)
    assert "--env-in-file" in said
    assert "with env" in said
    assert "No MCP servers" in cli(home, capsys, "mcp", "list")  # nothing was imported


def test_importing_with_env_in_file_keeps_the_values_in_a_private_file_and_warns(
    home: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path, no_keyring: None
) -> None:
    desktop = claude_desktop_file(tmp_path, {"TEST_SECRET": "s3cret", "UNSET": None})
    said = cli(home, capsys, "mcp", "import", str(desktop), "--env-in-file")
    assert "Added plain" in said
    assert "Added with-env" in said
    assert "UNSET" in said  # null: said, and left out
    mcp_json = home / "config" / "mcp.json"
    assert "in mcp.json" in said or str(mcp_json) in said
    assert "readable only by you" in said
    assert mcp_json.stat().st_mode & 0o777 == 0o600
    kept = json.loads(mcp_json.read_text())["mcpServers"]["with-env"]["env"]
    assert kept == {"TEST_SECRET": "s3cret"}  # no "None", no "UNSET"
    # The value reaches the server's process.
    tested = json.loads(cli(home, capsys, "mcp", "test", "with-env", "--json"))
    assert tested["status"] == "ready"
    config = McpConfig(home / "config")
    assert config.secrets(config.server("with-env")).env == {"TEST_SECRET": "s3cret"}


def test_a_null_env_value_is_never_the_string_none(config: McpConfig, tmp_path: Path) -> None:
    desktop = claude_desktop_file(tmp_path, {"TEST_SECRET": "s3cret", "UNSET": None})
    report = config.import_claude_desktop(desktop)
    assert report.added == ("plain", "with-env")
    assert any("UNSET" in w for w in report.warnings)
    assert config.secrets(config.server("with-env")).env == {"TEST_SECRET": "s3cret"}
    assert keyring.get_password("ContextDesk MCP", "with-env/env/UNSET") is None


def test_calls_to_two_servers_in_one_reply_run_at_the_same_time(
    home: Path, sim: SimulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Each server's `meet` waits for the other's: run one after the other, the first
    would wait alone until its time ran out."""
    for name in ("a", "b"):
        cli(home, capsys, "mcp", "add", name, "--", sys.executable, "-m", "tests.fakes.mcp_server")
    chat = cli(home, capsys, "chat", "new", "--model", "claude-haiku-4-5").strip()
    at_a, at_b = str(tmp_path / "a-is-here"), str(tmp_path / "b-is-here")
    sim.queue(
        Reply.tools(
            ("toolu_a", api_name("a", "meet"), {"here": at_a, "there": at_b, "seconds": 10}),
            ("toolu_b", api_name("b", "meet"), {"here": at_b, "there": at_a, "seconds": 10}),
        )
    )
    sim.queue(Reply.text("They met."))
    cli(home, capsys, "send", chat, "Meet.", "--allow-tools", "a.meet,b.meet")
    results = sim.message_requests()[-1].body["messages"][-1]["content"]
    assert [r["tool_use_id"] for r in results] == ["toolu_a", "toolu_b"]  # the calls' order
    said = [
        r["content"] if isinstance(r["content"], str) else r["content"][0]["text"] for r in results
    ]
    assert said == ["met", "met"]


def test_the_sdk_s_warnings_and_tracebacks_go_to_the_log_file_not_the_terminal(
    tmp_path: Path,
) -> None:
    """A server that prints a line that is not JSON-RPC on stdout makes the SDK log a
    traceback; it belongs in the log file. Run as the user runs it, warnings shown."""
    home = tmp_path / "home"

    def contextdesk(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-W", "default", "-m", "desktop_app", "--home", str(home), *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=90,
        )

    server = ["--", sys.executable, "-m", "tests.fakes.mcp_server", "--garbage"]
    assert contextdesk("mcp", "add", "noisy", *server).returncode == 0
    tested = contextdesk("mcp", "test", "noisy")
    assert tested.returncode == 0, tested.stderr
    assert "noisy: ready" in tested.stdout
    assert tested.stderr == ""  # no traceback, no warning
    log = (home / "logs" / "contextdesk.log").read_text()
    assert "Failed to parse JSONRPC message from server" in log
    # One line each, without the line itself (the server's output may hold a secret).
    assert "Traceback" not in log
    said = [line for line in log.splitlines() if "Failed to parse JSONRPC" in line]
    assert said
    assert all("ValidationError" in line for line in said)
    assert len(log.splitlines()) == len(said), log
    assert "a line that is not JSON-RPC" not in log


# -- secrets: never in what is shown, logged, stored or sent ----------------------------------

LEAKED = "tok-8c1f2e77"  # a token a careless server prints


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Token": f"{LEAKED}\r\nX-Evil: 1"},
        {"X-Token": f"{LEAKED}\n"},
        {"X-Token": f"{LEAKED}\x00"},
        {"X Token": LEAKED},
        {"X-Token\r\n": LEAKED},
    ],
    ids=["CR LF", "LF", "NUL", "space in name", "CR LF in name"],
)
def test_a_header_with_a_line_break_or_control_character_is_refused_at_add(
    config: McpConfig, headers: dict[str, str]
) -> None:
    with pytest.raises(ContextDeskError) as raised:
        config.add(McpServer("web", url="http://127.0.0.1:1/mcp"), Secrets(headers=headers))
    assert "header" in raised.value.message
    assert LEAKED not in raised.value.message  # a value is never quoted
    assert config.servers() == {}
    assert keyring.get_password("ContextDesk MCP", "web/header/X-Token") is None


def test_mcp_add_refuses_a_header_value_with_a_line_break(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    said = cli(
        home,
        capsys,
        "mcp",
        "add",
        "web",
        "--url",
        "http://127.0.0.1:1/mcp",
        "--header",
        f"X-Token={LEAKED}\r\nX-Evil: 1",
        status=2,
    )
    assert "X-Token" in said
    assert LEAKED not in said
    assert "No MCP servers" in cli(home, capsys, "mcp", "list")


def test_a_header_value_with_a_line_break_in_the_keyring_is_refused_when_read(
    http_server: HttpServer, hub_of: Any, config: McpConfig
) -> None:
    config.add(McpServer("web", url=http_server.url), Secrets(headers={"X-Token": "fine"}))
    keyring.set_password("ContextDesk MCP", "web/header/X-Token", f"{LEAKED}\r\nX-Evil: 1")
    hub = hub_of()
    state = hub.state("web")
    assert state.status is ServerStatus.FAILED
    assert "X-Token" in state.error
    assert LEAKED not in state.error  # (the HTTP client's own error quoted it)


def test_a_server_s_last_words_are_shown_without_the_secrets_it_was_given(
    home: Path, sim: SimulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server = ["--", sys.executable, "-m", "tests.fakes.mcp_server", "--leak-secret"]
    cli(
        home,
        capsys,
        "mcp",
        "add",
        "leaky",
        "--env",
        f"TEST_SECRET={LEAKED}",
        *server,
        "--die-on-start",
    )
    said = cli(home, capsys, "mcp", "test", "leaky", status=1)
    assert "fatal: no configuration" in said  # its last words, for the user
    assert "using token" in said
    assert LEAKED not in said
    chat = cli(home, capsys, "chat", "new", "--model", "claude-haiku-4-5").strip()
    cli(home, capsys, "send", chat, "Hello there.")
    body = json.dumps(sim.message_requests()[-1].body, ensure_ascii=False)
    assert "- leaky: unavailable (it could not start)" in body  # fixed words only
    assert "fatal" not in body
    assert LEAKED not in body
    for stored in (home / "data").glob("*"):
        if stored.is_file():
            assert LEAKED.encode() not in stored.read_bytes(), stored
    log = home / "logs" / "contextdesk.log"
    assert not log.exists() or LEAKED not in log.read_text()


# -- mcp.json read entry by entry ---------------------------------------------------------------


def hand_edited_mcp_json(home: Path) -> Path:
    """A good server among entries a hand edit (or another program) left broken."""
    good = {"command": sys.executable, "args": ["-m", "tests.fakes.mcp_server"], "cwd": str(ROOT)}
    entries = {
        "old": {"type": "sse", "url": "https://example.test/sse"},
        "good": good,
        "my server.v2": good,
        "badargs": {"command": "npx", "args": "-y some-server"},
        "badheader": {"url": "https://example.test/mcp", "headers": {"X\nToken": "@keyring"}},
    }
    path = home / "config" / "mcp.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": entries}))
    return path


SKIPPED = {
    "old": "SSE",
    "my server.v2": "cannot name a server",
    "badargs": "args must be a list",
    "badheader": "cannot name a header",
}


def test_a_bad_entry_in_mcp_json_is_skipped_with_its_reason_and_the_others_load(
    home: Path, sim: SimulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    path = hand_edited_mcp_json(home)
    listed = cli(home, capsys, "mcp", "list")
    assert "good " in listed
    for name, why in SKIPPED.items():
        line = next(line for line in listed.splitlines() if line.startswith(name))
        assert "skipped" in line
        assert why in line
    assert json.loads(cli(home, capsys, "mcp", "test", "good", "--json"))["status"] == "ready"
    chat = cli(home, capsys, "chat", "new", "--model", "claude-haiku-4-5").strip()
    cli(home, capsys, "send", chat, "Hello there.")  # (a bad name failed every send)
    names = {t["name"] for t in sim.message_requests()[-1].body["tools"]}
    assert api_name("good", "echo") in names
    assert not any("server.v2" in n for n in names)
    # Adding another server keeps the broken entries as they are, for the user to mend.
    cli(home, capsys, "mcp", "add", "more", "--", sys.executable, "-m", "tests.fakes.mcp_server")
    kept = json.loads(path.read_text())["mcpServers"]
    assert set(kept) == {*SKIPPED, "good", "more"}
    assert kept["badargs"] == {"command": "npx", "args": "-y some-server"}
    # A skipped entry can be removed; asked for, it says why it is skipped.
    assert "args must be a list" in cli(home, capsys, "mcp", "test", "badargs", status=2)
    cli(home, capsys, "mcp", "remove", "badargs")
    assert "badargs" not in json.loads(path.read_text())["mcpServers"]


def test_the_hub_loads_the_good_entries_of_a_hand_edited_file(tmp_path: Path) -> None:
    hand_edited_mcp_json(tmp_path)
    config = McpConfig(tmp_path / "config")
    assert list(config.servers()) == ["good"]
    skipped = config.skipped()
    assert set(skipped) == set(SKIPPED)
    assert all(why in skipped[name] for name, why in SKIPPED.items())
    hub = McpHub(config, tmp_path / "logs", watch_every=WATCH_EVERY_S)
    try:
        assert hub.config_error == ""
        assert set(hub.skipped) == set(SKIPPED)
        hub.start()
        assert hub.wait(timeout=60)
        state = hub.state("good")
        assert state is not None
        assert state.status is ServerStatus.READY, state.error
    finally:
        hub.close()


# -- a cap on what one server adds to every request -------------------------------------------


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (("--many", "3000"), "3,014 tools are more than its limit of 200 (maxTools"),
        (("--huge-description", "2000000"), "more than its limit of 20,000 tokens (maxToolTokens"),
    ],
    ids=["3,000 tools", "a 2 MB description"],
)
def test_a_server_over_its_tool_limit_is_withheld_and_the_others_go_on(
    hub_of: Any, extra: tuple[str, ...], said: str
) -> None:
    hub = hub_of(fake("big", *extra), fake("small"))
    big = hub.state("big")
    assert big.status is ServerStatus.READY, big.error
    assert said in big.withheld
    offered = {t.name for t in mcp_tools(hub)}
    assert not any(n.startswith("mcp__big__") for n in offered)
    assert api_name("small", "echo") in offered
    note = unavailable_note(hub)
    assert "- big: its tools are not offered (they are over its limit" in note
    assert "small" not in note


def test_a_chat_goes_on_when_a_server_is_over_its_limit_and_the_limit_can_be_raised(
    home: Path, sim: SimulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server = ["--", sys.executable, "-m", "tests.fakes.mcp_server"]
    cli(home, capsys, "mcp", "add", "big", *server, "--huge-description", "2000000")
    cli(home, capsys, "mcp", "add", "small", *server)
    tested = cli(home, capsys, "mcp", "test", "big", status=1)
    assert "withheld" in tested
    assert "maxToolTokens" in tested
    chat = cli(home, capsys, "chat", "new", "--model", "claude-haiku-4-5").strip()
    cli(home, capsys, "send", chat, "Hello there.")  # (was: "conversation too long")
    body = sim.message_requests()[-1].body
    assert api_name("small", "echo") in {t["name"] for t in body["tools"]}
    assert not any(t["name"].startswith("mcp__big__") for t in body["tools"])
    assert "- big: its tools are not offered" in json.dumps(body["system"])
    # The limit is the server's own, in mcp.json: a lower one withholds a small server too.
    path = home / "config" / "mcp.json"
    data = json.loads(path.read_text())
    data["mcpServers"]["small"]["maxTools"] = 5
    path.write_text(json.dumps(data))
    assert "14 tools are more than its limit of 5" in cli(
        home, capsys, "mcp", "test", "small", status=1
    )


def test_non_string_env_values_are_converted_or_left_out_with_a_warning(
    config: McpConfig, tmp_path: Path
) -> None:
    env = {"TEST_SECRET": "s3cret", "PORT": 8080, "DEBUG": True, "HOSTS": ["a", "b"]}
    desktop = claude_desktop_file(tmp_path, {**env, "UNSET": None})
    report = config.import_claude_desktop(desktop)
    assert report.added == ("plain", "with-env")
    warned = "\n".join(report.warnings)
    assert "PORT" in warned
    assert "'8080'" in warned
    assert "DEBUG" in warned
    assert "'true'" in warned
    assert "HOSTS" in warned
    assert "left out" in warned
    assert "UNSET" in warned
    kept = config.secrets(config.server("with-env")).env
    assert kept == {"TEST_SECRET": "s3cret", "PORT": "8080", "DEBUG": "true"}


def test_a_server_s_resources_and_prompts_are_listed_and_a_resource_is_sent(
    home: Path, sim: SimulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server = ["--", sys.executable, "-m", "tests.fakes.mcp_server"]
    cli(home, capsys, "mcp", "add", "t", *server)
    listed = json.loads(cli(home, capsys, "mcp", "resources", "t", "--json"))
    by_uri = {r["uri"]: r for r in listed}
    assert by_uri["notes://today"]["mime_type"] == "text/plain"
    assert by_uri["images://dot"]["mime_type"] == "image/png"
    assert "notes://today  today (text/plain) — Today's notes" in cli(
        home, capsys, "mcp", "resources", "t"
    )
    (review,) = json.loads(cli(home, capsys, "mcp", "prompts", "t", "--json"))
    assert review["name"] == "review"
    assert review["arguments"] == [{"name": "topic", "description": "", "required": True}]
    assert "/review(topic)" in cli(home, capsys, "mcp", "prompts", "t")

    chat = cli(home, capsys, "chat", "new").strip()
    cli(
        home,
        capsys,
        "send",
        chat,
        "What do my notes say?",
        "--resource",
        "t:notes://today",
        "--resource",
        "t:images://dot",
    )
    content = sim.message_requests()[-1].body["messages"][-1]["content"]
    assert content[0] == {
        "type": "text",
        "text": "[Resource notes://today from t]\nCall the courier about order 88213 before noon.",
    }
    assert content[2]["type"] == "image"  # the picture, as an image the API takes
    assert content[2]["source"]["media_type"] == "image/png"
    assert content[-1]["text"] == "What do my notes say?"
    assert sim.refused() == []
    said = cli(home, capsys, "send", chat, "Hi", "--resource", "t:notes://nothing", status=1)
    assert "notes://nothing" in said
