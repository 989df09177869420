"""A `document` block's tokens, about: a base64 PDF is read by the model page by page,
each page as an image and as its text (platform.claude.com/docs/en/build-with-claude/
pdf-support, read 2026-12-03), so its cost is its pages' images plus its text — never its
base64's length."""

from __future__ import annotations

import base64
import io
from collections.abc import Callable

from desktop_app.core.errors import ContextDeskError, ErrorKind

# A page's image: a scanned page cost 1,600 tokens on Claude 5.5 (a text page ≈2,350: its
# image and its text), measured per page by public comparisons.
PAGE_IMAGE_TOKENS = 1_600


def pdf_pages(name: str, data: bytes) -> tuple[int, str]:
    """How many pages, and the text of them all ("" for a scan)."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ContextDeskError(
                "Protected PDF",
                f"{name} is protected by a password; save an unprotected copy.",
                kind=ErrorKind.FORMAT,
            )
        return len(reader.pages), "\n".join(p.extract_text() or "" for p in reader.pages)
    except PyPdfError as exc:
        raise ContextDeskError(
            "Not a readable PDF", f"{name}: {exc}.", kind=ErrorKind.FORMAT
        ) from exc


def document_tokens(raw: dict[str, object], count: Callable[[str], int]) -> int | None:
    """A `document` block's tokens, about (a base64 PDF's pages and text); None for any
    other document (plain text, a URL, a file id: counted as its JSON)."""
    source = raw.get("source")
    if not isinstance(source, dict) or source.get("media_type") != "application/pdf":
        return None
    try:
        data = base64.b64decode(str(source.get("data", "")), validate=True)
        pages, text = pdf_pages(str(raw.get("title") or "document"), data)
    except (ValueError, ContextDeskError):
        return None
    return pages * PAGE_IMAGE_TOKENS + count(text)
