"""A PDF sent as a `document` block: the model reads its pages — each as text and as an
image — instead of text extracted here. It costs more than its text (a page of text ≈2,300
tokens as a PDF, ≈730 pasted), so the user chooses, seeing both counts before sending:
*as a document* or *as text* (`file_text.text_of`, today's extraction). The limits are
the API's (platform.claude.com/docs/en/build-with-claude/pdf-support, read 2026-12-03):
600 pages a request (100 when the request's context window is under 1M tokens), 128 MB a
request on Anthropic's API."""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from desktop_app.chats.page_limit import most_pages, pages_sent
from desktop_app.core.blocks import Block, OpaqueBlock, TextBlock
from desktop_app.core.errors import ContextDeskError, ErrorKind
from desktop_app.tokens.documents import PAGE_IMAGE_TOKENS, pdf_pages

if TYPE_CHECKING:
    from desktop_app.chats.chat import Chat
    from desktop_app.chats.connection import Connection
    from desktop_app.tokens.counter import TokenCounter

MAX_BYTES = 128 * 1_000_000  # the whole request's, base64 and all
CountText = Callable[[str], int]


@dataclass(frozen=True, slots=True)
class PdfDocument:
    name: str
    pages: int
    text_tokens: int  # its text layer's tokens (what "as text" would send, about)
    block: OpaqueBlock  # the `document` block, base64

    @property
    def tokens(self) -> int:
        """What the API charges for it, about: each page's image and its text."""
        return self.pages * PAGE_IMAGE_TOKENS + self.text_tokens


def pdf_document(path: Path, count: CountText, context_window: int) -> PdfDocument:
    """`path` as a `document` block, or a clear refusal when the API would refuse it."""
    from desktop_app.chats.given_files import read_given_file, shown_name

    name = shown_name(path)
    data = read_given_file(path, MAX_BYTES, "A PDF sent as a document is at most 128 MB.")
    if not data.startswith(b"%PDF-"):
        raise ContextDeskError("Not a PDF", f"{name} is not a PDF.", kind=ErrorKind.FORMAT)
    pages, text = pdf_pages(name, data)
    most = most_pages(context_window)
    if pages > most:
        raise ContextDeskError(
            "Too many pages",
            f"{name} has {pages} pages; the API reads at most {most} a request with this "
            "model's window. Split it, or attach it as text.",
            kind=ErrorKind.FORMAT,
        )
    raw = {
        "type": "document",
        "source": {
            "type": "base64",
            "media_type": "application/pdf",
            "data": base64.b64encode(data).decode("ascii"),
        },
        "title": name,
        # Claude's answer then cites the pages it drew on (shown as footnotes, "page 3").
        "citations": {"enabled": True},
    }
    return PdfDocument(name, pages, count(text), OpaqueBlock("document", raw))


def attach_file(
    chat: Chat, path: Path, counter: TokenCounter, *, as_document: bool
) -> tuple[Block, str]:
    """A file for a message, and what it costs in words: a PDF as a `document` block (or
    its extracted text), any other file as its UTF-8 text, quoted."""
    from desktop_app.chats.file_text import text_of
    from desktop_app.chats.given_files import shown_name

    name = shown_name(path)
    if as_document and path.suffix.lower() == ".pdf":
        window = chat.settings.context_window
        document = pdf_document(path, counter.text, window)
        most = most_pages(window)
        already = pdf_pages_sent(chat, above=most - document.pages)
        if already + document.pages > most:  # the limit is the request's, not the file's
            raise ContextDeskError(
                "Too many pages",
                f"{name} has {document.pages} pages, and this chat's requests already carry "
                f"{already} pages of PDFs; the API reads at most {most} a request with this "
                "model's window. Attach it as text, or continue in a new chat.",
                kind=ErrorKind.FORMAT,
            )
        return document.block, document_said(document)
    text = f"File: {name}\n```\n{text_of(path)}\n```"
    return TextBlock(text), f"{name}: as text, ≈{counter.text(text):,} tokens"


def count_document(connection: Connection, model: str, block: Block) -> int | None:
    """What the API itself counts for a `document` block, by count_tokens: a request
    with it less the same request without it (a few words beside it in both). None when
    the server has no count_tokens, or it failed: the local estimate stands."""
    from desktop_app.core.messages import Message
    from desktop_app.core.request import ChatRequest

    def counted(*blocks: Block) -> int | None:
        message = Message("user", (*blocks, TextBlock("Read this.")))
        request = ChatRequest(model, (message,), max_tokens=1, purpose="count")
        return connection.backend().count_tokens(request)

    try:
        with_it, without = counted(block), counted()
    except ContextDeskError:
        return None
    finally:
        connection.release_thread()  # (this thread's connection: a worker's may end)
    if with_it is None or without is None:
        return None
    return max(0, with_it - without)


def document_said(document: PdfDocument) -> str:
    return (
        f"{document.name}: a document of {pages_said(document.pages)}, ≈{document.tokens:,} "
        f"tokens (as text: ≈{document.text_tokens:,})"
    )


def pdf_ways(path: Path, counter: TokenCounter) -> tuple[str, str]:
    """A PDF for a project's knowledge, each way in words: (as a document, as text),
    each starting "As a document:" / "As text:" with the reason when that way is refused.
    Its pages are checked against the largest window's limit; a chat with a smaller
    window is told when the file is sent."""
    from desktop_app.chats.file_text import text_of
    from desktop_app.chats.given_files import shown_name

    try:
        document = document_said(pdf_document(path, counter.text, 1_000_000))
    except ContextDeskError as exc:
        document = f"As a document: {exc.message}"
    try:
        text = f"{shown_name(path)}: as text, ≈{counter.text(text_of(path)):,} tokens"
    except ContextDeskError as exc:  # a scan has no text layer: only a document reads it
        text = f"As text: {exc.message}"
    return document, text


def pdf_pages_sent(chat: Chat, *, above: int) -> int:
    """The PDF pages the chat's next request carries as documents, its branch's and its
    project's (the API's page limit counts them all): exact once they are `above` pages
    (`page_limit.pages_sent`)."""
    project = chat.plans.planner().project
    documents = project.documents if project else ()
    return pages_sent(
        chat.history(), documents, lambda: chat.plans.plan().request.messages, above=above
    )


def pages_said(pages: int) -> str:
    return f"{pages:,} page" if pages == 1 else f"{pages:,} pages"
