"""Real exports' odd corners (found by building samples from the formats' public fixtures —
LibreChat's importer fixtures, the convoviz ChatGPT spec — and importing them): each is
imported as the source showed it, and what is not shown is kept unshown, not lost."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from desktop_app.api.simulator import SimulatorServer
from desktop_app.chats import Engine
from tests.integration.test_import_exports import imported


def shown(cli: Any, chat_id: str) -> list[str]:
    engine = Engine.open(cli.home)
    try:
        return [m.text for m in engine.find(chat_id).messages()]
    finally:
        engine.close()


def _node(node_id: str, parent: str | None, role: str, content: dict[str, Any], **more: Any) -> Any:
    message = {"id": node_id, "author": {"role": role}, "content": content, **more}
    return {"id": node_id, "parent": parent, "children": [], "message": message}


def test_a_chatgpt_answer_regenerated_after_a_tool_call_is_a_version(
    cli: Any, sim: SimulatorServer, tmp_path: Path
) -> None:
    text = lambda words: {"content_type": "text", "parts": [words]}  # noqa: E731
    mapping = {
        "u": _node("u", None, "user", text("What is 2**100?")),
        "a0": _node("a0", "u", "assistant", text("I'll compute it.")),
        "code": _node(
            "code",
            "a0",
            "assistant",
            {"content_type": "code", "text": "2**100"},
            recipient="python",
        ),
        "out": _node("out", "code", "tool", {"content_type": "execution_output", "text": "1267…"}),
        "a1": _node("a1", "out", "assistant", text("It is 1267650600228229401496703205376.")),
        "a1b": _node("a1b", "out", "assistant", text("2**100 = 1,267,650,600,228,229,401,…")),
    }
    export = tmp_path / "conversations.json"
    # The first conversation lost its tree (a damaged entry): the format is still known.
    export.write_text(
        json.dumps(
            [
                {"id": "broken", "title": "Damaged"},
                {"id": "c1", "title": "Big power", "mapping": mapping, "current_node": "a1b"},
            ]
        )
    )
    out = imported(cli, export)
    assert out["source"] == "chatgpt"
    (chat,) = out["chats"]
    assert (chat["messages"], chat["versions"], chat["hidden"]) == (3, 1, 2)
    assert shown(cli, chat["id"]) == [
        "What is 2**100?",
        "I'll compute it.2**100 = 1,267,650,600,228,229,401,…",  # the branch shown there
    ]
    cli("send", chat["id"], "Thanks")
    assert sim.refused() == []


def test_a_librechat_tree_under_messages_keeps_every_branch(cli: Any, tmp_path: Path) -> None:
    times = {"u1": 1, "a1": 2, "a1b": 3, "u2": 4}  # (written in this order)

    def message(mid: str, parent: str, text: str, user: bool, *children: Any) -> Any:
        return {
            "messageId": mid,
            "parentMessageId": parent,
            "text": text,
            "isCreatedByUser": user,
            "createdAt": f"2026-01-01T10:00:0{times[mid]}Z",
            "children": list(children),
        }

    tree = [
        message(
            "u1",
            "00000000-0000-0000-0000-000000000000",
            "Name a colour.",
            True,
            message("a1", "u1", "Red.", False),
            message("a1b", "u1", "Blue.", False, message("u2", "a1b", "Why blue?", True)),
        )
    ]
    export = tmp_path / "librechat.json"
    export.write_text(
        json.dumps(
            {
                "conversationId": "lc-1",
                "title": "Colours",
                "options": {"model": "gpt-4o"},
                "recursive": True,
                "messages": tree,
            }
        )
    )
    (chat,) = imported(cli, export)["chats"]
    assert (chat["messages"], chat["versions"], chat["source_model"]) == (4, 1, "gpt-4o")
    assert shown(cli, chat["id"]) == ["Name a colour.", "Blue.", "Why blue?"]


def test_sillytavern_group_chats_are_told_apart_and_an_empty_swipe_counts(
    cli: Any, tmp_path: Path
) -> None:
    for n in (0, 1):  # a group chat's header names no character and no date
        lines = [
            {"chat_metadata": {"note_prompt": ""}},
            {"name": "You", "is_user": True, "mes": f"Hello group {n}", "send_date": 1767261600000},
            {
                "name": "Seraphina",
                "is_user": False,
                "mes": "In the Eldergrove…",
                "swipes": ["You are in my forest.", "", "In the Eldergrove…"],
                "swipe_id": 2,
                "send_date": "February 14, 2026 7:30pm",
                "extra": {"reasoning": "She should welcome them."},
            },
        ]
        (tmp_path / f"group {n}.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    first = imported(cli, tmp_path / "group 0.jsonl")["chats"]
    second = imported(cli, tmp_path / "group 1.jsonl")["chats"]
    assert len(first) == len(second) == 1
    chat = first[0]
    assert (chat["messages"], chat["versions"], chat["hidden"]) == (3, 1, 1)
    assert shown(cli, chat["id"]) == ["Hello group 0", "In the Eldergrove…"]
    exported = json.loads(cli("export", chat["id"]))
    assert exported["messages"][0]["created_at"] == 1767261600.0  # its own time, not the import's


def test_claude_s_untimed_message_and_an_artifact_update(cli: Any, tmp_path: Path) -> None:
    root = "00000000-0000-4000-8000-000000000000"

    def message(uuid: str, parent: str, sender: str, when: str | None, *content: Any) -> Any:
        return {
            "uuid": uuid,
            "parent_message_uuid": parent,
            "sender": sender,
            "created_at": when,
            "text": "",
            "content": list(content),
        }

    def text(words: str) -> Any:
        return {"type": "text", "text": words}

    update = {
        "type": "tool_use",
        "name": "artifacts",
        "input": {
            "command": "update",
            "id": "formula",
            "title": "SUMIFS",
            "old_str": "=SUMIFS(A:A,B:B,1)",
            "new_str": '=SUMIFS(A:A,B:B,"1")',
        },
    }
    conversation = {
        "uuid": "conv-1",
        "name": "SUMIFS returns 0",
        "chat_messages": [
            message("q", root, "human", "2026-03-01T10:00:00Z", text("Why 0?")),
            message("a-untimed", "q", "assistant", None, text("An answer without a time.")),
            message("a", "q", "assistant", "2026-03-01T10:01:00Z", text("Quote the 1."), update),
        ],
    }
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps([conversation]))
    (chat,) = imported(cli, export)["chats"]
    assert chat["versions"] == 1
    answer = shown(cli, chat["id"])[-1]  # the timed branch: the newest the export knows
    assert answer.startswith("Quote the 1.")
    assert "**SUMIFS** (updated)" in answer
    assert '=SUMIFS(A:A,B:B,"1")' in answer


def test_open_webui_reasoning_is_kept_unshown_and_not_sent(
    cli: Any, sim: SimulatorServer, tmp_path: Path
) -> None:
    reply = (
        '<details type="reasoning" done="true" duration="2">\n<summary>Thought for 2 seconds'
        "</summary>\n&gt; Flour, water, yeast.\n</details>\nUse 500 g flour and 325 g water."
    )
    messages = {
        "m1": {
            "id": "m1",
            "parentId": None,
            "childrenIds": ["m2"],
            "role": "user",
            "content": "Pizza dough?",
            "timestamp": 1767261600,
            "files": [{"type": "image", "name": "kitchen.png"}],
        },
        "m2": {
            "id": "m2",
            "parentId": "m1",
            "childrenIds": [],
            "role": "assistant",
            "content": reply,
            "model": "qwen3",
            "timestamp": 1767261601,
        },
    }
    export = tmp_path / "chats.json"
    export.write_text(
        json.dumps(
            [
                {
                    "id": "w1",
                    "title": "Pizza dough",
                    "chat": {"history": {"currentId": "m2", "messages": messages}},
                }
            ]
        )
    )
    (chat,) = imported(cli, export)["chats"]
    assert shown(cli, chat["id"])[-1] == "Use 500 g flour and 325 g water."
    assert any("kitchen.png is not brought" in line for line in chat["report"])
    (kept,) = json.loads(cli("export", chat["id"]))["imported_hidden"]
    assert (kept["kind"], kept["text"]) == ("reasoning", "&gt; Flour, water, yeast.")
    cli("send", chat["id"], "Thanks")
    assert "Flour, water" not in json.dumps(sim.message_requests()[-1].body)


def test_a_damaged_zip_and_a_broken_line_are_named(cli: Any, tmp_path: Path) -> None:
    whole = tmp_path / "whole.zip"
    with zipfile.ZipFile(whole, "w") as archive:
        archive.writestr("conversations.json", json.dumps([{"id": "c", "mapping": {}}]) * 50)
    cut = tmp_path / "export.zip"
    cut.write_bytes(whole.read_bytes()[:200])
    said = cli("import", str(cut), status=1)
    assert "Damaged zip" in said
    assert "download the export again" in said
    lines = tmp_path / "chat.jsonl"
    lines.write_text('{"user_name": "You"}\n{"name": "You", "is_user": true, "mes": "Hi"}\n{"na')
    assert "chat.jsonl, line 3, cannot be read as JSON" in cli("import", str(lines), status=1)
