"""Another app's history, imported whole: Claude's and ChatGPT's conversations (a file,
shards in a zip), every branch a version, the branch the source showed shown, what could
not come said by JSON path, each chat's next request priced — and a second import of the
same export adds nothing. The sample files (tests/data/exports) are made from the formats
as issue 35 documents them, never from anyone's data."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import jsonschema

from desktop_app.api.simulator import SimulatorServer
from desktop_app.chats import Engine
from desktop_app.core.blocks import ImageBlock

EXPORTS = Path(__file__).resolve().parents[1] / "data" / "exports"
SCHEMA = "contextdesk.chat.schema.json"


def imported(cli: Any, path: Path, *more: str) -> dict[str, Any]:
    return dict(json.loads(cli("import", str(path), "--json", *more)))


def test_a_claude_export_keeps_its_branches_attachments_and_artifacts(
    cli: Any, sim: SimulatorServer
) -> None:
    out = imported(cli, EXPORTS / "claude_conversations.json")
    assert out["source"] == "claude"
    refund, haiku = out["chats"]
    assert refund["title"] == "Refund for order 88213"
    assert (refund["messages"], refund["versions"]) == (5, 1)  # m2 and m3: two versions
    assert refund["next_request_tokens"] > 0
    assert refund["next_request_cost"] > 0  # Settings' model has a price
    report = "\n".join(refund["report"])
    assert "files.0: photo.jpg is not in the export" in report
    assert "thinking without a signature" in report
    assert haiku["title"] == "What is a haiku?"  # untitled: named after its first question
    assert haiku["messages"] == 2  # an old export: the array is the chain

    engine = Engine.open(cli.home)
    try:
        chat = engine.find(refund["id"])
        shown = chat.messages()
        assert [m.role for m in shown] == ["user", "assistant", "user", "assistant"]
        assert "Invoice 88213: 847.20 EUR" in shown[0].text  # the attachment's text
        assert shown[1].text.startswith("It depends")  # the newest branch is shown
        assert "please refund order 88213" in shown[3].text  # the artifact, as a code block
        versions = chat.branches.points()
        assert any(len(v.ids) == 2 for v in versions.values())
        assert chat.model == engine.settings.model
    finally:
        engine.close()
    # The thinking it could not send again is kept with the chat, unshown and unsent.
    hidden = json.loads(cli("export", refund["id"]))["imported_hidden"]
    assert ("thinking", "Check the policy.") in [(h["kind"], h["text"]) for h in hidden]
    # The next request is one the API takes: sent to the strict stand-in.
    cli("send", refund["id"], "Thanks!")
    assert sim.refused() == []
    assert "Check the policy" not in json.dumps(sim.message_requests()[-1].body)

    again = imported(cli, EXPORTS / "claude_conversations.json")
    assert again["chats"] == []
    assert again["skipped"] == 2


def test_chatgpt_shards_in_a_zip_show_the_current_node_s_branch(
    cli: Any, sim: SimulatorServer, tmp_path: Path
) -> None:
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for n in ("000", "001"):
            out.write(EXPORTS / f"chatgpt_conversations-{n}.json", f"conversations-{n}.json")
        out.writestr("chat.html", "<html></html>")  # (the rest of an export: passed over)
        out.writestr("file-abc123-receipt.png", _png())  # the image a question points to
    result = imported(cli, archive, "--model", "claude-haiku-5-5")
    assert result["source"] == "chatgpt"
    trip, haiku = result["chats"]
    assert trip["model"] == "claude-haiku-5-5"
    assert (trip["messages"], trip["versions"]) == (6, 2)  # the edited question, its answer
    report = "\n".join(trip["report"])
    assert "file-abc123" not in report  # found in the zip
    assert "2 system, tool or reasoning message(s) ChatGPT does not show: kept" in report
    assert (trip["hidden"], haiku["messages"]) == (2, 2)

    engine = Engine.open(cli.home)
    try:
        shown = engine.find(trip["id"]).messages()
        assert any(isinstance(b, ImageBlock) for b in shown[2].blocks)  # with its image
        assert [m.text for m in shown] == [
            "Plan three days in Oslo.",
            "Day 1: the fjord. Day 2: museums. Day 3: the opera.",
            "What will it cost?",
            "About 4,500 NOK a day.",
        ]
    finally:
        engine.close()
    assert imported(cli, archive)["skipped"] == 2
    # The code ChatGPT ran and its output were not shown there: kept with the chat,
    # unshown and unsent, after the question they answered, and written in its export.
    exported = json.loads(cli("export", trip["id"]))
    code, output = exported["imported_hidden"]
    assert (code["kind"], code["role"], code["text"]) == (
        "code → python",
        "assistant",
        "print(3*1500)",
    )
    assert (output["kind"], output["text"]) == ("execution_output", "4500")
    question = next(m for m in exported["messages"] if "What will it cost?" in str(m["content"]))
    assert code["after"] == output["after"] == question["id"]
    assert "print(3*1500)" not in json.dumps(exported["request"])  # never sent
    schema = json.loads((Path(__file__).resolve().parents[2] / "resources" / SCHEMA).read_text())
    jsonschema.validate(exported, schema)  # with its suggested facts and what it kept
    # Our own export brings them back with the chat.
    again = tmp_path / "trip.json"
    again.write_text(json.dumps(exported))
    copy = json.loads(cli("import", str(again), "--json"))
    back = json.loads(cli("export", copy["id"]))
    assert [h["text"] for h in back["imported_hidden"]] == ["print(3*1500)", "4500"]
    shown_again = next(m for m in back["messages"] if "What will it cost?" in str(m["content"]))
    assert back["imported_hidden"][0]["after"] == shown_again["id"]


def test_an_image_not_in_the_export_is_named_in_the_report(cli: Any) -> None:
    (trip,) = imported(cli, EXPORTS / "chatgpt_conversations-000.json")["chats"]
    assert any("file-service://file-abc123 is not in the export" in n for n in trip["report"])


def _png() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (8, 8), "white").save(out, "PNG")
    return out.getvalue()


def test_a_broken_export_is_refused_whole(cli: Any, tmp_path: Path) -> None:
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.write(EXPORTS / "chatgpt_conversations-000.json", "conversations-000.json")
        out.writestr("conversations-001.json", "[{not json")
    refusal = cli("import", str(archive), status=1)
    assert "conversations-001.json cannot be read as JSON" in refusal
    assert "Nothing was imported" in refusal
    assert json.loads(cli("chat", "list", "--json")) == []


def test_open_webui_librechat_and_sillytavern_chats_keep_their_versions(
    cli: Any, sim: SimulatorServer
) -> None:
    owui = imported(cli, EXPORTS / "openwebui_chats.json")
    (sourdough,) = owui["chats"]
    assert owui["source"] == "openwebui"
    assert (sourdough["messages"], sourdough["versions"]) == (5, 1)
    librechat = imported(cli, EXPORTS / "librechat_conversation.json")
    (regex,) = librechat["chats"]
    assert (regex["messages"], regex["versions"]) == (3, 1)
    tavern = imported(cli, EXPORTS / "sillytavern_chat.jsonl")
    (voyage,) = tavern["chats"]
    assert tavern["source"] == "sillytavern"
    assert voyage["title"] == "Captain Vega (2026-1-5@10h00m00s)"
    assert voyage["versions"] == 1  # "To Mars.", the swipe not chosen

    engine = Engine.open(cli.home)
    try:
        assert [m.text for m in engine.find(sourdough["id"]).messages()][-1] == "12 to 48 hours."
        assert engine.find(regex["id"]).messages()[-1].text.startswith("Use ^")  # the newest
        shown = [m.text for m in engine.find(voyage["id"]).messages()]
        assert "To the Kepler belt." in shown  # the chosen swipe
        assert "To Mars." not in shown
        assert shown[-1] == "How long?"
    finally:
        engine.close()
    cli("send", voyage["id"], "Thanks, captain.")  # a greeting first: repaired for the API
    cli("send", regex["id"], "And with times?")
    assert sim.refused() == []
    assert imported(cli, EXPORTS / "sillytavern_chat.jsonl")["skipped"] == 1


def test_a_claude_zip_brings_its_projects_with_their_chats(
    cli: Any, sim: SimulatorServer, tmp_path: Path
) -> None:
    conversations = json.loads((EXPORTS / "claude_conversations.json").read_text())
    conversations[0]["project_uuid"] = "p-0001"
    projects = [
        {
            "uuid": "p-0001",
            "name": "Shop support",
            "description": "",
            "prompt_template": "Answer as the shop's support team, in the customer's language.",
            "docs": [{"uuid": "d1", "filename": "refunds.md", "content": "Refunds: 30 days."}],
        },
        {"uuid": "p-0002", "name": "Unused", "prompt_template": "", "docs": []},
    ]
    archive = tmp_path / "data-2026-03-05.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("conversations.json", json.dumps(conversations))
        out.writestr("projects.json", json.dumps(projects))
        out.writestr("users.json", "[]")
    (refund, haiku) = imported(cli, archive)["chats"]
    shown = json.loads(cli("project", "show", "Shop support", "--json"))
    assert shown["instructions"].startswith("Answer as the shop's support team")
    assert [f["name"] for f in shown["files"]] == ["refunds.md"]
    engine = Engine.open(cli.home)
    try:
        assert engine.find(refund["id"]).info.project_id == engine.projects.find("Shop support").id
        assert engine.find(haiku["id"]).info.project_id is None
        assert [p.name for p in engine.projects.all()] == ["Shop support"]  # none unused
    finally:
        engine.close()


def chatgpt_export(count: int) -> list[dict[str, Any]]:
    """`count` small ChatGPT conversations, as the export has them."""
    out = []
    for n in range(count):
        mapping = {
            "root": {"id": "root", "message": None, "parent": None, "children": [f"u{n}"]},
            f"u{n}": {
                "id": f"u{n}",
                "parent": "root",
                "children": [f"a{n}"],
                "message": {
                    "author": {"role": "user"},
                    "content": {"content_type": "text", "parts": [f"Question {n}?"]},
                    "create_time": 1767225600 + n,
                },
            },
            f"a{n}": {
                "id": f"a{n}",
                "parent": f"u{n}",
                "children": [],
                "message": {
                    "author": {"role": "assistant"},
                    "content": {"content_type": "text", "parts": [f"Answer {n}."]},
                    "create_time": 1767225601 + n,
                },
            },
        }
        out.append(
            {"id": f"conv-{n}", "title": f"Chat {n}", "mapping": mapping, "current_node": f"a{n}"}
        )
    return out


def test_an_import_says_how_far_it_is_and_stops_between_chats(
    tmp_path: Path, monkeypatch: Any
) -> None:
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(chatgpt_export(12)))
    engine = Engine.open(tmp_path / "home")
    try:
        heard: list[tuple[str, float]] = []

        def told(words: str, share: float) -> bool:
            heard.append((words, share))
            return not words.startswith("Importing 6 ")  # Stop, as the sixth begins

        batch = engine.import_path(export, progress=told)
        assert batch.cancelled
        assert len(batch.chats) == 5  # each stored whole; the rest not at all
        assert len(engine.store.list_chats()) == 5
        assert heard[0][0].startswith("Reading conversations.json")
        assert ("Importing 1 of 12 chats…", 0.0) in heard
        rest = engine.import_path(export)  # again: the five are not made twice
        assert (len(rest.chats), rest.skipped) == (7, 5)
    finally:
        engine.close()


def test_the_command_line_shows_its_progress_on_stderr(
    tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    from desktop_app.app import main

    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(chatgpt_export(3)))
    assert main(["--home", str(tmp_path / "home"), "import", str(export)]) == 0
    out, err = capsys.readouterr()
    assert len(out.split()) == 3  # the three new ids
    assert "Reading conversations.json… 100%" in err
    assert "Importing 1 of 3 chats… 0%" in err
    assert "Imported 3 chat(s) from ChatGPT" in err


def _system_text(body: dict[str, Any]) -> str:
    system = body.get("system") or ""
    return system if isinstance(system, str) else " ".join(b["text"] for b in system)


def test_chatgpt_custom_instructions_wait_as_suggested_facts(
    cli: Any, sim: SimulatorServer
) -> None:
    (trip,) = imported(cli, EXPORTS / "chatgpt_conversations-000.json")["chats"]
    facts = json.loads(cli("facts", trip["id"], "--json"))
    assert [(f["text"], f["source"], f["pending"]) for f in facts] == [
        ("About me: I live in Bergen and travel by train.", "import", True),
        ("How to respond: Give prices in NOK.", "import", True),
    ]
    assert "suggested by an import, not yet accepted" in cli("facts", trip["id"])
    cli("send", trip["id"], "And by train?")
    assert "Bergen" not in _system_text(sim.message_requests()[-1].body)  # not sent yet
    cli("accept", trip["id"], facts[0]["id"])
    assert "Rejected: How to respond" in cli("unpin", trip["id"], facts[1]["id"])
    cli("send", trip["id"], "Which line?")
    sent = _system_text(sim.message_requests()[-1].body)
    assert "About me: I live in Bergen and travel by train." in sent  # verbatim, once accepted
    assert "Give prices in NOK" not in sent
    assert sim.refused() == []


def _claude_zip(path: Path, conversations: list[Any], **files: Any) -> Path:
    with zipfile.ZipFile(path, "w") as out:
        out.writestr("conversations.json", json.dumps(conversations))
        for name, data in files.items():
            out.writestr(f"{name}.json", json.dumps(data))
    return path


MEMORY = (
    "**Work context**\n\nRuns a small online shop selling bicycle parts.\n\n"
    "**Personal context**\n\n- Lives in Lyon\n- Prefers answers in French"
)


def test_claude_memories_become_suggestions_in_the_project_and_the_newest_chat(
    cli: Any, sim: SimulatorServer, tmp_path: Path
) -> None:
    conversations = json.loads((EXPORTS / "claude_conversations.json").read_text())
    conversations[0]["project_uuid"] = "p-0001"
    # Several numbered zips of one export, given together: the projects and the memory
    # are in the first, the conversations that name them in the second.
    first = _claude_zip(
        tmp_path / "data-batch-0000.zip",
        [],
        projects=[{"uuid": "p-0001", "name": "Shop support", "prompt_template": "", "docs": []}],
        memories=[
            {
                "conversations_memory": MEMORY,
                "project_memories": {"p-0001": "Refunds take 30 days."},
                "account_uuid": "acct",
            }
        ],
    )
    second = _claude_zip(tmp_path / "data-batch-0001.zip", conversations)
    out = json.loads(cli("import", str(first), str(second), "--json"))
    refund, haiku = out["chats"]
    assert out["memories"] == [
        "Project “Shop support”: 1 suggested fact from its memory",
        "Claude's memory: 3 suggested facts in “What is a haiku?”",
    ]
    shown = json.loads(cli("project", "show", "Shop support", "--json"))
    assert [(f["text"], f["pending"]) for f in shown["facts"]] == [("Refunds take 30 days.", True)]
    facts = json.loads(cli("facts", haiku["id"], "--json"))
    assert [f["text"] for f in facts if f["pending"]] == [
        "Work context: Runs a small online shop selling bicycle parts.",
        "Personal context: Lives in Lyon",
        "Personal context: Prefers answers in French",
    ]
    assert json.loads(cli("facts", refund["id"], "--json")) == []  # (a project's chat)

    cli("send", refund["id"], "A customer asks about a refund.")
    assert "Refunds take 30 days" not in _system_text(sim.message_requests()[-1].body)
    cli("project", "accept", "Shop support", shown["facts"][0]["id"])
    cli("send", refund["id"], "And another?")
    assert "Refunds take 30 days." in _system_text(sim.message_requests()[-1].body)
    assert sim.refused() == []

    again = json.loads(cli("import", str(first), str(second), "--json"))
    assert (again["chats"], again["skipped"], again["memories"]) == ([], 2, [])
    shown = json.loads(cli("project", "show", "Shop support", "--json"))
    assert [(f["text"], f["pending"]) for f in shown["facts"]] == [("Refunds take 30 days.", False)]


def test_on_a_terminal_the_progress_line_is_ended_before_an_error(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Redrawn on one line on a terminal; a refusal then starts a line of its own (it
    was printed after "Reading bad.json… 100%", on the same line)."""
    import io
    import sys

    from desktop_app.app import main

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a chat"}')
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["--home", str(tmp_path / "home"), "import", str(bad)]) != 0
    said = terminal.getvalue()
    assert "\rReading bad.json… 100%\n" in said
    assert said.rstrip("\n").split("\n")[-1].strip()  # the error, on a line of its own
