"""A PDF attached as a document (issue 36, item 2): one `document` block the model reads
page by page, its pages and tokens said before it is sent; attached as text, its
extracted text; one the API would refuse is refused before sending."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import anthropic
import pytest

from desktop_app.api.simulator import SimulatorServer
from desktop_app.app import main
from desktop_app.core.blocks import OpaqueBlock
from desktop_app.tokens.calibration import IMAGE
from desktop_app.tokens.counter import TokenCounter
from desktop_app.tokens.documents import PAGE_IMAGE_TOKENS
from tests.fakes.pdf import make_pdf
from tests.integration.conftest import TEST_KEY

PAGES = [f"Page {n}: the refund policy, clause {n}." for n in range(1, 13)]


def test_a_pdf_goes_as_one_document_block_or_as_its_text(
    cli: Any, sim: SimulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pdf = tmp_path / "policy.pdf"
    pdf.write_bytes(make_pdf(PAGES))
    chat = cli("chat", "new").strip()
    code = main(["--home", str(cli.home), "send", chat, "Summarize it.", "--attach", str(pdf)])
    out, err = capsys.readouterr()
    assert code == 0
    assert "policy.pdf: a document of 12 pages, ≈" in err
    counted = int(err.split("counted by the API: ")[1].split(" tokens")[0].replace(",", ""))
    assert counted > 12 * PAGE_IMAGE_TOKENS  # count_tokens, asked before sending
    # Its answer cites the page it drew on (citations are on for documents).
    assert "[1] policy.pdf, page 1" in out
    content = sim.message_requests()[-1].body["messages"][-1]["content"]
    documents = [b for b in content if b["type"] == "document"]
    assert len(documents) == 1
    (document,) = documents
    assert document["source"]["media_type"] == "application/pdf"
    assert base64.b64decode(document["source"]["data"]) == pdf.read_bytes()
    assert document["title"] == "policy.pdf"
    assert document["citations"] == {"enabled": True}
    assert sim.refused() == []
    # The stand-in counts it as the API does, by its pages (not its base64's bytes).
    (sent,) = json.loads(cli("requests", chat, "--json"))
    usage = sent["usage"]
    assert usage["input_tokens"] + usage["cache_creation_input_tokens"] > 12 * PAGE_IMAGE_TOKENS

    cli("send", chat, "Again, as text.", "--attach", str(pdf), "--as", "text")
    content = sim.message_requests()[-1].body["messages"][-1]["content"]
    assert [b["type"] for b in content] == ["text", "text"]
    assert "Page 7: the refund policy, clause 7." in content[0]["text"]


def test_a_document_is_counted_by_its_pages_not_its_base64() -> None:
    raw = {
        "type": "document",
        "source": {
            "type": "base64",
            "media_type": "application/pdf",
            "data": base64.b64encode(make_pdf(PAGES)).decode("ascii"),
        },
    }
    counter = TokenCounter()
    document = OpaqueBlock("document", raw)
    tokens = counter.block(document)
    assert 12 * PAGE_IMAGE_TOKENS < tokens < 12 * PAGE_IMAGE_TOKENS + 1_000
    # Like an image, never scaled by what the API's count taught about text: the total
    # on screen holds the same estimate as its card.
    assert counter.block_kind(document) == IMAGE


def test_a_pdf_the_api_would_refuse_is_refused_before_sending(
    cli: Any, sim: SimulatorServer, tmp_path: Path
) -> None:
    pdf = tmp_path / "long.pdf"
    pdf.write_bytes(make_pdf([f"Page {n}" for n in range(101)]))
    chat = cli("chat", "new", "--model", "claude-haiku-4-5").strip()  # a 200k window: 100 pages
    before = len(sim.message_requests())
    said = cli("send", chat, "Read it.", "--attach", str(pdf), status=2)
    assert "long.pdf has 101 pages; the API reads at most 100" in said
    assert len(sim.message_requests()) == before
    assert json.loads(cli("chat", "show", chat, "--json"))["messages"] == []  # nothing stored


def test_an_older_document_and_a_new_one_go_with_citations_on_both(
    cli: Any, sim: SimulatorServer, tmp_path: Path
) -> None:
    """A PDF from before citations were on (here: an imported request's) beside a new
    one: the API refuses a request whose documents do not all agree, so both go cited."""
    old = base64.b64encode(make_pdf(["Old terms: 14 days."])).decode()
    body = {
        "model": "claude-sonnet-5-5",
        "max_tokens": 1000,
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "document",
                        "source": {"type": "base64", "media_type": "application/pdf", "data": old},
                        "title": "old.pdf",
                    },
                    {"type": "text", "text": "Read it."},
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "Read."}]},
        ],
    }
    request = tmp_path / "request.json"
    request.write_text(json.dumps(body))
    cli("import", str(request))
    chat = json.loads(cli("chat", "list", "--json"))[0]["id"]
    pdf = tmp_path / "policy.pdf"
    pdf.write_bytes(make_pdf(PAGES))
    cli("send", chat, "Compare them.", "--attach", str(pdf))
    assert sim.refused() == []
    sent = sim.message_requests()[-1].body["messages"]
    documents = [b for m in sent for b in m["content"] if b["type"] == "document"]
    assert [d["title"] for d in documents] == ["old.pdf", "policy.pdf"]
    assert all(d["citations"] == {"enabled": True} for d in documents)
    stored = json.loads(cli("chat", "show", chat, "--json"))["messages"][0]["content"][0]
    assert "citations" not in stored  # the transcript keeps it as it came


def test_the_page_limit_is_the_request_s_not_the_file_s(
    cli: Any, sim: SimulatorServer, tmp_path: Path
) -> None:
    """100 pages a request under a 1M window (pdf-support page): two files of 60 pages
    each pass alone, not together — said before the second is sent or stored."""
    chat = cli("chat", "new", "--model", "claude-haiku-4-5").strip()  # a 200,000 window
    first, second = tmp_path / "a.pdf", tmp_path / "b.pdf"
    first.write_bytes(make_pdf([f"A{n}" for n in range(60)]))
    second.write_bytes(make_pdf([f"B{n}" for n in range(60)]))
    cli("send", chat, "Read a.", "--attach", str(first))
    refused = cli("send", chat, "And b.", "--attach", str(second), status=2)
    assert "this chat's requests already carry 60 pages" in refused
    assert "at most 100" in refused
    assert len(json.loads(cli("chat", "show", chat, "--json"))["messages"]) == 2  # nothing kept
    assert sim.refused() == []
    # The stand-in refuses such a request as the API does.
    both: list[Any] = [
        {
            "type": "document",
            "source": {
                "type": "base64",
                "media_type": "application/pdf",
                "data": base64.b64encode(f.read_bytes()).decode(),
            },
        }
        for f in (first, second)
    ]
    client = anthropic.Anthropic(api_key=TEST_KEY, base_url=sim.base_url, max_retries=0)
    with pytest.raises(anthropic.BadRequestError, match="A maximum of 100 PDF pages"):
        client.messages.create(
            model="claude-haiku-4-5",
            max_tokens=64,
            messages=[{"role": "user", "content": [*both, {"type": "text", "text": "hi"}]}],
        )


def test_a_demo_chat_is_answered_within_the_window_it_plans_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The offline demo answers a chat of Sonnet 5.5 (1M window) as its own model: that
    model's window must be as large, or a 150-page PDF the chat's plan takes — 600 pages
    under 1M — was refused after it was stored, and every later send carried it again."""
    home = ["--home", str(tmp_path / "demo"), "--demo"]
    assert main([*home, "chat", "new"]) == 0
    chat = capsys.readouterr().out.strip()
    pdf = tmp_path / "long.pdf"
    pdf.write_bytes(make_pdf([f"Page {n}." for n in range(150)]))
    code = main([*home, "send", chat, "Summarize it.", "--attach", str(pdf)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "long.pdf: a document of 150 pages" in err
    assert "[Simulated reply" in out


def test_a_pdf_left_out_of_the_request_does_not_count_against_its_pages(
    cli: Any, sim: SimulatorServer, tmp_path: Path
) -> None:
    """The limit is the request's: once the first 60 pages are excluded from the context
    (the transcript keeps them), 60 more go — counted on the request as planned."""
    chat = cli("chat", "new", "--model", "claude-haiku-4-5").strip()  # a 200,000 window
    first, second = tmp_path / "a.pdf", tmp_path / "b.pdf"
    first.write_bytes(make_pdf([f"A{n}" for n in range(60)]))
    second.write_bytes(make_pdf([f"B{n}" for n in range(60)]))
    cli("send", chat, "Read a.", "--attach", str(first))
    cli("exclude", chat, "1")
    cli("exclude", chat, "2")
    cli("send", chat, "And b.", "--attach", str(second))
    sent = sim.message_requests()[-1].body["messages"]
    documents = [b for m in sent for b in m["content"] if b["type"] == "document"]
    assert len(documents) == 1
    assert base64.b64decode(documents[0]["source"]["data"]) == second.read_bytes()
    assert sim.refused() == []
    # Put back, the first would make 120: refused before anything is sent or stored.
    cli("include", chat, "1")
    cli("include", chat, "2")
    refused = cli("send", chat, "Both now.", status=2)
    assert "120 pages of PDFs" in refused
    assert len(json.loads(cli("chat", "show", chat, "--json"))["messages"]) == 4


def test_an_edit_is_checked_against_the_request_it_makes(tmp_path: Path) -> None:
    """An edit's request is the messages before the one edited, then the edit: the PDF it
    replaces is not sent, and does not count (it was refused at "120 pages")."""
    from desktop_app.chats import Engine
    from desktop_app.core.blocks import TextBlock
    from desktop_app.core.messages import Message
    from tests.fakes.tools import ScriptedApprover

    def document(tag: str) -> OpaqueBlock:
        data = base64.b64encode(make_pdf([f"{tag}{n}" for n in range(60)])).decode()
        source = {"type": "base64", "media_type": "application/pdf", "data": data}
        return OpaqueBlock("document", {"type": "document", "source": source, "title": tag})

    engine = Engine.open(tmp_path / "home", demo=True)
    try:
        chat = engine.new_chat(model="claude-haiku-4-5")  # a 200,000 window: 100 pages
        first = Message("user", (document("A"), TextBlock("Read A.")))
        assert chat.turns.answer(chat.turns.start(first, ScriptedApprover())).error is None
        edit = Message("user", (document("B"), TextBlock("Read B instead.")))
        turn = chat.turns.start(edit, ScriptedApprover(), beside=chat.messages()[0].id)
        assert chat.turns.answer(turn).error is None
        sent = chat.costs.sent_body(2)
        titles = [b.get("title") for m in sent["messages"] for b in m["content"]]
        assert "B" in titles
        assert "A" not in titles
    finally:
        engine.close()
