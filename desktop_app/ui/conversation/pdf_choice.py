"""Attaching a PDF: *as a document* — Claude reads each page, its pictures and layout too,
at a page's image and text each — or *as text*, its words only, for far fewer tokens. Both
costs are shown before the choice (chats/documents.py); one the API would refuse says why."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QMessageBox, QWidget

from desktop_app.chats import attach_file, count_document, pdf_ways
from desktop_app.core.errors import ContextDeskError
from desktop_app.ui.conversation.composer import Attachment

if TYPE_CHECKING:
    from desktop_app.chats import Engine
    from desktop_app.ui.conversation.session import ChatSession


def ask_pdf_choice(parent: QWidget, session: ChatSession, path: Path) -> Attachment | None:
    """The attachment the user chose, or None (cancelled, or nothing can be attached)."""
    chat, counter = session.chat, session.engine.counter
    options: dict[str, Attachment] = {}
    why_not: list[str] = []
    for as_document, label in ((True, "As a document"), (False, "As text")):
        try:
            block, said = attach_file(chat, path, counter, as_document=as_document)
        except ContextDeskError as exc:
            why_not.append(f"{label}: {exc.message}")
            continue
        options[label] = Attachment(path.name, block, counter.block(block))
        why_not.append(said)
    box = QMessageBox(QMessageBox.Icon.Question, f"Attach {path.name}", "", parent=parent)
    box.setObjectName("pdfChoice")
    if not options:
        box.setIcon(QMessageBox.Icon.Warning)
        box.setText(f"{path.name} cannot be attached.")
        box.setInformativeText("\n".join(why_not))
        box.exec()
        return None
    box.setText(
        "As a document, Claude reads every page — its pictures, tables and layout too; as "
        "text, only its words, for far fewer tokens."
    )
    box.setInformativeText("\n".join(why_not))
    document = options.get("As a document")
    if document is not None:
        _count_for(box, session, document, why_not)
    buttons = {box.addButton(label, QMessageBox.ButtonRole.AcceptRole): label for label in options}
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.exec()
    chosen = buttons.get(box.clickedButton())  # type: ignore[call-overload]
    return options[chosen] if chosen else None


def _count_for(
    box: QMessageBox, session: ChatSession, document: Attachment, lines: list[str]
) -> None:
    """The API's own count of the document (count_tokens, off the window's thread), said
    beside the estimate when it comes — if the question is still open."""
    engine, model = session.engine, session.chat.model
    worker = session.counting or session.background

    def said(tokens: int | None) -> None:
        if tokens is None or not box.isVisible():
            return
        lines[0] = f"{lines[0]} · counted by the API: {tokens:,} tokens (exact)"
        box.setInformativeText("\n".join(lines))

    worker.submit(
        f"count-document-{id(box)}",
        lambda: count_document(engine.connection, model, document.block),
        said,
        lambda _error: None,  # (the estimate stands)
    )


def is_pdf(path: Path) -> bool:
    return path.suffix.lower() == ".pdf"


def ask_pdf_way(parent: QWidget, path: Path, engine: Engine) -> bool | None:
    """A PDF for a project's knowledge: True as a document, False as text, None when the
    person cancels — both costs shown first, counted against the knowledge budget."""
    document, text = pdf_ways(path, engine.counter)
    box = QMessageBox(QMessageBox.Icon.Question, f"Add {path.name}", "", parent=parent)
    box.setObjectName("pdfChoice")
    box.setText(
        "As a document, Claude reads every page of it in each chat of the project — its "
        "pictures, tables and layout too; as text, only its words, for far fewer tokens."
    )
    box.setInformativeText(f"{document}\n{text}")
    as_document = box.addButton("As a document", QMessageBox.ButtonRole.AcceptRole)
    as_document.setEnabled(not document.startswith("As a document:"))  # (refused: why)
    as_text = box.addButton("As text", QMessageBox.ButtonRole.AcceptRole)
    as_text.setEnabled(not text.startswith("As text:"))  # (a scan: no text to send)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.exec()
    clicked = box.clickedButton()
    return True if clicked is as_document else False if clicked is as_text else None
