"""The tool runtime: schemas, workspace confinement, approval policies, run_command."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from desktop_app.core.blocks import ToolUseBlock
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import Cancelled
from desktop_app.core.ports import ApprovalPolicy
from desktop_app.tools.builtin import RUN_COMMAND, builtin_tools
from desktop_app.tools.process import OUTPUT_CAP, cap_output, run_command, safe_environment
from desktop_app.tools.registry import Tool, ToolRegistry
from desktop_app.tools.schema import check_input


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("the secret")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.md").write_text("hello notes")
    (ws / "sub").mkdir()
    (ws / "sub" / "inner.txt").write_text("inner")
    os.symlink(outside, ws / "escape_dir")
    os.symlink(outside / "secret.txt", ws / "escape_file")
    os.symlink(ws / "notes.md", ws / "alias.md")  # a link that stays inside is fine
    return ws


def tools(workspace: Path, pins: list[str] | None = None) -> ToolRegistry:
    def on_pin(text: str, fields: tuple[tuple[str, str], ...]) -> str:
        (pins if pins is not None else []).append(text)
        return f"Proposed pinned fact: {text} (waiting for the user's approval)"

    return ToolRegistry(builtin_tools(commands=True), workspace=workspace, on_pin=on_pin)


def call(name: str, **args: object) -> ToolUseBlock:
    return ToolUseBlock("toolu_1", name, dict(args))


def run(registry: ToolRegistry, name: str, **args: object) -> tuple[str, bool]:
    block = call(name, **args)
    check = registry.check(block)
    if check.error:
        return check.error, True
    outcome = registry.run(block, CancelToken())
    assert isinstance(outcome.content, str)
    return outcome.content, outcome.is_error


def test_schema_problems_are_named_by_path() -> None:
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1},
            "n": {"type": "integer", "minimum": 1},
        },
        "required": ["path"],
        "additionalProperties": False,
    }
    assert check_input({"path": "a", "n": 2}, schema) == []
    assert check_input({"n": True, "x": 1}, schema) == [
        "input.path: required",
        "input.x: not allowed",
        "input.n: expected integer, got boolean",
    ]
    assert check_input({"path": "", "n": 0}, schema) == [
        "input.path: must not be empty",
        "input.n: must be at least 1",
    ]
    assert check_input([], schema) == ["input: expected object, got array"]


def test_invalid_input_and_unknown_tools_are_refused_before_running(workspace: Path) -> None:
    registry = tools(workspace)
    assert run(registry, "read_file") == ("Invalid input for read_file: input.path: required", True)
    message, is_error = run(registry, "delete_everything")
    assert is_error
    assert message.startswith(
        "Unknown tool 'delete_everything'. Available tools: current_time, pin_fact"
    )


ATTACKS = [
    "../outside/secret.txt",
    "sub/../../outside/secret.txt",
    "/etc/passwd",
    "~/.ssh/id_rsa",
    "escape_file",
    "escape_dir/secret.txt",
    "escape_dir/new.txt",
    "escape_dir",
    "sub\\..\\..\\outside\\secret.txt",
    "C:\\Windows\\system.ini",
    "notes.md\x00.txt",
]


@pytest.mark.parametrize("path", ATTACKS)
@pytest.mark.parametrize("tool", ["read_file", "write_file", "list_files", "edit_file"])
def test_no_path_escapes_the_workspace(workspace: Path, tool: str, path: str) -> None:
    args: dict[str, object] = {"path": path}
    if tool == "write_file":
        args["content"] = "pwned"
    if tool == "edit_file":
        args |= {"old_string": "the secret", "new_string": "pwned"}
    message, is_error = run(tools(workspace), tool, **args)
    assert is_error, message
    assert "secret" not in message.replace("secret.txt", "") or "refused" in message
    assert (workspace.parent / "outside" / "secret.txt").read_text() == "the secret"
    assert not (workspace.parent / "outside" / "new.txt").exists()


def test_the_refusal_says_why(workspace: Path) -> None:
    message, _ = run(tools(workspace), "read_file", path="escape_file")
    assert "outside the workspace" in message
    message, _ = run(tools(workspace), "read_file", path="../x")
    assert "'..' is not allowed" in message


def test_file_tools_work_inside(workspace: Path) -> None:
    registry = tools(workspace)
    assert run(registry, "read_file", path="alias.md") == ("hello notes", False)
    assert run(registry, "write_file", path="new/deep/file.txt", content="A\nB") == (
        "Wrote 3 characters to new/deep/file.txt.",
        False,
    )
    assert (
        run(registry, "edit_file", path="new/deep/file.txt", old_string="B", new_string="C")[1]
        is False
    )
    assert (workspace / "new" / "deep" / "file.txt").read_text() == "A\nC"
    listing, _ = run(registry, "list_files", path=".")
    assert "sub/" in listing
    assert "notes.md  (11 bytes)" in listing
    message, is_error = run(
        registry, "edit_file", path="notes.md", old_string="zzz", new_string="y"
    )
    assert is_error
    assert "does not occur" in message


def test_writes_and_commands_ask_with_the_resolved_action(workspace: Path) -> None:
    registry = tools(workspace)
    write = registry.check(call("write_file", path="sub/x.txt", content="hi"))
    assert write.policy is ApprovalPolicy.ASK
    assert write.summary == f"Write 2 characters to {os.path.realpath(workspace)}/sub/x.txt"
    command = registry.check(call("run_command", command="ls -la"))
    assert command.policy is ApprovalPolicy.ASK
    assert command.summary == f"Run in {workspace}:\nls -la"
    assert registry.check(call("read_file", path="notes.md")).policy is ApprovalPolicy.ALLOW


def test_a_tool_that_asks_cannot_be_set_to_allow(workspace: Path) -> None:
    registry = ToolRegistry(
        builtin_tools(commands=True),
        workspace=workspace,
        policies={"run_command": ApprovalPolicy.ALLOW, "read_file": ApprovalPolicy.DENY},
    )
    assert registry.check(call("run_command", command="ls")).policy is ApprovalPolicy.ASK
    assert registry.check(call("read_file", path="notes.md")).policy is ApprovalPolicy.DENY


def test_run_command_is_off_by_default() -> None:
    assert RUN_COMMAND not in builtin_tools()
    assert RUN_COMMAND in builtin_tools(commands=True)


def test_pin_fact_goes_through_the_callback(workspace: Path) -> None:
    pins: list[str] = []
    message, is_error = run(tools(workspace, pins), "pin_fact", text="Refund 847.20 by 2026-04-13")
    assert not is_error
    assert pins == ["Refund 847.20 by 2026-04-13"]
    assert "waiting for the user's approval" in message


def test_no_workspace_is_a_clear_error() -> None:
    message, is_error = run(ToolRegistry(builtin_tools()), "read_file", path="a.txt")
    assert is_error
    assert "no workspace folder" in message


def test_a_hung_python_tool_is_abandoned_at_its_timeout() -> None:
    gate = threading.Event()
    slow = Tool("slow", "", {"type": "object"}, lambda args, ctx: str(gate.wait(5)), timeout=0.2)
    started = time.monotonic()
    outcome = ToolRegistry([slow]).run(call("slow"), CancelToken())
    gate.set()
    assert outcome.is_error
    assert "timed out after 0.2 s" in str(outcome.content)
    assert time.monotonic() - started < 2


def _alive(marker: str) -> bool:
    found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    return bool(found.stdout.strip())


def _gone(marker: str, within_s: float = 2.0) -> bool:
    """True once no process matches `marker` (the kernel reaps killed ones at once; the
    deadline only bounds a failure)."""
    deadline = time.monotonic() + within_s
    while _alive(marker):
        if time.monotonic() > deadline:
            return False
    return True


def test_a_command_that_hangs_ends_at_its_timeout_with_nothing_left(tmp_path: Path) -> None:
    started = time.monotonic()
    result = run_command("sleep 41.11 & sleep 41.12", tmp_path, CancelToken(), timeout=1)
    assert result.timed_out
    assert result.exit_code is None
    assert time.monotonic() - started < 1 + 2
    assert _gone("sleep 41.1")


def test_a_command_reading_stdin_gets_eof_at_once(tmp_path: Path) -> None:
    started = time.monotonic()
    result = run_command(
        'read line; echo "got [$line] rc=$?"; cat', tmp_path, CancelToken(), timeout=5
    )
    assert result.output == "got [] rc=1\n"
    assert time.monotonic() - started < 2


def test_cancel_kills_the_whole_process_group(tmp_path: Path) -> None:
    cancel = CancelToken()
    threading.Timer(0.3, cancel.cancel).start()
    started = time.monotonic()
    with pytest.raises(Cancelled):
        run_command("(sleep 42.21 &); sleep 42.22", tmp_path, cancel, timeout=30)
    assert time.monotonic() - started < 2
    assert _gone("sleep 42.2")


def test_secrets_never_reach_a_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-canary-123")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_canary")
    monkeypatch.setenv("DATABASE_URL", "postgres://canary@db")  # a secret by any other name
    monkeypatch.setenv("GH_PAT", "canary-pat")
    monkeypatch.setenv("VIRTUAL_ENV", "/opt/venv")
    monkeypatch.setenv("LC_TIME", "de_DE.UTF-8")
    result = run_command("env", tmp_path, CancelToken(), timeout=5)
    assert "canary" not in result.output
    assert "PATH=" in result.output
    assert "LC_TIME=de_DE.UTF-8" in result.output
    assert "VIRTUAL_ENV" not in result.output  # only when the user names it
    named = run_command(
        "env", tmp_path, CancelToken(), timeout=5, extra_env=("VIRTUAL_ENV", "ANTHROPIC_API_KEY")
    )
    assert "VIRTUAL_ENV=/opt/venv" in named.output
    assert "canary" not in named.output  # never the key, even when named
    assert "ANTHROPIC_API_KEY" not in safe_environment(extra=["ANTHROPIC_API_KEY"])


def test_output_is_capped_with_a_marker(tmp_path: Path) -> None:
    result = run_command("yes 0123456789 | head -c 200000", tmp_path, CancelToken(), timeout=10)
    assert len(result.output) < OUTPUT_CAP + 200
    assert "characters cut by ContextDesk" in result.output
    assert cap_output("short") == "short"
