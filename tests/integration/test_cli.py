"""The command line, in-process, over a real home folder and the offline demo model."""

from __future__ import annotations

import json
import logging
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_app.api.simulator import Reply, SimulatorServer
from desktop_app.app import main
from desktop_app.storage.store import ChatStore
from tests.unit.builders import a, u


class CLI:
    def __init__(self, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.home = home
        self.capsys = capsys

    def __call__(self, *args: str, status: int = 0) -> str:
        code = main(["--home", str(self.home), *args])
        out, err = self.capsys.readouterr()
        assert code == status, f"exit {code}, stderr: {err}"
        return out if status == 0 else err


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> CLI:
    return CLI(tmp_path / "home", capsys)


def test_chats_are_created_listed_shown_changed_and_trashed(cli: CLI) -> None:
    chat = cli(
        "chat", "new", "--title", "Refunds", "--keep-recent", "3", "--threshold", "0.8"
    ).strip()
    assert chat.startswith("chat_")
    assert "Refunds" in cli("chat", "list")
    listed = json.loads(cli("chat", "list", "--json"))
    assert listed[0]["id"] == chat
    cli("chat", "set", chat[:14], "title=Refund case", "keep_recent=4", "auto_compact=off")
    shown = json.loads(cli("chat", "show", chat, "--json"))
    assert shown["title"] == "Refund case"
    assert "Unknown setting" in cli("chat", "set", chat, "colour=blue", status=2)
    assert "a whole number is needed" in cli("chat", "set", chat, "keep_recent=many", status=2)
    assert "threshold must be between" in cli("chat", "new", "--threshold", "7", status=2)
    cli("chat", "new", "--title", "Other")
    assert "chats start with it" in cli("chat", "show", "chat_", status=1)
    assert "Moved 'Refund case' to the trash." in cli("chat", "delete", chat)
    assert "Refund case" not in cli("chat", "list")


def test_send_streams_the_reply_and_remembers_it(cli: CLI) -> None:
    chat = cli("chat", "new").strip()
    out = cli("--demo", "send", chat, "My order #88213 cost 847.20.")
    assert out.startswith("[Simulated reply from the ContextDesk offline demo model]")
    assert "#88213" in out
    result = json.loads(cli("--demo", "send", chat, "and again", "--json"))
    assert result["reason"] == "end_turn"
    assert "this conversation now has 3 messages" in result["reply"]
    assert [m["role"] for m in json.loads(cli("chat", "show", chat, "--json"))["messages"]] == [
        "user",
        "assistant",
    ] * 2


def test_send_without_a_key_says_what_to_do(cli: CLI) -> None:
    chat = cli("chat", "new").strip()
    err = cli("send", chat, "hi", status=1)
    assert "No API key" in err
    assert "contextdesk demo" in err
    assert json.loads(cli("chat", "show", chat, "--json"))["messages"] == []  # nothing stored


def test_facts_are_pinned_listed_sent_and_unpinned(cli: CLI) -> None:
    chat = cli("chat", "new").strip()
    fact = cli("pin", chat, "Refund 847.20 by 2026-04-13").strip()
    assert "Refund 847.20 by 2026-04-13" in cli("facts", chat)
    request = json.loads(cli("context", chat, "--request"))
    assert "Refund 847.20 by 2026-04-13" in request["system"][0]["text"]
    assert "Unpinned: Refund 847.20" in cli("unpin", chat, fact[:12])
    assert json.loads(cli("facts", chat, "--json")) == []


def test_context_shows_sections_and_every_block(cli: CLI) -> None:
    chat = cli("chat", "new").strip()
    cli("--demo", "send", chat, "hello there")
    text = cli("context", chat)
    assert "reserved output" in text
    assert "user      text" in text
    data = json.loads(cli("context", chat, "--json"))
    assert sum(data["sections"].values()) == data["window"]
    assert data["messages"][0]["blocks"][0]["state"] == "in context"


def test_compact_previews_then_applies(cli: CLI) -> None:
    chat = cli("chat", "new", "--keep-recent", "1").strip()
    for n in range(3):
        cli("--demo", "send", chat, f"Order #8821{n} costs {840 + n}.20, due 2026-04-1{n}.")
    preview = cli("--demo", "compact", chat, "--dry-run", "--instructions", "focus on refunds")
    assert "Summary of turns 1–2" in preview
    assert "(dry run: nothing was changed)" in preview
    assert "[Simulated summary" in preview
    assert "Applied." in cli("--demo", "compact", chat)
    states = [
        b["state"]
        for m in json.loads(cli("context", chat, "--json"))["messages"]
        for b in m["blocks"]
    ]
    assert "summarized in #1" in states


def test_export_and_import_through_files(cli: CLI, tmp_path: Path) -> None:
    chat = cli("chat", "new", "--title", "Exported").strip()
    cli("--demo", "send", chat, "hello")
    target = tmp_path / "chat.json"
    cli("export", chat, "-o", str(target))
    doc = json.loads(target.read_text())
    assert doc["format"] == "contextdesk.chat"
    assert doc["request"]["messages"][0]["content"][0]["text"] == "hello"
    new_id = cli("import", str(target)).strip()
    assert new_id != chat
    assert "## You\n\nhello" in cli("export", new_id, "--format", "md")
    broken = tmp_path / "broken.json"
    broken.write_text('{"messages": {"role": "user", "content": "x"}}')
    assert "messages: Input should be a valid list" in cli("import", str(broken), status=2)
    odd = tmp_path / "odd.json"  # a shape error is repaired, and said
    odd.write_text('{"messages": [{"role": "robot", "content": "x"}]}')
    assert main(["--home", str(cli.home), "import", str(odd)]) == 0
    assert "read the unknown role 'robot' as 'user'" in cli.capsys.readouterr().err


def test_a_canary_key_reaches_no_file_no_export_no_log_and_no_subprocess(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    canary = "sk-ant-CANARY-7f3a9c"
    home = tmp_path / "home"
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (home / "config").mkdir(parents=True)
    (home / "config" / "settings.json").write_text(
        json.dumps({"workspace": str(workspace), "run_command_enabled": True})
    )
    caplog.set_level(logging.DEBUG)
    with SimulatorServer() as sim:
        monkeypatch.setenv("ANTHROPIC_API_KEY", canary)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", sim.base_url)
        sim.queue(
            Reply.tools(("toolu_env", "run_command", {"command": "env; echo done"})),
            Reply.text("Ran it."),
        )
        cli = CLI(home, capsys)
        chat = cli("chat", "new").strip()
        cli("-v", "send", chat, "run env please", "--allow-tools", "run_command")
        cli("send", chat, "please read notes.md and tell me the time")
        cli("export", chat, "-o", str(home / "export.json"))
        cli("export", chat, "--format", "md", "-o", str(home / "export.md"))
        assert sim.message_requests()[0].headers["x-api-key"] == canary  # it was used...
        tool_output = sim.message_requests()[1].body["messages"][2]["content"][0]["content"]
    assert "done" in tool_output
    assert canary not in tool_output  # ...not given to the subprocess...
    for path in home.rglob("*"):
        if path.is_file():
            assert canary.encode() not in path.read_bytes(), path  # ...written nowhere...
    assert all(canary not in record.getMessage() for record in caplog.records)  # ...nor logged


def test_compact_into_a_closed_pipe_still_applies(cli: CLI, tmp_path: Path) -> None:
    chat = cli("chat", "new", "--keep-recent", "1").strip()
    for n in range(3):
        cli("--demo", "send", chat, f"Order #8821{n} costs {840 + n}.20, due 2026-04-1{n}.")
    command = [
        sys.executable,
        "-m",
        "desktop_app",
        "--home",
        str(cli.home),
        "--demo",
        "compact",
        chat,
    ]
    piped = subprocess.run(
        f"{shlex.join(command)} | head -1", shell=True, capture_output=True, text=True, timeout=120
    )
    assert piped.stdout.startswith("Summary of turns")
    summaries = [
        b["state"]
        for m in json.loads(cli("context", chat, "--json"))["messages"]
        for b in m["blocks"]
    ]
    assert "summarized in #1" in summaries


def test_a_settings_change_says_whether_new_chats_or_every_chat_get_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model or system prompt is what new chats start with; the workspace and the
    timeouts are the app's, used by every chat at once (it once said "new chats use it"
    of all of them)."""
    folder = tmp_path / "project"
    folder.mkdir()
    home = str(tmp_path / "home")
    assert main(["--home", home, "settings", "model=claude-haiku-4-5", "system=Be brief."]) == 0
    said = capsys.readouterr().err
    assert "new chats start with model, system (a chat keeps its own)." in said
    assert "every chat" not in said
    assert main(["--home", home, "settings", f"workspace={folder}", "quiet_timeout=90"]) == 0
    assert "; every chat uses workspace, quiet_timeout now." in capsys.readouterr().err


def test_settings_are_shown_and_changed_from_the_terminal(cli: CLI, tmp_path: Path) -> None:
    shown = json.loads(cli("settings", "--json"))
    assert {"server", "model", "max_tokens", "thinking", "system", "tools", "run_command"} <= set(
        shown
    )
    assert shown["workspace"] == ""
    folder = tmp_path / "project"
    folder.mkdir()
    out = cli(
        "settings",
        "server=http://localhost:11434",
        "model=llama3.2",
        "max_tokens=2048",
        f"workspace={folder}",
        "run_command=off",
    )
    assert 'model = "llama3.2"' in out
    assert json.loads(cli("settings", "model", "max_tokens", "--json")) == {
        "model": "llama3.2",
        "max_tokens": 2048,
    }
    saved = json.loads((cli.home / "config" / "settings.json").read_text())
    assert saved["run_command_enabled"] is False  # a boolean, not the string "off"
    assert saved["workspace"] == str(folder)
    # Checked as the Settings dialog checks them; nothing is saved when one is wrong.
    assert "below the max output tokens" in cli("settings", "thinking=4096", status=2)
    assert "not a folder" in cli("settings", "workspace=/no/such/folder", status=2)
    assert "say on or off" in cli("settings", "tools=perhaps", status=2)
    assert "no such setting" in cli("settings", "colour=blue", status=2)
    assert "the settings are" in cli("settings", "colour", status=2)
    assert "the settings are" in cli("settings", "model=changed", "modle", status=2)
    assert json.loads(cli("settings", "--json"))["model"] == "llama3.2"  # nothing changed
    folder.rmdir()  # the workspace's drive is gone: other settings can still change
    cli("settings", "max_tokens=3000")
    assert json.loads(cli("settings", "workspace", "--json")) == {"workspace": str(folder)}
    assert "not a folder" in cli("settings", f"workspace={folder}/elsewhere", status=2)
    cli("settings", "max_tokens=2048")
    # A new chat takes them.
    chat = cli("chat", "new").strip()
    listed = json.loads(cli("chat", "list", "--json"))[0]
    assert (listed["id"], listed["model"], listed["settings"]["max_tokens"]) == (
        chat,
        "llama3.2",
        2048,
    )


def test_a_bug_is_said_plainly_and_its_traceback_kept_in_the_log(
    cli: CLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop_app.cli import commands

    def broken(engine: object, args: object) -> int:
        raise RuntimeError("the flux capacitor")

    chat = cli("chat", "new").strip()
    monkeypatch.setitem(commands.COMMANDS, "facts", broken)
    err = cli("facts", chat, status=1)
    assert "Something went wrong: RuntimeError: the flux capacitor" in err
    assert "Traceback" not in err
    log = cli.home / "logs" / "contextdesk.log"
    assert str(log) in err
    assert "Traceback" in log.read_text()
    assert "the flux capacitor" in log.read_text()


def test_search_prints_one_line_per_hit(cli: CLI) -> None:
    chat_id = cli("chat", "new", "--title", "Trip planning").strip()
    store = ChatStore.open(cli.home / "data" / "contextdesk.sqlite3")
    store.append_messages(chat_id, [u("Book the ferry to Hydra"), a("The ferry leaves at 9.")])
    store.close()

    assert cli("search", "ferry").splitlines() == [  # the newest message first
        f"{chat_id}  Trip planning  #2  The ferry leaves at 9.",
        f"{chat_id}  Trip planning  #1  Book the ferry to Hydra",
    ]
    [hit] = json.loads(cli("search", "HYDRA", "--chat", chat_id[:-2], "--json"))
    assert hit["chat_title"] == "Trip planning"
    assert (hit["message_number"], hit["snippet"]) == (1, "Book the ferry to Hydra")
    assert "Nothing matches 'submarine'" in cli("search", "submarine", status=1)


def test_the_plain_launch_is_read_as_the_whole_grammar_reads_it() -> None:
    """The window's fast path (no arguments, or a data folder) never drifts from argparse."""
    from desktop_app.cli.parser import _grammar, parse

    for argv in ([], ["--home", "/data/cd"], ["--home", "x", "demo"], ["-v"]):
        assert vars(parse(argv)) == vars(_grammar(commands=True).parse_args(argv)), argv


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["mcp", "add", "g", "npx", "-y", "@x/server"], ["npx", "-y", "@x/server"]),
        (
            ["mcp", "add", "g", "--env", "K=V", "uvx", "--from", "x", "s"],
            ["uvx", "--from", "x", "s"],
        ),
        (["mcp", "add", "g", "--", "python", "-m", "srv"], ["python", "-m", "srv"]),
    ],
)
def test_an_mcp_server_s_own_flags_stay_its_own(argv: list[str], command: list[str]) -> None:
    from desktop_app.cli.parser import parse

    assert parse(argv).server_command == command
