"""The API's PDF pages a request (platform.claude.com/docs/en/build-with-claude/
pdf-support, read 2026-12-03): 600 pages, 100 when the request's context window is under
1M tokens — counted over every document the request carries (a chat's and its
project's), not per file. Checked before a send stores anything (`Turns.start`) and
before a PDF is attached (chats/documents.py): first over every PDF of the branch and
the project (no plan needed, and most chats have none), then, only when those pass the
limit, over the request as planned — a PDF trimmed, summarized or excluded is not sent,
and does not count."""

from __future__ import annotations

import base64
import functools
from collections.abc import Callable, Sequence

from desktop_app.core.blocks import Block, OpaqueBlock
from desktop_app.core.errors import ContextDeskError, ErrorKind
from desktop_app.core.messages import Message
from desktop_app.tokens.documents import pdf_pages

MAX_PAGES = 600
MAX_PAGES_UNDER_1M = 100  # when the request's context window is under 1M tokens


def request_pdf_pages(messages: Sequence[Message], documents: Sequence[Block] = ()) -> int:
    """The PDF pages of these messages' documents and `documents` (a project's). (Every
    send asks it of the whole branch: a plain loop, no list of every block.)"""
    pages = sum(_pages_of(b) for b in documents)
    for message in messages:
        for block in message.blocks:
            if type(block) is OpaqueBlock:
                pages += _pages_of(block)
    return pages


def _pages_of(block: Block) -> int:
    if not (isinstance(block, OpaqueBlock) and block.type == "document"):
        return 0
    source = block.raw.get("source")
    if not isinstance(source, dict) or source.get("media_type") != "application/pdf":
        return 0
    return _pages_of_pdf(str(source.get("data", "")))


def most_pages(window: int) -> int:
    """The API's PDF pages a request, for a model with this context window."""
    return MAX_PAGES if window >= 1_000_000 else MAX_PAGES_UNDER_1M


def pages_sent(
    messages: Sequence[Message],
    documents: Sequence[Block],
    planned: Callable[[], Sequence[Message]],
    *,
    above: int,
) -> int:
    """The PDF pages a request carries: those of `messages` (the branch) and `documents`
    (the project's) while they are not `above` pages; past that, those of the request as
    planned (`planned`: its messages, the project's documents opening the first)."""
    pages = request_pdf_pages(messages, documents)
    return pages if pages <= above else request_pdf_pages(planned())


def check_request_pages(
    messages: Sequence[Message],
    documents: Sequence[Block],
    window: int,
    planned: Callable[[], Sequence[Message]],
) -> None:
    """Refuse (FORMAT) a request whose PDFs pass the API's pages a request — before it is
    sent or stored (a project's document added later can bring a chat over it)."""
    most = most_pages(window)
    pages = pages_sent(messages, documents, planned, above=most)
    if pages > most:
        raise ContextDeskError(
            "Too many pages",
            f"This request would carry {pages} pages of PDFs; the API reads at most {most} a "
            "request with this model's window. Exclude a document, send one as text, or "
            "continue in a new chat.",
            kind=ErrorKind.FORMAT,
        )


@functools.lru_cache(maxsize=64)
def _pages_of_pdf(data: str) -> int:
    """A base64 PDF's pages (0 when unreadable); kept for the PDFs a chat carries, which
    every send counts again."""
    try:
        pages, _text = pdf_pages("document", base64.b64decode(data))
    except (ValueError, ContextDeskError):
        return 0
    return pages
