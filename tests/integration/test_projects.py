"""Projects through the command line and a strict stand-in server (the simulator): the
project's layers reach exactly the chats of the project, verbatim, in the documented
order; a chat's switches change only its own requests; knowledge over its budget is never
sent in part without the user's choice; moving a chat changes its next request and
nothing of its transcript; an export comes back whole."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

from desktop_app.api.simulator import Reply, SimulatorServer
from tests.fakes.pdf import make_pdf

MODEL = "claude-haiku-4-5"
FACT = "Acme's refund window is 30 days; order #88213 is within it."
INSTRUCTIONS = "Answer as Acme's support team, in two sentences at most."
RETURNS = "# Returns\nItems may be returned within 30 days of delivery.\n"


def system_text(body: dict[str, Any]) -> str:
    system = body.get("system") or []
    return "\n".join(p["text"] for p in system) if isinstance(system, list) else system


def sent_body(cli: Any, sim: SimulatorServer, chat: str, text: str) -> dict[str, Any]:
    shown = json.loads(cli("context", chat, "--request", "--draft", text))
    cli("send", chat, text)
    body: dict[str, Any] = sim.message_requests()[-1].body
    assert {k: v for k, v in body.items() if k != "stream"} == shown  # shown = sent
    return body


def test_project_layers_reach_exactly_its_chats_in_order(
    cli: Any, sim: SimulatorServer, tmp_path: Path
) -> None:
    project = cli("project", "new", "Acme support", "--instructions", INSTRUCTIONS).strip()
    cli("project", "pin", "Acme support", FACT)
    (tmp_path / "returns.md").write_text(RETURNS)
    cli("project", "add-file", project[:12], str(tmp_path / "returns.md"))
    inside = [
        cli(
            "chat", "new", "--project", "Acme support", "--model", MODEL, "--system", f"Chat {n}."
        ).strip()
        for n in range(3)
    ]
    outside = cli("chat", "new", "--model", MODEL, "--system", "Outside.").strip()
    cli("pin", inside[0], "This customer is called Dana.")

    for chat in inside:
        body = sent_body(cli, sim, chat, "When can I return it?")
        text = system_text(body)
        order = [text.index(INSTRUCTIONS), text.index(FACT), text.index("Items may be returned")]
        order.append(text.index("Chat "))
        if chat == inside[0]:
            order.append(text.index("This customer is called Dana."))
        assert order == sorted(order)  # instructions, facts, knowledge, chat system, chat facts
        # One stable prefix: the project's part is the first system block (its cache
        # breakpoint, for servers that take one: tests/unit/test_projection.py).
        assert body["system"][0]["text"].startswith("# Project: Acme support")
    first_parts = {json.dumps(sent_body(cli, sim, c, "again")["system"][0]) for c in inside}
    assert len(first_parts) == 1  # byte for byte the same in every chat of the project
    body = sent_body(cli, sim, outside, "When can I return it?")
    for layer in (INSTRUCTIONS, FACT, "Items may be returned"):
        assert layer not in json.dumps(body)

    # The request's numbers per layer: what `context --json` reports is what was sent.
    sections = json.loads(cli("context", inside[1], "--json"))["sections"]
    assert sections["project instructions"] > 0
    assert sections["project facts"] > 0
    assert sections["project knowledge"] > 0
    # The project's facts say which chat's request carried them last.
    shown = cli("project", "show", project)
    assert "last sent: chat" in shown
    assert "Read from the prompt cache across its chats:" in shown
    as_json = json.loads(cli("project", "show", project, "--json"))
    reads = sum(
        r["usage"]["cache_read_input_tokens"]
        for c in inside
        for r in json.loads(cli("requests", c, "--json"))
    )
    assert as_json["cache_read_tokens"] == reads


def test_a_chat_s_layer_switches_change_only_its_own_requests(
    cli: Any, sim: SimulatorServer
) -> None:
    cli("project", "new", "P", "--instructions", INSTRUCTIONS)
    cli("project", "pin", "P", FACT)
    a = cli("chat", "new", "--project", "P", "--model", MODEL).strip()
    b = cli("chat", "new", "--project", "P", "--model", MODEL).strip()
    cli("chat", "set", a, "project_layers_off=facts")
    text_a = system_text(sent_body(cli, sim, a, "hi"))
    text_b = system_text(sent_body(cli, sim, b, "hi"))
    assert FACT not in text_a
    assert INSTRUCTIONS in text_a
    assert FACT in text_b


def test_knowledge_over_its_budget_is_never_sent_in_part(
    cli: Any, sim: SimulatorServer, tmp_path: Path
) -> None:
    project = cli("project", "new", "Docs").strip()
    for n in range(3):
        (tmp_path / f"part{n}.md").write_text(f"Part {n}: " + "lorem ipsum dolor " * 600)
        cli("project", "add-file", project, str(tmp_path / f"part{n}.md"))
    chat = cli("chat", "new", "--project", project, "--model", MODEL).strip()
    cli("chat", "set", chat, "context_window=8000", "max_tokens=1000")
    text = system_text(sent_body(cli, sim, chat, "hi"))
    assert "Part 0" not in text and "Part 1" not in text and "Part 2" not in text  # noqa: PT018
    # The user chooses one file: exactly it is sent, whole.
    cli("project", "choose", project, "part1.md")
    text = system_text(sent_body(cli, sim, chat, "hi"))
    assert "Part 1: " in text
    assert "Part 0" not in text
    assert "Part 2" not in text
    assert text.count("lorem ipsum dolor") == 600
    # Or the model reads them on demand: only a list, and a tool that reads one whole.
    cli("project", "set", project, "knowledge=on_demand")
    body = sent_body(cli, sim, chat, "hi")
    assert "part2.md" in system_text(body)
    assert "lorem" not in system_text(body)
    assert "read_project_file" in {t["name"] for t in body["tools"]}
    sim.queue(Reply.tools(("toolu_r1", "read_project_file", {"name": "part2.md"})))
    cli("send", chat, "Read part 2.")
    result = sim.message_requests()[-1].body["messages"][-1]["content"][0]
    assert result["tool_use_id"] == "toolu_r1"
    assert "Part 2:" in json.dumps(result["content"])


def test_moving_a_chat_changes_its_next_request_and_nothing_of_its_transcript(
    cli: Any, sim: SimulatorServer
) -> None:
    cli("project", "new", "P", "--instructions", INSTRUCTIONS)
    chat = cli("chat", "new", "--model", MODEL).strip()
    cli("send", chat, "First question.")
    before = json.loads(cli("chat", "show", chat, "--json"))["messages"]
    assert INSTRUCTIONS not in system_text(sent_body(cli, sim, chat, "x"))
    cli("chat", "move", chat, "P")
    assert INSTRUCTIONS in system_text(sent_body(cli, sim, chat, "y"))
    cli("chat", "move", chat, "--none")
    assert INSTRUCTIONS not in system_text(sent_body(cli, sim, chat, "z"))
    after = json.loads(cli("chat", "show", chat, "--json"))["messages"]
    assert after[: len(before)] == before


def test_a_project_export_comes_back_whole(cli: Any, sim: SimulatorServer, tmp_path: Path) -> None:
    project = cli("project", "new", "Acme", "--instructions", INSTRUCTIONS).strip()
    cli("project", "pin", project, FACT)
    (tmp_path / "returns.md").write_text(RETURNS)
    cli("project", "add-file", project, str(tmp_path / "returns.md"))
    cli("project", "set", project, "max_tokens=3000", "keep_recent=3")
    chat = cli("chat", "new", "--project", project, "--model", MODEL).strip()
    cli("send", chat, "Hello.")
    exported = tmp_path / "acme.json"
    cli("project", "export", project, "-o", str(exported))
    data = json.loads(exported.read_text())
    assert data["format"] == "contextdesk.project"
    assert data["version"] == 1
    copy = cli("project", "import", str(exported)).strip()
    shown = json.loads(cli("project", "show", copy, "--json"))
    assert shown["instructions"] == INSTRUCTIONS
    assert [f["text"] for f in shown["facts"]] == [FACT]
    assert [f["name"] for f in shown["files"]] == ["returns.md"]
    assert shown["new_chats_start_with"] == {"keep_recent_turns": 3, "max_tokens": 3000}
    assert len(shown["chats"]) == 1
    again = json.loads(cli("chat", "show", shown["chats"][0], "--json"))
    assert [m["content"] for m in again["messages"]] == [
        m["content"] for m in json.loads(cli("chat", "show", chat, "--json"))["messages"]
    ]
    # A broken export is refused whole: no half-made project is left.
    data["project"]["files"] = [{"name": "x"}]
    exported.write_text(json.dumps(data))
    cli("project", "import", str(exported), status=1)
    # So is one whose defaults no chat could start with (a key as typed, a wrong type).
    data["project"]["files"] = []
    for defaults in ({"thinking": 2048}, {"max_tokens": "3000"}, {"max_tokens": 10**9}):
        data["project"]["defaults"] = defaults
        exported.write_text(json.dumps(data))
        assert "defaults" in cli("project", "import", str(exported), status=1)
    names = [p["name"] for p in json.loads(cli("project", "list", "--json"))]
    assert names == ["Acme", "Acme"]


def test_new_chats_of_a_project_start_with_its_model_and_settings(
    cli: Any, sim: SimulatorServer
) -> None:
    project = cli("project", "new", "Acme").strip()
    cli("project", "set", project, f"model={MODEL}", "max_tokens=6000", "thinking=2048")
    chat = cli("chat", "new", "--project", "Acme").strip()
    body = sent_body(cli, sim, chat, "Hello.")
    assert body["model"] == MODEL
    assert body["max_tokens"] == 6000
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    # A chat outside the project keeps Settings' defaults.
    outside = cli("chat", "new", "--model", MODEL).strip()
    body = sent_body(cli, sim, outside, "Hello.")
    assert body["max_tokens"] != 6000
    assert "thinking" not in body

    # A combination no chat could work with is refused when it is set, not later.
    cli("project", "set", project, "thinking=9000", status=2)
    # An empty value goes back to Settings'; the chat made before keeps its own.
    cli("project", "set", project, "thinking=", "max_tokens=")
    later = cli("chat", "new", "--project", "Acme").strip()
    assert "thinking" not in sent_body(cli, sim, later, "Hello.")
    assert sent_body(cli, sim, chat, "Again.")["max_tokens"] == 6000


def test_a_pdf_knowledge_file_is_sent_as_its_text_page_by_page(
    cli: Any, sim: SimulatorServer, tmp_path: Path
) -> None:
    project = cli("project", "new", "Acme").strip()
    policy = tmp_path / "policy.pdf"
    policy.write_bytes(
        make_pdf(
            ["Returns policy\nItems may be returned within 30 days.", "Refunds (EUR) in 5 days."]
        )
    )
    cli("project", "add-file", project, str(policy))
    chat = cli("chat", "new", "--project", project, "--model", MODEL).strip()
    system = system_text(sent_body(cli, sim, chat, "When do refunds arrive?"))
    assert (
        "--- page 1 ---\nReturns policy\nItems may be returned within 30 days.\n\n"
        "--- page 2 ---\nRefunds (EUR) in 5 days."
    ) in system

    # No text layer, damaged, or not a PDF at all: refused with the reason, nothing added.
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(make_pdf([""]))
    damaged = tmp_path / "damaged.pdf"
    damaged.write_bytes(make_pdf(["Hello"])[:60])
    binary = tmp_path / "photo.bin"
    binary.write_bytes(bytes(range(256)))
    for refused, why in (
        (scan, "no text layer"),
        (damaged, "could not be read"),
        (binary, "UTF-8"),
    ):
        assert why in cli("project", "add-file", project, str(refused), status=2)
    shown = json.loads(cli("project", "show", project, "--json"))
    assert [f["name"] for f in shown["files"]] == ["policy.pdf"]


def test_special_files_are_refused_at_once_and_any_name_is_shown(cli: Any, tmp_path: Path) -> None:
    """A FIFO hung `project add-file` for ever; /dev/zero read until memory ran out; a name
    that is not UTF-8 gave "Something went wrong" (its bytes reached the database)."""
    project = cli("project", "new", "Acme").strip()
    fifo = tmp_path / "notes.md"
    os.mkfifo(fifo)
    assert "Is a directory" in cli("project", "add-file", project, str(tmp_path), status=1)
    for special in (fifo, Path("/dev/zero")):
        assert "is not a regular file" in cli(
            "project", "add-file", project, str(special), status=2
        )
        assert "is not a regular file" in cli("project", "import", str(special), status=2)
    big = tmp_path / "big.md"
    with big.open("wb") as handle:
        handle.truncate(5_000_001)  # sparse: no disk needed
    assert "over the limit of 5 MB" in cli("project", "add-file", project, str(big), status=2)

    odd = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9 notes.md"))  # Latin-1 bytes
    odd.write_text("Refunds within 30 days.", encoding="utf-8")
    cli("project", "add-file", project, str(odd))
    shown = json.loads(cli("project", "show", project, "--json"))
    assert [f["name"] for f in shown["files"]] == ["caf\\xe9 notes.md"]
    missing = Path(os.fsdecode(bytes(tmp_path) + b"/gon\xe9.md"))
    assert "gon\\xe9.md: No such file" in cli(
        "project", "add-file", project, str(missing), status=1
    )


def test_a_pdf_knowledge_file_can_be_a_document_claude_reads_page_by_page(
    cli: Any, sim: SimulatorServer, tmp_path: Path
) -> None:
    """Issue 36, item 2: a project's PDF as a `document` — a scan too, which has no text
    to send otherwise — opening every chat's request, counted against the budget by its
    pages, carried by an export."""
    project = cli("project", "new", "Acme").strip()
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(make_pdf([""] * 3))  # no text layer: as text it is refused
    assert "no text layer" in cli("project", "add-file", project, str(scan), status=2)
    added = cli("project", "add-file", project, str(scan), "--as", "document")
    assert "a document of 3 pages" in added
    (tmp_path / "returns.md").write_text(RETURNS)
    cli("project", "add-file", project, str(tmp_path / "returns.md"))
    chat = cli("chat", "new", "--project", project, "--model", MODEL).strip()
    body = sent_body(cli, sim, chat, "What does the scan show?")
    first = body["messages"][0]["content"]
    assert first[0]["type"] == "document"  # the project's documents open the conversation
    assert base64.b64decode(first[0]["source"]["data"]) == scan.read_bytes()
    assert first[0]["title"] == "scan.pdf"
    assert first[-1]["text"].startswith("What does the scan show?")
    system = system_text(body)
    assert "Items may be returned" in system  # the text file, in the project's part
    assert "as documents opening the conversation: scan.pdf (3 pages)" in system
    sections = json.loads(cli("context", chat, "--json"))["sections"]
    assert sections["project knowledge"] >= 3 * 1_600  # its pages, as the API counts them
    # The next turn carries it again, at the same place: the prefix stays the same.
    again = sent_body(cli, sim, chat, "And the second page?")
    assert again["messages"][0]["content"][0] == first[0]

    # Over the budget, nothing of the knowledge is sent — the document neither.
    cli("chat", "set", chat, "context_window=12000", "max_tokens=1000")
    body = sent_body(cli, sim, chat, "hi")
    assert all(b["type"] != "document" for m in body["messages"] for b in m["content"])

    # An export carries the document; an import brings it back.
    exported = tmp_path / "acme.json"
    cli("project", "export", project, "-o", str(exported))
    copy = cli("project", "import", str(exported)).strip()
    files = json.loads(cli("project", "show", copy, "--json"))["files"]
    assert [f["name"] for f in files] == ["scan.pdf", "returns.md"]
    assert [f["pages"] for f in files] == [3, None]
    data = json.loads(exported.read_text())
    data["project"]["files"][0]["pages"] = 0  # edited by hand: the budget is not fooled
    exported.write_text(json.dumps(data))
    again = cli("project", "import", str(exported)).strip()
    assert json.loads(cli("project", "show", again, "--json"))["files"][0]["pages"] == 3
    whole = data["project"]["files"][0]["document"]
    for broken in (base64.b64encode(b"not a pdf").decode(), whole[: len(whole) // 2]):
        data["project"]["files"][0]["document"] = broken
        exported.write_text(json.dumps(data))
        cli("project", "import", str(exported), status=1)  # refused whole


def test_a_project_document_that_brings_a_chat_over_the_page_limit_is_said_before_sending(
    cli: Any, sim: SimulatorServer, tmp_path: Path
) -> None:
    """The API's limit is the request's pages: a chat that already carries 45 pages, and
    a project's 60-page document added later, make a send that is refused with why —
    before anything is stored — instead of a request the API refuses."""
    project = cli("project", "new", "Acme").strip()
    chat = cli("chat", "new", "--project", project, "--model", MODEL).strip()  # 200k window
    first, second = tmp_path / "a.pdf", tmp_path / "b.pdf"
    first.write_bytes(make_pdf([f"A{n}" for n in range(45)]))
    second.write_bytes(make_pdf([f"B{n}" for n in range(60)]))
    cli("send", chat, "Read a.", "--attach", str(first))
    cli("project", "set", project, "budget=0.5")  # (60 pages fit half of the window)
    cli("project", "add-file", project, str(second), "--as", "document")
    refused = cli("send", chat, "And now?", status=2)
    assert "This request would carry 105 pages of PDFs" in refused
    assert len(json.loads(cli("chat", "show", chat, "--json"))["messages"]) == 2
    assert sim.refused() == []
