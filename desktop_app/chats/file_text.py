"""The text of a knowledge file, as it is sent: UTF-8 text as it is; a PDF's text layer,
extracted by pypdf (loaded only when a PDF is added), one page after another with a
"--- page N ---" line before each, so the model can say where it read something."""

from __future__ import annotations

import io
from pathlib import Path

from desktop_app.chats.given_files import read_given_file, shown_name
from desktop_app.core.errors import ContextDeskError, ErrorKind

MAX_TEXT_BYTES = 5_000_000  # knowledge is sent whole: this is already huge
MAX_PDF_BYTES = 100_000_000  # a PDF's pictures and fonts weigh far more than its text


def text_of(path: Path) -> str:
    """The file's text, or an error that says why it has none we could send."""
    is_pdf = path.suffix.lower() == ".pdf"
    limit = MAX_PDF_BYTES if is_pdf else MAX_TEXT_BYTES
    data = read_given_file(path, limit, "Knowledge is sent whole: split it, or keep what matters.")
    if is_pdf or data.startswith(b"%PDF-"):
        return _pdf_text(shown_name(path), data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ContextDeskError(
            "Not a text file",
            f"{shown_name(path)} is not UTF-8 text or a PDF: a knowledge file is sent as text.",
            kind=ErrorKind.FORMAT,
        ) from exc


def _pdf_text(name: str, data: bytes) -> str:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    def refused(why: str) -> ContextDeskError:
        return ContextDeskError("No text in the PDF", f"{name}: {why}.", kind=ErrorKind.FORMAT)

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise refused("it is protected by a password; save an unprotected copy")
        pages = [page.extract_text() or "" for page in reader.pages]
    except PyPdfError as exc:
        raise refused(f"it could not be read as a PDF ({exc})") from exc
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
        # pypdf's parser lets some of a damaged file's inconsistencies out as these
        raise refused(f"it is damaged ({type(exc).__name__}: {exc})") from exc
    if not any(page.strip() for page in pages):
        raise refused(
            "its pages have no text layer (a scan?): send it as a document, which Claude "
            "reads page by page, or run OCR on it first"
        )
    text = "\n\n".join(
        f"--- page {number} ---\n{page.strip()}" for number, page in enumerate(pages, 1)
    )
    if len(text.encode("utf-8")) > MAX_TEXT_BYTES:
        raise ContextDeskError(
            "File too large",
            f"{name}'s text is over {MAX_TEXT_BYTES // 1_000_000} MB; knowledge is sent "
            "whole, so split it or keep what matters.",
            kind=ErrorKind.USAGE,
        )
    return text
