"""The Project dialog, driven as a user does: a new project from the chat, a fact pinned
to it, the layer switched off for this chat — and the next request follows each step."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QMessageBox, QPushButton
from pytestqt.qtbot import QtBot

from desktop_app.chats import Engine
from desktop_app.context.plan import Section
from desktop_app.ui.chat_list.model import ID_ROLE
from desktop_app.ui.conversation.session import ChatSession
from desktop_app.ui.dialogs.project_dialog import NEW_PROJECT, ProjectDialog
from desktop_app.ui.main_window import MainWindow
from tests.fakes.pdf import make_pdf
from tests.ui.conftest import answer_fact_dialog, open_demo, when_shown


def system_of(session: object) -> str:
    plan = session.plan  # type: ignore[attr-defined]
    assert plan is not None
    return "\n".join(p.text for p in plan.request.system)


def test_a_chat_gets_a_project_a_shared_fact_and_a_layer_switched_off(
    window: MainWindow, engine: Engine, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = open_demo(window, engine, qtbot)
    monkeypatch.setattr(
        "desktop_app.ui.dialogs.project_dialog.QInputDialog.getText", lambda *a, **k: ("Acme", True)
    )
    qtbot.keyClick(
        window,
        Qt.Key.Key_J,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    qtbot.waitUntil(lambda: isinstance(window.dialogs.project_dialog, ProjectDialog), timeout=5000)
    dialog = window.dialogs.project_dialog
    assert dialog is not None
    assert not dialog.project_box.isEnabled()  # in no project yet

    dialog.choice.setCurrentIndex(dialog.choice.findData(NEW_PROJECT))
    dialog.choice.activated.emit(dialog.choice.currentIndex())  # as picking it does
    assert dialog.project is not None
    assert dialog.project.name == "Acme"
    qtbot.waitUntil(dialog.project_box.isEnabled, timeout=5000)

    button = next(b for b in dialog.findChildren(QPushButton) if b.text() == "Pin a fact…")
    answer_fact_dialog(qtbot, "Acme refunds within 30 days.")
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Acme refunds within 30 days." in system_of(session), timeout=10_000)
    qtbot.waitUntil(lambda: dialog.project_box.facts.count() == 1, timeout=5000)
    # Another chat of the project gets it too; a chat outside does not.
    other = engine.projects.new_chat("Acme")
    assert "Acme refunds within 30 days." in "\n".join(
        p.text for p in other.plans.plan().request.system
    )
    outside = engine.new_chat()
    assert "Acme refunds" not in "\n".join(p.text for p in outside.plans.plan().request.system)

    dialog.refresh()
    qtbot.waitUntil(lambda: "≈" in dialog.layer_boxes["facts"].text(), timeout=10_000)
    dialog.layer_boxes["facts"].click()  # off, for this chat only
    qtbot.waitUntil(
        lambda: "Acme refunds within 30 days." not in system_of(session), timeout=10_000
    )
    assert "Acme refunds within 30 days." in "\n".join(
        p.text for p in other.plans.plan().request.system
    )
    dialog.reject()


def test_pin_to_project_moves_a_chat_s_fact_to_every_chat_of_its_project(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot)
    project = engine.projects.new("Acme")
    engine.projects.move(session.chat, project.id)
    session.pin_fact("Order #88213 ships on Friday.")
    qtbot.waitUntil(lambda: session.state().facts != (), timeout=5000)
    facts = window.context.facts
    window.context.tabs.setCurrentWidget(facts)
    qtbot.waitUntil(lambda: facts.model.rowCount() == len(session.state().facts), timeout=5000)
    row = next(i for i, f in enumerate(session.state().facts) if "88213 ships" in f.text)
    facts.list.setCurrentIndex(facts.model.index(row))
    qtbot.mouseClick(facts.to_project_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: not any("88213 ships" in f.text for f in session.state().facts), timeout=5000
    )
    assert [f.text for f in engine.projects.find("Acme").facts] == ["Order #88213 ships on Friday."]
    other = engine.projects.new_chat("Acme")
    assert "88213 ships on Friday" in "\n".join(p.text for p in other.plans.plan().request.system)
    qtbot.waitUntil(lambda: "88213 ships on Friday" in system_of(session), timeout=10_000)


def test_an_imported_memory_waits_in_the_project_until_accepted(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    from desktop_app.context.facts import FactSource

    session = open_demo(window, engine, qtbot)
    project = engine.projects.new("Shop")
    engine.projects.move(session.chat, project.id)
    engine.projects.suggest(project.id, ["Refunds take 30 days."], FactSource.IMPORT)
    engine.projects.suggest(project.id, ["Ships from Lyon."], FactSource.IMPORT)
    window.dialogs.open_project()
    dialog = window.dialogs.project_dialog
    assert dialog is not None
    qtbot.waitUntil(lambda: dialog.project_box.facts.count() == 2, timeout=5000)
    first = dialog.project_box.facts.item(0)
    assert first.text() == "Suggested by an import: Refunds take 30 days."
    assert "Refunds take 30 days" not in system_of(session)  # offered, not sent
    assert not dialog.project_box.accept_fact.isEnabled()  # nothing chosen yet

    dialog.project_box.facts.setCurrentItem(first)
    assert dialog.project_box.accept_fact.isEnabled()
    qtbot.mouseClick(dialog.project_box.accept_fact, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Refunds take 30 days." in system_of(session), timeout=10_000)
    qtbot.waitUntil(
        lambda: dialog.project_box.facts.item(0).text() == "Refunds take 30 days.", timeout=5000
    )

    dialog.project_box.facts.setCurrentRow(1)
    remove = next(b for b in dialog.findChildren(QPushButton) if b.text() == "Remove fact")
    qtbot.mouseClick(remove, Qt.MouseButton.LeftButton)  # rejects the other suggestion
    qtbot.waitUntil(lambda: dialog.project_box.facts.count() == 1, timeout=5000)
    assert [(f.text, f.pending) for f in engine.projects.find("Shop").facts] == [
        ("Refunds take 30 days.", False)
    ]
    dialog.reject()


def test_the_chat_list_menu_opens_a_chat_s_project(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot)
    view = window.chat_list.list
    row = window.chat_list.model.row_of(session.chat.id)
    assert row is not None
    menu = view.menu_for(window.chat_list.model.index(row))
    action = next(a for a in menu.actions() if a.text() == "Project…")
    action.trigger()
    qtbot.waitUntil(lambda: isinstance(window.dialogs.project_dialog, ProjectDialog), timeout=5000)
    assert window.dialogs.project_dialog is not None
    assert window.dialogs.project_dialog.session.chat.id == session.chat.id
    window.dialogs.project_dialog.reject()


def pick(qtbot: QtBot, combo: QComboBox, text: str) -> None:
    """Choose an entry of a closed combo box by the arrow keys, as a keyboard user does."""
    combo.setFocus()
    wanted = combo.findText(text)
    assert wanted >= 0, [combo.itemText(i) for i in range(combo.count())]
    key = Qt.Key.Key_Down if wanted > combo.currentIndex() else Qt.Key.Key_Up
    while combo.currentIndex() != wanted:
        qtbot.keyClick(combo, key)


def listed(window: MainWindow) -> list[str]:
    model = window.chat_list.model
    return [model.index(i).data(ID_ROLE) for i in range(model.rowCount())]


def test_the_chat_list_shows_a_project_s_chats_and_starts_new_ones_in_it(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    project = engine.projects.new("Acme")
    engine.projects.set_defaults(project.id, {"max_tokens": "5000"})
    plan = engine.projects.new_chat("Acme", "Launch plan")
    groceries = engine.new_chat("Groceries")
    window.chats.refresh()
    panel = window.chat_list
    assert panel.project_filter.isVisible()  # there is a project now
    assert set(listed(window)) == {plan.id, groceries.id}
    row = panel.model.row_of(plan.id)
    assert row is not None
    assert (
        panel.model.index(row)
        .data(Qt.ItemDataRole.DisplayRole)
        .split("\n")[1]
        .startswith("Acme · ")
    )

    pick(qtbot, panel.project_filter, "Project: Acme")
    qtbot.waitUntil(lambda: listed(window) == [plan.id], timeout=5000)
    qtbot.mouseClick(panel.new_button, Qt.MouseButton.LeftButton)  # a chat of the project
    qtbot.waitUntil(lambda: len(listed(window)) == 2, timeout=5000)
    made = engine.chat(next(i for i in listed(window) if i != plan.id))
    assert engine.projects.project_of(made) == engine.projects.find("Acme")
    assert made.settings.max_tokens == 5000

    pick(qtbot, panel.project_filter, "Not in a project")
    qtbot.waitUntil(lambda: listed(window) == [groceries.id], timeout=5000)
    # Moved into the project from its Project dialog: it leaves this list at once.
    window.open_chat(groceries.id)
    window.dialogs.open_project()
    dialog = window.dialogs.project_dialog
    assert dialog is not None
    pick(qtbot, dialog.choice, "Acme")
    qtbot.waitUntil(lambda: listed(window) == [], timeout=5000)
    assert panel.empty.isVisible()
    dialog.reject()


def test_the_project_dialog_sets_what_new_chats_start_with(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot)
    engine.projects.move(session.chat, engine.projects.new("Acme").id)
    window.dialogs.open_project()
    dialog = window.dialogs.project_dialog
    assert dialog is not None
    qtbot.waitUntil(dialog.project_box.isEnabled, timeout=5000)
    for spin, value in (
        (dialog.project_box.new_max_tokens, "8000"),
        (dialog.project_box.new_thinking, "2048"),
    ):
        spin.setFocus()
        spin.selectAll()
        qtbot.keyClicks(spin, value)
        qtbot.keyClick(spin, Qt.Key.Key_Return)
    qtbot.waitUntil(
        lambda: (
            dict(engine.projects.find("Acme").defaults)
            == {"max_tokens": 8000, "thinking": "budget", "thinking_budget": 2048}
        ),
        timeout=5000,
    )
    started = engine.projects.new_chat("Acme")
    assert (started.settings.max_tokens, started.settings.thinking_budget) == (8000, 2048)
    # A budget no chat could use is refused beside the fields, and nothing is saved.
    dialog.project_box.new_thinking.setFocus()
    dialog.project_box.new_thinking.selectAll()
    qtbot.keyClicks(dialog.project_box.new_thinking, "9000")
    qtbot.keyClick(dialog.project_box.new_thinking, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "thinking" in dialog.project_box.problem.text(), timeout=5000)
    assert dict(engine.projects.find("Acme").defaults)["thinking_budget"] == 2048
    assert dialog.isVisible()  # Enter finished the field; it pressed no button
    # The project's spending cap: its chats' sends count against it together.
    dialog.project_box.spend_cap.setFocus()
    dialog.project_box.spend_cap.selectAll()
    qtbot.keyClicks(dialog.project_box.spend_cap, "2.50")
    qtbot.keyClick(dialog.project_box.spend_cap, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: engine.projects.find("Acme").spend_cap == 2.5, timeout=5000)
    assert [b.name for b in session.chat.costs.budgets()] == ["project Acme"]
    dialog.reject()


def test_a_search_stays_a_search_when_the_project_filter_changes(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    engine.projects.new("Acme")
    refunds = engine.projects.new_chat("Acme", "Refunds")
    engine.new_chat("Refund policy draft")
    engine.new_chat("Groceries")
    window.chats.refresh()
    panel = window.chat_list
    qtbot.keyClicks(panel.search, "refund")
    qtbot.waitUntil(lambda: panel.model.searching and len(listed(window)) == 2, timeout=5000)
    pick(qtbot, panel.project_filter, "Project: Acme")
    qtbot.waitUntil(lambda: listed(window) == [refunds.id], timeout=5000)
    assert panel.model.searching
    assert panel.search.text() == "refund"


def test_the_project_dialog_keeps_its_width_and_counts_knowledge_as_it_is_planned(
    window: MainWindow,
    engine: Engine,
    qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    session = open_demo(window, engine, qtbot)
    notes = tmp_path / "refunds.md"
    notes.write_text("Refunds are paid within thirty days of purchase. " * 40, encoding="utf-8")
    monkeypatch.setattr(
        "desktop_app.ui.dialogs.project_dialog.QInputDialog.getText", lambda *a, **k: ("Acme", True)
    )
    monkeypatch.setattr(  # the file the user picks in the system's file dialog
        "desktop_app.ui.projects.project_editor.QFileDialog.getOpenFileNames",
        lambda *a, **k: ([str(notes)], ""),
    )
    window.dialogs.open_project()
    dialog = window.dialogs.project_dialog
    assert dialog is not None
    qtbot.waitExposed(dialog)
    width = dialog.width()

    dialog.choice.setCurrentIndex(dialog.choice.findData(NEW_PROJECT))
    dialog.choice.activated.emit(dialog.choice.currentIndex())  # as picking it does
    qtbot.waitUntil(dialog.project_box.isEnabled, timeout=5000)
    # The cache line wraps; it does not widen the dialog (it did: 600 → 671 px).
    assert dialog.minimumSizeHint().width() <= width
    assert "0 tokens in 0 requests" in dialog.project_box.cache_note.text()

    add = next(b for b in dialog.findChildren(QPushButton) if b.text() == "Add files…")
    qtbot.mouseClick(add, Qt.MouseButton.LeftButton)

    def knowledge_sent() -> int:
        plan = session.plan
        return plan.sections.get(Section.PROJECT_KNOWLEDGE, 0) if plan else 0

    qtbot.waitUntil(lambda: knowledge_sent() > 0, timeout=10_000)
    # No other step needed: the box says what the new plan sends.
    qtbot.waitUntil(
        lambda: (
            dialog.layer_boxes["knowledge"].text()
            == f"Project knowledge: ≈{knowledge_sent():,} tokens"
        ),
        timeout=5000,
    )
    assert dialog.width() == width
    assert dialog.minimumSizeHint().width() <= width
    dialog.reject()


def test_a_project_pdf_is_added_as_the_user_chooses_with_both_costs_shown(
    window: MainWindow,
    engine: Engine,
    qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    pdf = tmp_path / "catalogue.pdf"
    pdf.write_bytes(make_pdf([f"Page {n}: product {n}." for n in range(1, 13)]))
    told: list[str] = []

    def as_document(box: QMessageBox) -> None:
        told.append(box.informativeText())
        button = next(b for b in box.findChildren(QPushButton) if b.text() == "As a document")
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)

    session, dialog = add_pdf_to_a_project(window, engine, qtbot, monkeypatch, pdf, as_document)
    assert "catalogue.pdf: a document of 12 pages, ≈" in told[0]
    assert "catalogue.pdf: as text, ≈" in told[0]
    assert dialog.project_box.files.item(0).text().endswith("tokens, a document of 12 pages")

    def opens_with_it() -> bool:  # the chat's next request opens with the document
        plan = session.plan
        first = plan.request.messages[0].blocks if plan and plan.request.messages else ()
        return bool(first) and getattr(first[0], "type", "") == "document"

    qtbot.waitUntil(opens_with_it, timeout=10_000)
    assert session.plan is not None
    assert session.plan.sections[Section.PROJECT_KNOWLEDGE] >= 12 * 1_600
    dialog.reject()


def test_choosing_a_project_shows_its_page_where_it_is_edited_and_its_chats_open(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    """Issue 32, item 5: a project is a page, not a modal."""
    from desktop_app.ui.projects.project_page import ProjectPage

    project = engine.projects.new("Acme", instructions="Answer as Acme's support team.")
    engine.projects.add_text(project.id, "returns.md", "Items may be returned within 30 days.")
    plan = engine.projects.new_chat("Acme", "Launch plan")
    engine.new_chat("Groceries")
    window.chats.refresh()
    panel = window.chat_list

    pick(qtbot, panel.project_filter, "Project: Acme")
    qtbot.waitUntil(lambda: isinstance(window.center.currentWidget(), ProjectPage), timeout=5000)
    page = window.center.currentWidget()
    assert isinstance(page, ProjectPage)
    assert page.title.text() == "Acme"
    assert page.summary.text().startswith("1 chat · 1 knowledge file · spent: nothing sent yet")
    assert [page.chats.item(i).text().split("\n")[0] for i in range(page.chats.count())] == [
        "Launch plan"
    ]
    files = page.editor.files
    assert files.item(0).text().startswith("returns.md  ≈")
    note = page.editor.budget_note.text()  # the budget in tokens, for a new chat of it
    assert note.startswith("≈")
    assert "tokens, sent whole (in a 1,000,000-token window)" in note
    page.editor.budget.setValue(0)  # (as typed: 0 % of the window)
    page.editor.budget.editingFinished.emit()
    qtbot.waitUntil(lambda: "none is sent whole" in page.editor.budget_note.text(), timeout=5000)

    # Edited on the page: the project's chats send it from their next request.
    page.editor.instructions.setPlainText("Answer as Acme's support team, briefly.")
    save = next(b for b in page.editor.findChildren(QPushButton) if b.text() == "Save instructions")
    qtbot.mouseClick(save, Qt.MouseButton.LeftButton)
    assert engine.projects.find("Acme").instructions == "Answer as Acme's support team, briefly."

    # Typed and not saved, then the page left for a chat: kept, not dropped.
    page.editor.instructions.setPlainText("Answer as Acme's support team, very briefly.")
    # A click on a chat opens it in the page's place.
    item = page.chats.item(0)
    rect = page.chats.visualItemRect(item)
    qtbot.mouseClick(page.chats.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: window.current is not None and window.current.chat.id == plan.id)
    session = window.current
    assert session is not None
    assert window.center.currentWidget() is window.shown
    qtbot.waitUntil(lambda: "very briefly" in system_of(session), timeout=10_000)
    assert engine.projects.find("Acme").instructions.endswith("very briefly.")

    # Chosen again, the page is back; its New chat starts a chat in the project.
    pick(qtbot, panel.project_filter, "All chats")
    pick(qtbot, panel.project_filter, "Project: Acme")
    qtbot.waitUntil(lambda: window.center.currentWidget() is page, timeout=5000)
    qtbot.mouseClick(page.new_chat, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.current is not None and window.current.chat.id != plan.id)
    made = window.current
    assert made is not None
    assert engine.projects.project_of(made.chat) == engine.projects.find("Acme")
    qtbot.waitUntil(lambda: made.plan is not None, timeout=10_000)

    # Every chat again: the middle shows the chat, not the page.
    pick(qtbot, panel.project_filter, "All chats")
    qtbot.waitUntil(lambda: window.center.currentWidget() is window.shown, timeout=5000)


def test_a_scan_can_be_added_to_a_project_only_as_a_document(
    window: MainWindow,
    engine: Engine,
    qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """A scan has no text to send as text: the choice says why and offers the document."""
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(make_pdf([""] * 3))
    seen: dict[str, bool] = {}

    def choose(box: QMessageBox) -> None:
        buttons = {b.text(): b for b in box.findChildren(QPushButton)}
        seen.update({name: b.isEnabled() for name, b in buttons.items()})
        seen["why"] = "As text: " in box.informativeText()
        qtbot.mouseClick(buttons["As a document"], Qt.MouseButton.LeftButton)

    _session, dialog = add_pdf_to_a_project(window, engine, qtbot, monkeypatch, scan, choose)
    assert seen == {"As a document": True, "As text": False, "Cancel": True, "why": True}
    assert engine.projects.find("Shop").files[0].pages == 3
    dialog.reject()


def add_pdf_to_a_project(
    window: MainWindow,
    engine: Engine,
    qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
    pdf: Path,
    answer: Callable[[QMessageBox], None],
) -> tuple[ChatSession, ProjectDialog]:
    """A demo chat in a new project "Shop"; its Project dialog's Add files… clicked with
    `pdf` picked in the system's file dialog, and the PDF question `answer`ed."""
    session = open_demo(window, engine, qtbot)
    project = engine.projects.new("Shop")
    engine.projects.move(session.chat, project.id)
    monkeypatch.setattr(
        "desktop_app.ui.projects.project_editor.QFileDialog.getOpenFileNames",
        lambda *a, **k: ([str(pdf)], ""),
    )
    window.dialogs.open_project()
    dialog = window.dialogs.project_dialog
    assert dialog is not None
    qtbot.waitUntil(dialog.project_box.isEnabled, timeout=5000)
    when_shown(QMessageBox, answer)
    add = next(b for b in dialog.findChildren(QPushButton) if b.text() == "Add files…")
    qtbot.mouseClick(add, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.project_box.files.count() == 1, timeout=10_000)
    return session, dialog
