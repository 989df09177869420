"""`contextdesk check`: validate a history file, show and write its repair."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop_app.app import main
from desktop_app.chats.checking import check_file
from desktop_app.core.errors import ContextDeskError, ErrorKind

BROKEN = {
    "model": "claude-x",
    "max_tokens": 100,
    "messages": [
        {"role": "user", "content": "rename the files"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "run", "input": {}}],
        },
        {"role": "user", "content": "done?"},
    ],
}


def test_a_valid_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "ok.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    assert main(["check", str(path)]) == 0
    assert "valid — 1 messages" in capsys.readouterr().out


def test_a_broken_request_body_is_explained_and_fixed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, out = tmp_path / "broken.json", tmp_path / "fixed.json"
    path.write_text(json.dumps(BROKEN))
    assert main(["check", str(path), "--fix", str(out)]) == 1
    printed = capsys.readouterr().out
    assert (
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1"
        in printed
    )
    assert "added an 'interrupted' error result for tool call toolu_1" in printed
    fixed = json.loads(out.read_text())
    assert fixed["model"] == "claude-x"
    assert fixed["messages"][2]["content"][0]["type"] == "tool_result"
    assert fixed["messages"][2]["content"][1] == {"type": "text", "text": "done?"}
    assert main(["check", str(out)]) == 0
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp file left


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "Not JSON"),
        ('{"model": "m", "messages": 5}', "messages: Input should be a valid list"),
    ],
)
def test_unreadable_input_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, expected: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    assert main(["check", str(path)]) == 2
    assert expected in capsys.readouterr().err


def test_a_file_that_is_no_json_is_a_format_error(tmp_path: Path) -> None:
    """Not a conversation at all, as a history of the wrong shape is (`format`)."""
    path = tmp_path / "bad.json"
    path.write_text("{not json")
    with pytest.raises(ContextDeskError, match="not valid JSON") as raised:
        check_file(path)
    assert raised.value.kind is ErrorKind.FORMAT


def test_shape_errors_are_repaired_and_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What other tools write: a system message inside `messages`, a role alias, a tool
    call's input as a JSON string (seen in LangChain and LiteLLM exports)."""
    path = tmp_path / "exported.json"
    path.write_text(
        json.dumps(
            {
                "model": "claude-sonnet-4-5",
                "max_tokens": 1024,
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "human", "content": "weather?"},
                    {
                        "role": "assistant",
                        "content": [
                            {"type": "tool_use", "id": "toolu_1", "name": "w", "input": '{"c": 1}'}
                        ],
                    },
                    {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sun"}
                        ],
                    },
                ],
            }
        )
    )
    out = tmp_path / "fixed.json"
    assert main(["check", str(path), "--fix", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "messages.0: moved a system message into the system prompt" in printed
    assert "messages.1: read the role 'human' as 'user'" in printed
    assert "messages.2.content.0.input: parsed the input from its JSON string" in printed
    fixed = json.loads(out.read_text())
    assert fixed["system"] == "Be brief."
    assert fixed["messages"][1]["content"][0]["input"] == {"c": 1}
    assert main(["check", str(out)]) == 0


def test_a_history_whose_only_message_is_empty_is_not_written_invalid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "empty.json"
    path.write_text(
        '{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": ""}]}'
    )
    out = tmp_path / "fixed.json"
    assert main(["check", str(path), "--fix", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "messages.0: all messages must have non-empty content" in printed
    assert "messages: at least one message is required" in printed  # what cannot be fixed
    assert "Nothing was written" in printed
    assert not out.exists()


def test_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path / "nope.json")]) == 2
    assert "Cannot read the file" in capsys.readouterr().err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--version"])
    assert caught.value.code == 0
    assert capsys.readouterr().out.startswith("ContextDesk 0.1.0")
