"""Answers that cite, read as one text (desktop_app/cited.py), and a streamed citation
kept with its block (core/assembly.py)."""

from __future__ import annotations

from desktop_app.cited import cited_runs, passage_for, web_step
from desktop_app.core.assembly import MessageAssembler
from desktop_app.core.blocks import OpaqueBlock, TextBlock
from desktop_app.core.events import (
    StreamBlockStart,
    StreamBlockStop,
    StreamCitationDelta,
    StreamMessageStop,
    StreamTextDelta,
)

PAGE = {
    "type": "page_location",
    "cited_text": "Refunds within 30 days.",
    "document_index": 0,
    "document_title": "refund-policy.pdf",
    "start_page_number": 3,
    "end_page_number": 4,
}
PAGES = {**PAGE, "cited_text": "Unless opened.", "start_page_number": 3, "end_page_number": 5}


def test_a_cited_run_reads_as_one_text_with_pages_and_one_mark_per_source() -> None:
    blocks = (
        TextBlock("Plain before."),
        OpaqueBlock("server_tool_use", {"type": "server_tool_use", "name": "web_search"}),
        TextBlock("The policy says "),
        TextBlock("refunds take 30 days", (PAGE,)),
        TextBlock(" and "),
        TextBlock("again", (PAGE,)),
        TextBlock(", but "),
        TextBlock("not when opened", (PAGES,)),
        TextBlock("."),
    )
    runs = cited_runs(blocks)
    assert list(runs) == [2]  # the uncited text before the step stays as it is
    run = runs[2]
    assert run.others == (3, 4, 5, 6, 7, 8)
    assert run.markdown.startswith(
        "The policy says refunds take 30 days[¹](<cite:1>) and again[¹](<cite:1>), but "
        "not when opened[²](<cite:2>)."
    )
    assert run.markdown.endswith(
        "Sources: ¹ [refund-policy.pdf](<cite:1>), page 3 · ² [refund-policy.pdf](<cite:2>), pages 3–4"
    )
    assert passage_for(blocks, "cite:2") == "refund-policy.pdf, pages 3–4\n“Unless opened.”"
    assert passage_for(blocks, "https://elsewhere.example") == ""


def test_a_web_step_says_what_happened_even_when_it_failed() -> None:
    failed = OpaqueBlock(
        "web_fetch_tool_result",
        {
            "type": "web_fetch_tool_result",
            "tool_use_id": "srvtoolu_1",
            "content": {"type": "web_fetch_tool_result_error", "error_code": "url_not_allowed"},
        },
    )
    assert web_step(failed) == "↳ The page could not be read: url_not_allowed"
    limit = OpaqueBlock(
        "web_search_tool_result",
        {
            "type": "web_search_tool_result",
            "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"},
        },
    )
    assert web_step(limit) == "↳ The search failed: max_uses_exceeded"
    assert web_step(OpaqueBlock("document", {"type": "document"})) == ""


def test_a_streamed_citation_stays_with_its_text_block() -> None:
    assembler = MessageAssembler("msg_1")
    citation = {"type": "web_search_result_location", "url": "https://a.example", "cited_text": "x"}
    for event in (
        StreamBlockStart(0, "text"),
        StreamCitationDelta(0, citation),
        StreamTextDelta(0, "cited words"),
        StreamBlockStop(0),
        StreamMessageStop(),
    ):
        assembler.feed(event)
    assert assembler.finish().blocks == (TextBlock("cited words", (citation,)),)


def test_a_mark_means_one_source_across_the_whole_message() -> None:
    """Two cited runs (text, a search, more text): the second run's source is ², not a
    second ¹ — its tooltip is its own passage — and an address with a space or a
    bracket still makes one link."""
    first = {**PAGE, "document_title": "a.pdf", "cited_text": "From a."}
    second = {**PAGE, "document_title": "b.pdf", "cited_text": "From b."}
    spaced = {
        "type": "web_search_result_location",
        "url": "https://example.org/a page (draft)",
        "title": "A page",
        "cited_text": "From the web.",
    }
    blocks = (
        TextBlock("a says", (first,)),
        OpaqueBlock("server_tool_use", {"type": "server_tool_use", "name": "web_search"}),
        TextBlock("b says", (second,)),
        TextBlock(" and the web", (spaced,)),
    )
    runs = cited_runs(blocks)
    assert [s.number for run in runs.values() for s in run.sources] == [1, 2, 3]
    assert "b says[²](<cite:2>)" in runs[2].markdown
    assert "[³](<https://example.org/a%20page%20(draft)>)" in runs[2].markdown
    assert passage_for(blocks, "cite:2") == "b.pdf, page 3\n“From b.”"
    tip = passage_for(blocks, "https://example.org/a%20page%20(draft)")
    assert tip.endswith("“From the web.”")
