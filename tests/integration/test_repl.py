"""`contextdesk repl`, typed into as a person does (stdin), against the simulator and a
real MCP server: /request shows the next request without ending the repl, and
--allow-tools lets named tools run as `send --allow-tools` does."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from desktop_app.api.simulator import Reply, SimulatorServer
from desktop_app.app import main
from desktop_app.tools.mcp_names import api_name
from tests.integration.conftest import TEST_KEY

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def home(tmp_path: Path, sim: SimulatorServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", sim.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    return tmp_path / "home"


def cli(home: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = main(["--home", str(home), *args])
    out, err = capsys.readouterr()
    assert code == 0, f"exit {code}: {out} {err}"
    return out + err


def typed(monkeypatch: pytest.MonkeyPatch, *lines: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(f"{line}\n" for line in lines)))


def request_bodies(out: str) -> list[dict[str, object]]:
    """The JSON objects the repl printed (each `/request`'s body)."""
    decoder, found, at = json.JSONDecoder(), [], out.find("{")
    while at != -1:
        body, end = decoder.raw_decode(out, at)
        found.append(body)
        at = out.find("{", end)
    return found


def test_request_shows_the_next_request_and_the_repl_goes_on(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    chat = cli(home, capsys, "chat", "new", "--model", "claude-haiku-4-5").strip()
    cli(home, capsys, "pin", chat, "Order #88213")
    typed(monkeypatch, "/request", "/request What about the refund?", "/facts", "/quit")
    out = cli(home, capsys, "repl", chat)
    assert "Something went wrong" not in out
    empty, drafted = request_bodies(out)
    assert "Order #88213" in json.dumps(empty["system"])
    last = drafted["messages"][-1]  # type: ignore[index]
    assert last["role"] == "user"
    assert "What about the refund?" in json.dumps(last["content"])
    assert empty["messages"][-1]["content"][-1]["text"] == "Hello"  # type: ignore[index]
    printed, _, said = out.partition("No --draft: ")  # (stderr comes after stdout here)
    assert said.startswith('a one-word message ("Hello") stands for it')
    assert printed.rstrip().endswith(">")  # …and it asked for the next line after each
    assert "Order #88213" in out.split(json.dumps(drafted, ensure_ascii=False, indent=2))[-1]


def test_allow_tools_lets_the_named_tools_run_without_asking(
    home: Path,
    sim: SimulatorServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = ["--", sys.executable, "-m", "tests.fakes.mcp_server"]
    cli(home, capsys, "mcp", "add", "t", *server)
    chat = cli(home, capsys, "chat", "new", "--model", "claude-haiku-4-5").strip()
    echo = api_name("t", "echo")
    sim.queue(Reply.tools(("toolu_r1", echo, {"text": "from the repl"})), Reply.text("Done."))
    sim.queue(Reply.tools(("toolu_r2", api_name("t", "add"), {"a": 1, "b": 2})))
    sim.queue(Reply.text("Not allowed, then."))
    typed(monkeypatch, "Echo it.", "Add them.", "/quit")
    out = cli(home, capsys, "repl", chat, "--allow-tools", "t.echo")
    requests = sim.message_requests()
    echoed = requests[1].body["messages"][-1]["content"][0]
    assert echoed["tool_use_id"] == "toolu_r1"
    assert echoed["content"] in ("from the repl", [{"type": "text", "text": "from the repl"}])
    assert not echoed.get("is_error")
    refused = requests[3].body["messages"][-1]["content"][0]
    assert refused["is_error"] is True  # t.add was not listed
    assert "refused t.add" in out
