"""Attaching a PDF in the window: both costs shown before the choice; as a document, one
`document` block in the next request, its tokens on its card before Send; as text, its
words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QPushButton
from pytestqt.qtbot import QtBot

from desktop_app.chats import Engine
from desktop_app.ui.main_window import MainWindow
from tests.fakes.pdf import make_pdf
from tests.ui.conftest import open_demo, when_shown


@pytest.mark.parametrize(("choice", "sent"), [("As a document", "document"), ("As text", "text")])
def test_a_pdf_is_attached_as_the_user_chooses(
    window: MainWindow,
    engine: Engine,
    qtbot: QtBot,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    choice: str,
    sent: str,
) -> None:
    pdf = tmp_path / "policy.pdf"
    pdf.write_bytes(make_pdf([f"Page {n}: clause {n} of the refund policy." for n in range(12)]))
    session = open_demo(window, engine, qtbot)
    pane = window.shown
    assert pane is not None
    monkeypatch.setattr(
        "desktop_app.ui.conversation.composer.QFileDialog.getOpenFileNames",
        lambda *a, **k: ([str(pdf)], ""),
    )
    told: list[str] = []

    def choose(box: QMessageBox) -> None:
        # The API's own count comes beside the estimate while the question is open.
        qtbot.waitUntil(lambda: "counted by the API" in box.informativeText(), timeout=10_000)
        told.append(box.informativeText())
        button = next(b for b in box.findChildren(QPushButton) if b.text() == choice)
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)

    when_shown(QMessageBox, choose)
    qtbot.mouseClick(pane.composer.attach_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(pane.composer.attachments), timeout=10_000)
    assert "policy.pdf: a document of 12 pages, ≈" in told[0]  # both costs, before choosing
    assert "policy.pdf: as text, ≈" in told[0]
    assert ") · counted by the API: " in told[0].splitlines()[0]
    (attached,) = pane.composer.attachments
    assert attached.tokens > (12 * 1_600 if sent == "document" else 0)

    def planned() -> bool:  # the next request, as Send would make it
        plan = session.plan
        if plan is None:
            return False
        last = plan.request.body()["messages"][-1]["content"]
        return any(b["type"] == sent and "policy" in json.dumps(b) for b in last)

    qtbot.waitUntil(planned, timeout=10_000)
