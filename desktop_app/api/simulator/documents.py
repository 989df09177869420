"""The simulator reading a PDF sent as a `document` with citations on: its answer cites a
page, in the API's shape (platform.claude.com/docs/en/build-with-claude/citations, read
2026-12-03: a PDF's citation is a `page_location` — `document_index`, `document_title`,
`start_page_number` counted from 1, `end_page_number` exclusive, and the `cited_text`)."""

from __future__ import annotations

import base64
from typing import Any

from desktop_app.api.simulator.script import Reply


def document_reply(body: dict[str, Any], label: str) -> Reply | None:
    """An answer citing the first page of the last message's cited PDF; None when the
    last message holds none."""
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    content = last.get("content") if isinstance(last, dict) else None
    if not isinstance(content, list) or last.get("role") != "user":
        return None
    documents = [b for b in content if isinstance(b, dict) and b.get("type") == "document"]
    for index, block in enumerate(documents):
        if not (block.get("citations") or {}).get("enabled"):
            continue
        first = _first_page_line(block)
        if not first:
            continue
        title = str(block.get("title") or "the document")
        cited = {
            "type": "page_location",
            "cited_text": first,
            "document_index": index,
            "document_title": title,
            "start_page_number": 1,
            "end_page_number": 2,
        }
        return Reply(
            (
                {"type": "text", "text": f"{label}\nThe document opens with: "},
                {"type": "text", "text": first, "citations": [cited]},
                {"type": "text", "text": " (Simulated reading of its first page.)"},
            )
        )
    return None


def _first_page_line(block: dict[str, Any]) -> str:
    from desktop_app.core.errors import ContextDeskError
    from desktop_app.tokens.documents import pdf_pages

    source = block.get("source")
    if not isinstance(source, dict) or source.get("media_type") != "application/pdf":
        return ""
    try:
        _pages, text = pdf_pages("document", base64.b64decode(str(source.get("data", ""))))
    except (ValueError, ContextDeskError):
        return ""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def pdf_pages_in(body: dict[str, Any]) -> int:
    """The PDF pages of a request's `document` blocks (the API limits them per request)."""
    pages = 0
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "document":
                pages += _pages(block)
    return pages


def _pages(block: dict[str, Any]) -> int:
    from desktop_app.core.errors import ContextDeskError
    from desktop_app.tokens.documents import pdf_pages

    source = block.get("source")
    if not isinstance(source, dict) or source.get("media_type") != "application/pdf":
        return 0
    try:
        return pdf_pages("document", base64.b64decode(str(source.get("data", ""))))[0]
    except (ValueError, ContextDeskError):
        return 0
