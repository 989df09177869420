"""The context panel: the meter, pinned facts, compaction preview and undo, the circuit
breaker, the system prompt, the request inspector, and import/export from the window."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QMimeData, Qt, QTimer
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot
from pytestqt.wait_signal import SignalBlocker

from desktop_app.api.simulator import SimulatorServer
from desktop_app.api.simulator.script import Fault, FaultKind
from desktop_app.chats import Engine
from desktop_app.context.facts import Fact, FactSource
from desktop_app.context.plan import BlockState, Section
from desktop_app.context.policies import old_tool_result_ids
from desktop_app.core.blocks import ImageBlock, TextBlock, ToolResultBlock, ToolUseBlock
from desktop_app.core.errors import ErrorInfo
from desktop_app.core.messages import Message
from desktop_app.ui.context.facts_panel import MIME
from desktop_app.ui.conversation.composer import image_attachment
from desktop_app.ui.conversation.message_model import Role
from desktop_app.ui.conversation.session import ChatSession
from desktop_app.ui.dialogs.compaction_dialog import CompactionDialog
from desktop_app.ui.main_window import MainWindow
from tests.ui.conftest import TURN_TIMEOUT_MS, answer_fact_dialog, open_demo


def replanned(qtbot: QtBot, session: ChatSession) -> SignalBlocker:
    """Wait for the plan that follows a change (planning runs off the GUI thread)."""
    return qtbot.waitSignal(session.planned, timeout=10_000)


def test_the_meter_counts_the_draft_and_its_attachment_live(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot)
    plan = session.plan
    assert plan is not None
    before = plan.estimated_input
    picture = QImage(400, 300, QImage.Format.Format_RGB32)
    picture.fill(QColor("teal"))
    with replanned(qtbot, session):
        window.pane.composer.add_attachment(image_attachment(picture, "chart.png"))
    with replanned(qtbot, session):
        qtbot.keyClicks(window.pane.composer.edit, "What does this chart say?")
    plan = session.plan
    assert plan is not None
    last = plan.request.messages[-1]  # the next request holds the draft as Send would
    assert [type(b) for b in last.blocks] == [ImageBlock, TextBlock]
    assert last.blocks[1] == TextBlock("What does this chart say?")
    assert plan.estimated_input > before + 100  # the picture (≈160 tokens) and the words
    request = window.context.request
    window.context.tabs.setCurrentWidget(request)
    assert "with your draft as the last message" in request.sections.text()


def test_once_the_draft_rests_the_server_counts_the_request_and_the_panel_says_exact(
    window: MainWindow, engine: Engine, simulator: SimulatorServer, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot)
    with replanned(qtbot, session):
        qtbot.keyClicks(window.pane.composer.edit, "How many tokens is this, exactly?")
    qtbot.waitUntil(
        lambda: session.plan is not None and session.plan.exact_input is not None,
        timeout=TURN_TIMEOUT_MS,
    )
    plan = session.plan
    assert plan is not None
    assert plan.exact_input is not None
    counted = [r for r in simulator.received if r.path == "/v1/messages/count_tokens"][-1]
    assert (
        counted.body["messages"][-1]["content"][-1]["text"] == "How many tokens is this, exactly?"
    )
    assert plan.input_figure.exact
    assert (
        f"Exact, next request: {plan.exact_input.value:,} tokens" in window.context.figures.text()
    )
    # Typing on makes a new plan: an estimate again, until it is counted in its turn.
    with replanned(qtbot, session):
        qtbot.keyClicks(window.pane.composer.edit, " More.")
    assert session.plan is not None
    assert session.plan.exact_input is None


def test_the_overview_reads_at_a_glance_and_each_part_leads_to_what_it_holds(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    """The total first, large; the parts as rows, each a click away from what it holds;
    a chat that fills little of a large window gets a second bar for what it uses; the
    sentences on how it is counted only when asked for."""
    window.resize(1600, 900)
    session = open_demo(window, engine, qtbot)
    window.menus.context_action.setChecked(True)
    panel = window.context
    qtbot.waitUntil(panel.rows.isVisible, timeout=3000)
    plan = session.plan
    assert plan is not None
    assert f"≈{plan.estimated_input:,}</span> of {plan.context_window:,} tokens" in (
        panel.total.text()
    )
    assert "estimated here" in panel.total.text()
    for section in ("system", "facts", "tools", "summary", "messages", "reserved output"):
        assert panel.rows.tokens_of(section) == plan.sections.get(Section(section), 0)
    assert plan.estimated_input / plan.context_window < 0.25
    assert panel.meter.zoomed()  # a 1,000,000-token window: the used part, on its own scale
    assert panel.meter.height() >= 52

    def click_row(section: str) -> None:
        point = panel.rows.row_rect(section).center().toPoint()
        qtbot.mouseClick(panel.rows, Qt.MouseButton.LeftButton, pos=point)

    click_row("facts")
    assert panel.tabs.currentWidget() is panel.facts
    panel.tabs.setCurrentIndex(0)
    click_row("system")
    assert panel.tabs.currentWidget() is panel.system_tab
    panel.tabs.setCurrentIndex(0)
    with qtbot.waitSignal(panel.tools_requested, timeout=1000):
        click_row("tools")

    assert not panel.figures.isVisible()
    qtbot.mouseClick(panel.details_toggle, Qt.MouseButton.LeftButton)
    assert panel.figures.isVisible()
    assert "Calibration ×" in panel.figures.text()

    with replanned(qtbot, session):  # a small window: one bar says it all
        session.set_context_settings(replace(session.chat.settings, context_window=8_000))
    plan = session.plan
    assert plan is not None
    assert plan.estimated_input / plan.context_window > 0.25
    assert not panel.meter.zoomed()


def test_the_meter_adds_up_to_the_plan(window: MainWindow, engine: Engine, qtbot: QtBot) -> None:
    session = open_demo(window, engine, qtbot)
    plan = session.plan
    assert plan is not None
    meter = window.context.meter
    segments = dict(meter.segments())
    assert segments == {section: plan.sections.get(section, 0) for section in Section}
    assert sum(segments.values()) == plan.context_window
    assert f"≈{plan.estimated_input:,}" in window.context.figures.text()
    assert "estimated" in window.context.figures.text()
    # The demo's seeded replies were never sent: no figure may say it is exact.
    assert "exact" not in window.context.figures.text().lower()
    assert "facts" in meter.describe(Section.FACTS)
    meter.add_streaming(500)  # a reply being written shows up at once
    assert dict(meter.segments())[Section.MESSAGES] == plan.sections[Section.MESSAGES] + 500
    assert sum(dict(meter.segments()).values()) == plan.context_window


def test_clicking_the_messages_segment_shows_where_the_context_starts(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot, turns=30)
    settings = replace(session.chat.settings, keep_recent_turns=2)
    with replanned(qtbot, session):
        session.set_context_settings(settings)
    plan = session.plan
    assert plan is not None
    assert plan.first_sent_after_head is not None
    meter = window.context.meter
    spot = meter.segment_rect(Section.MESSAGES).center().toPoint()
    with qtbot.waitSignal(window.context.jump_requested) as jumped:
        qtbot.mouseClick(meter, Qt.MouseButton.LeftButton, pos=spot)
    assert jumped.args == [plan.first_sent_after_head]
    row = session.model.row_of(plan.first_sent_after_head)
    assert row is not None
    assert window.pane.messages.visualRect(session.model.index(row)).intersects(
        window.pane.messages.viewport().rect()
    )


def test_pinning_a_fact_changes_the_next_request(
    window: MainWindow, engine: Engine, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = open_demo(window, engine, qtbot)
    answer_fact_dialog(qtbot, "Ticket 5521 is escalated to tier 2")
    window.context.tabs.setCurrentWidget(window.context.facts)
    with replanned(qtbot, session):
        qtbot.mouseClick(window.context.facts.add_button, Qt.MouseButton.LeftButton)
    plan = session.plan
    assert plan is not None
    system = "\n".join(part.text for part in plan.request.system)
    assert "Ticket 5521 is escalated to tier 2" in system
    window.context.tabs.setCurrentWidget(window.context.request)
    assert "Ticket 5521" in window.context.request.body_text()
    assert "Ticket 5521" in window.context.effective.toPlainText()
    texts = [f.text for f in window.context.facts.model.facts()]
    assert texts[-1] == "Ticket 5521 is escalated to tier 2"
    assert "from you" in window.context.facts.model.describe(window.context.facts.model.facts()[-1])


def test_facts_are_edited_reordered_deleted_with_undo(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot)
    panel = window.context.facts
    first, second = panel.model.facts()
    with replanned(qtbot, session):
        panel.model.setData(panel.model.index(0), "Refund: 847.20 EUR, due 2026-04-14")
    assert session.state().facts[0].text == "Refund: 847.20 EUR, due 2026-04-14"
    assert session.state().facts[0].id == first.id  # the same fact, edited
    drag = QMimeData()
    drag.setData(MIME, second.id.encode())
    with replanned(qtbot, session):
        panel.model.dropMimeData(drag, Qt.DropAction.MoveAction, 0, 0, panel.model.index(-1))
    assert [f.id for f in session.state().facts] == [second.id, first.id]
    panel.list.setCurrentIndex(panel.model.index(1))
    with replanned(qtbot, session):
        qtbot.mouseClick(panel.delete_button, Qt.MouseButton.LeftButton)
    assert [f.id for f in session.state().facts] == [second.id]
    assert not panel.undo_bar.isHidden()
    with replanned(qtbot, session):
        qtbot.mouseClick(panel.undo_button, Qt.MouseButton.LeftButton)
    assert [f.id for f in session.state().facts] == [second.id, first.id]
    assert [f.id for f in engine.store.context_state(session.chat.id).facts] == [
        second.id,
        first.id,
    ]
    # The keyboard's drag: Alt+Up moves the current fact, which stays current.
    panel.list.setFocus()
    panel.list.setCurrentIndex(panel.model.index(1))
    with replanned(qtbot, session):
        qtbot.keyClick(panel.list, Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)
    assert [f.id for f in session.state().facts] == [first.id, second.id]
    assert panel.list.currentIndex().row() == 0
    with replanned(qtbot, session):
        qtbot.keyClick(panel.list, Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)
    assert [f.id for f in session.state().facts] == [second.id, first.id]


def test_suggested_facts_wait_for_accept_edit_or_reject(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot)
    state = session.state()
    for text in ("Customer id C-77", "Prefers French"):  # as Claude's pin_fact tool suggests
        state = state.pin(Fact(text, source=FactSource.MODEL, pending=True))
    engine.store.save_context_state(session.chat.id, state)
    with replanned(qtbot, session):
        session.reload()
    panel = window.context.facts
    assert not panel.suggestions.isHidden()
    assert [f.text for f in panel.suggested.facts()] == ["Customer id C-77", "Prefers French"]
    assert panel.suggested_label.text().startswith("<b>Suggested by Claude</b>")
    plan = session.plan
    assert plan is not None
    assert "C-77" not in "".join(p.text for p in plan.request.system)  # not sent until accepted
    panel.suggested_list.setCurrentIndex(panel.suggested.index(0))
    with replanned(qtbot, session):
        qtbot.mouseClick(panel.accept_button, Qt.MouseButton.LeftButton)
    panel.suggested_list.setCurrentIndex(panel.suggested.index(0))
    with replanned(qtbot, session):
        qtbot.mouseClick(panel.reject_button, Qt.MouseButton.LeftButton)
    plan = session.plan
    assert plan is not None
    system = "".join(p.text for p in plan.request.system)
    assert "Customer id C-77" in system
    assert "Prefers French" not in system
    assert panel.suggestions.isHidden()
    # An import's offer (another app's memory) says where it came from.
    with replanned(qtbot, session):
        session.chat.memory.suggest(["About me: lives in Lyon"], FactSource.IMPORT)
        session.reload()
    assert panel.suggested_label.text().startswith("<b>Suggested by an import</b>")
    assert "from an import" in panel.suggested.data(panel.suggested.index(0))


def test_compaction_preview_edit_apply_and_undo_restores_the_exact_request(
    window: MainWindow, engine: Engine, simulator: SimulatorServer, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot, turns=12)
    with replanned(qtbot, session):
        session.set_context_settings(replace(session.chat.settings, keep_recent_turns=3))
    before = session.plan
    assert before is not None
    original = json.dumps(before.request.body(), sort_keys=True)
    dialog = CompactionDialog(session, window)
    qtbot.addWidget(dialog)
    dialog.instructions.setText("keep every amount")
    dialog.show()
    qtbot.mouseClick(dialog.preview_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.apply_button.isEnabled(), timeout=TURN_TIMEOUT_MS)
    assert "Summarizes turns" in dialog.status.text()
    assert "→" in dialog.status.text()
    assert dialog.summary.toPlainText().startswith("[Simulated summary")
    assert simulator.message_requests()[-1].headers.get("x-contextdesk-purpose") == "compaction"
    dialog.summary.setPlainText("Edited summary: amounts 100.00–110.10 EUR were promised.")
    with replanned(qtbot, session):
        qtbot.mouseClick(dialog.apply_button, Qt.MouseButton.LeftButton)
    compacted = session.plan
    assert compacted is not None
    body = json.dumps(compacted.request.body(), ensure_ascii=False)
    assert "Edited summary: amounts 100.00–110.10 EUR were promised." in body
    assert compacted.estimated_input < before.estimated_input
    summaries = window.context.summaries
    assert "#1" in summaries.item(0).text()
    assert "edited" in summaries.item(0).text()
    # A timeline entry: the turns it covers, as its heading in the request names them, and
    # their tokens before → the summary's as it is sent: the Overview's Summary row (they
    # once said "messages 2–6 · ≈218 → ≈123" beside a row of ≈182)
    summary = session.state().active_summary
    assert summary is not None
    heading = re.search(r"earlier conversation \(turns (\d+)–(\d+)\)", body)
    assert heading is not None
    entry = summaries.item(0).text()
    assert f"turns {heading[1]}–{heading[2]} ({len(summary.covers)} messages)" in entry
    shown = re.search(r"≈([\d,]+) → ≈([\d,]+) tokens", entry)
    assert shown is not None
    after, row = int(shown[2].replace(",", "")), compacted.sections[Section.SUMMARY]
    assert abs(after - row) <= max(5, row // 20)  # (≈: a message's overhead, the mix)
    assert int(shown[1].replace(",", "")) > after
    assert "sent now" in entry
    assert window.context.undo_button.text() == "Undo summary #1"
    starts = [
        n for n, m in enumerate(session.messages) if m.role == "user" and not m.is_tool_results
    ]
    recent = sum(sum(engine.counter.blocks_of(m)) for m in session.messages[starts[-3] :])
    assert f"Keeps the last 3 turns word for word: ≈{recent:,} tokens now." in (
        window.context.policy_effect.text()
    )
    chips = [
        c.label
        for r in range(session.model.rowCount())
        for c in session.model.index(r).data(Role.BLOCKS)
    ]
    assert "summarized in #1" in chips
    with replanned(qtbot, session):
        qtbot.mouseClick(window.context.undo_button, Qt.MouseButton.LeftButton)
    after_undo = session.plan
    assert after_undo is not None
    assert json.dumps(after_undo.request.body(), sort_keys=True) == original
    assert "undone" in summaries.item(0).text()  # the list says so, not only the request
    assert not window.context.undo_button.isEnabled()


def test_a_compaction_preview_cancelled_while_it_waits_changes_nothing_and_is_on_record(
    window: MainWindow, engine: Engine, simulator: SimulatorServer, qtbot: QtBot
) -> None:
    """The preview runs as every slow action does (chats/slow.py): Cancel ends it on its
    worker, and its end is still recorded — the request it sent is in the ledger."""
    session = open_demo(window, engine, qtbot, turns=12)
    with replanned(qtbot, session):
        session.set_context_settings(replace(session.chat.settings, keep_recent_turns=3))
    before = json.dumps(session.plan.request.body(), sort_keys=True) if session.plan else ""
    simulator.queue(Fault(FaultKind.HANG))  # the summary never comes
    dialog = CompactionDialog(session, window)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.mouseClick(dialog.preview_button, Qt.MouseButton.LeftButton)
    assert dialog.preview_button.text() == "Cancel"
    qtbot.waitUntil(lambda: bool(simulator.message_requests()), timeout=5000)
    qtbot.mouseClick(dialog.preview_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.preview_button.text() == "Preview summary", timeout=5000)
    assert "Cancelled" in dialog.status.text()
    assert not dialog.apply_button.isEnabled()
    assert [r.purpose for r in session.chat.costs.sent_requests()] == ["compaction"]
    assert engine.store.context_state(session.chat.id).summaries == ()
    plan = session.plan
    assert plan is not None
    assert json.dumps(plan.request.body(), sort_keys=True) == before


def test_three_failed_compactions_pause_auto_compaction_with_the_reason(
    window: MainWindow, engine: Engine, simulator: SimulatorServer, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot, turns=10)
    tight = replace(
        session.chat.settings, context_window=6000, compaction_threshold=0.3, keep_recent_turns=2
    )
    with replanned(qtbot, session):
        session.set_context_settings(tight)
    for n in range(3):
        simulator.queue(Fault(FaultKind.SERVER_ERROR))  # the compaction request fails
        assert session.send((TextBlock(f"question {n}"),))
        qtbot.waitUntil(lambda: not session.busy, timeout=TURN_TIMEOUT_MS)
        assert session.messages[-1].text.startswith("[Simulated reply")  # trimming took over
        if n == 0:  # said at once, the reason with it
            qtbot.waitUntil(lambda: window.context.breaker.isVisible(), timeout=5000)
            said = window.context.breaker.text()
            assert "Auto-compaction failed</b> (1 of 3 before it pauses)" in said
            assert engine.store.context_state(session.chat.id).breaker.reason in said
            assert not window.context.resume_button.isVisible()
    qtbot.waitUntil(lambda: "paused" in window.context.breaker.text(), timeout=5000)
    state = engine.store.context_state(session.chat.id)
    assert state.breaker.paused
    assert state.breaker.failures == 3
    assert "paused" in window.context.breaker.text()
    assert state.breaker.reason in window.context.breaker.text()
    assert window.context.resume_button.isVisible()
    with replanned(qtbot, session):
        qtbot.mouseClick(window.context.resume_button, Qt.MouseButton.LeftButton)
    assert not engine.store.context_state(session.chat.id).breaker.paused
    assert not window.context.breaker.isVisible()


def test_the_system_prompt_is_edited_and_the_effective_one_shown(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot)
    window.context.tabs.setCurrentWidget(window.context.system_tab)
    window.context.system.setPlainText("You are a careful support agent.")
    with replanned(qtbot, session):
        qtbot.mouseClick(window.context.save_system, Qt.MouseButton.LeftButton)
    assert engine.store.chat(session.chat.id).system_prompt == "You are a careful support agent."
    effective = window.context.effective.toPlainText()
    assert effective.startswith("You are a careful support agent.")
    assert "847.20" in effective  # the pinned facts follow the base prompt, verbatim
    assert "tokens" in window.context.system_tokens.text()


def test_the_request_tab_shows_sent_requests_and_compares_them_with_the_next(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot, turns=2)
    view = window.context.request
    window.context.tabs.setCurrentWidget(view)
    view.which.setCurrentText(view.SENT)
    assert "Nothing has been sent" in view.sections.text()
    session.send((TextBlock("hello"),))
    qtbot.waitUntil(lambda: not session.busy, timeout=TURN_TIMEOUT_MS)
    qtbot.waitUntil(lambda: "Reported usage" in view.sections.text(), timeout=5000)
    assert "(exact)" in view.sections.text()
    assert json.loads(view.body_text()) == session.chat.costs.sent_body(1)  # from the ledger
    assert '"hello"' in view.body_text()
    view.which.setCurrentText(view.DIFF)  # the last sent against the next, by default
    assert view.pick.currentText().startswith("#1 ·")
    assert view.against.currentText() == view.NEXT_ITEM
    assert view.sections.text().startswith("The earlier request is a prefix of the later one")
    assert any(line.startswith("+") for line in view.body_text().splitlines())
    view.which.setCurrentText(view.NEXT)
    assert 'a one-word message ("Hello") would send' in view.sections.text()
    assert "Tokens by section" in view.sections.text()
    shown = json.loads(view.body_text())
    assert shown["messages"][-1]["content"][-1]["text"] == "Hello"  # it ends as a send would
    assert shown == session.chat.plans.plan("Hello").request.body()
    qtbot.keyClicks(view.search, "hello")
    qtbot.keyClick(view.search, Qt.Key.Key_Return)  # found in the folded request
    found = view.tree.currentItem()
    assert found is not None
    assert "hello" in view.tree.value_at(found.data(0, Qt.ItemDataRole.UserRole)).lower()
    qtbot.mouseClick(view.raw, Qt.MouseButton.LeftButton)  # and in its text
    qtbot.keyClick(view.search, Qt.Key.Key_Return)
    assert view.text.textCursor().selectedText() == "hello"


def test_the_request_tab_asks_the_ledger_which_requests_carried_a_text(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot, turns=2)
    view = window.context.request
    window.context.tabs.setCurrentWidget(view)
    for text in ("The codename is bluebird.", "And the next step?"):
        session.send((TextBlock(text),))
        qtbot.waitUntil(lambda: not session.busy, timeout=TURN_TIMEOUT_MS)
    first = session.messages[-4]  # the codename, left out from now on
    assert first.text == "The codename is bluebird."
    session.set_excluded(first, True)
    qtbot.waitUntil(  # the plan that leaves it out
        lambda: (
            session.plan is not None
            and session.plan.block_status(first, 0).state is BlockState.EXCLUDED
        ),
        timeout=10_000,
    )
    qtbot.keyClicks(view.search, "bluebird")
    qtbot.mouseClick(view.ledger_button, Qt.MouseButton.LeftButton)
    shown = view.trace.text()
    assert "was in 2 of 2 requests: #1–#2 (last sent in request #2," in shown
    assert "Not in the next request: Message #7 (you) is left out of the context." in shown
    view.trace.linkActivated.emit("1")  # as a click on "#1" does
    assert view.which.currentText() == view.SENT
    assert view.pick.currentData() == 1
    assert json.loads(view.body_text()) == session.chat.costs.sent_body(1)
    assert view.text.textCursor().selectedText() == "bluebird"  # at the text

    # From the message itself: its menu asks the same question of the ledger.
    window.context.tabs.setCurrentIndex(0)  # (the Overview)
    pane = window.shown
    assert pane is not None
    menu = pane.messages.menu_for(first)
    asked = next(a for a in menu.actions() if a.text() == "In which requests was it sent?")
    asked.trigger()
    assert window.context.tabs.currentWidget() is view
    assert view.search.text() == "The codename is bluebird."
    assert "was in 2 of 2 requests" in view.trace.text()
    assert "Message #7 (you) is left out of the context." in view.trace.text()
    # Another chat opened: the answer was this chat's, and goes (it stayed).
    window.open_chat(engine.new_chat("Another").id)
    qtbot.waitUntil(lambda: view.chat is not None and view.chat.id != session.chat.id)
    assert not view.trace.isVisible()


def test_clearing_old_tool_results_previews_the_change(
    window: MainWindow, engine: Engine, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = open_demo(window, engine, qtbot, turns=12)
    ids = old_tool_result_ids(session.messages, 2)
    assert ids  # the demo chat calls read_file every third turn
    asked: list[str] = []

    def answer(parent: object, title: str, text: str) -> QMessageBox.StandardButton:
        asked.append(text)
        return QMessageBox.StandardButton.Yes

    monkeypatch.setattr(QMessageBox, "question", answer)
    assert session.plan is not None
    before = session.plan.estimated_input
    with replanned(qtbot, session):
        qtbot.mouseClick(window.context.clear_results_button, Qt.MouseButton.LeftButton)
    plan = session.plan
    assert plan is not None
    after = plan.estimated_input  # what the question said it would be
    assert f"\n\nNext request: ≈{before:,} → ≈{after:,} tokens." in asked[0]
    assert after < before
    states = {
        c.state
        for r in range(session.model.rowCount())
        for c in session.model.index(r).data(Role.BLOCKS)
        if c.kind == "tool_result"
    }
    assert "cleared" in states


def test_clearing_results_that_are_shorter_than_their_placeholder_is_not_offered(
    window: MainWindow, engine: Engine, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Results of a word or two cost less than the note that would stand in for them:
    clearing them would make the request bigger, so it says so and changes nothing."""
    chat = engine.new_chat("Tiny results")
    turns = []
    for n in range(14):
        call = ToolUseBlock(f"toolu_{n}", "current_time", {})
        turns += [
            Message("user", (TextBlock(f"Time check {n}?"),)),
            Message("assistant", (call,)),
            Message("user", (ToolResultBlock(f"toolu_{n}", "ok"),)),
            Message("assistant", (TextBlock("Done."),)),
        ]
    engine.store.append_messages(chat.id, turns)
    window.chat_list.set_chats(engine.store.list_chats())
    session = window.open_chat(chat.id)
    assert session is not None
    qtbot.waitUntil(lambda: session.plan is not None, timeout=5000)
    told: list[str] = []
    monkeypatch.setattr(
        QMessageBox, "information", lambda parent, title, text: told.append(f"{title}: {text}")
    )
    monkeypatch.setattr(QMessageBox, "question", lambda *args: pytest.fail("offered anyway"))
    qtbot.mouseClick(window.context.clear_results_button, Qt.MouseButton.LeftButton)
    assert told[0].startswith("It would not make the request smaller:")
    assert not engine.store.context_state(chat.id).cleared_results


def test_import_lists_the_problems_and_imports_nothing(
    window: MainWindow, engine: Engine, qtbot: QtBot, tmp_path: Path
) -> None:
    before = len(engine.store.list_chats())
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "contextdesk.chat", "version": 1, "messages": 5}')
    assert window.import_chat(str(broken)) is None
    box = window.findChild(QMessageBox, "importProblems")
    assert box is not None
    assert "nothing was changed" in box.text()
    assert "chat: Field required" in box.informativeText()
    assert "messages: Input should be a valid list" in box.informativeText()  # every problem
    assert len(engine.store.list_chats()) == before
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    session = window.import_chat(str(good))
    assert session is not None
    assert [m.text for m in session.messages] == ["hi"]
    assert window.findChild(QMessageBox, "importRepairs") is None  # nothing was changed


def test_an_import_that_needed_repairs_lists_every_change(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    odd = tmp_path / "from-another-app.json"
    odd.write_text(
        json.dumps(
            {
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "human", "content": "hi"},
                    {"role": "assistant", "content": "Hello!  "},
                ]
            }
        )
    )
    session = window.import_chat(str(odd))
    assert session is not None
    box = window.findChild(QMessageBox, "importRepairs")
    assert box is not None
    assert box.isVisible()
    assert "imported with 3 changes" in box.text()
    details = box.detailedText().splitlines()
    assert details[0].startswith("messages.0: moved a system message into the system prompt")
    assert details[1].startswith("messages.1: read the role 'human' as 'user'")
    assert details[2].startswith("messages.2: removed trailing whitespace")


def test_export_from_the_chat_list_writes_json(
    window: MainWindow,
    engine: Engine,
    qtbot: QtBot,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session = open_demo(window, engine, qtbot, turns=2)
    target = tmp_path / "out.json"
    monkeypatch.setattr(
        "desktop_app.ui.chat_list.controller.QFileDialog.getSaveFileName",
        lambda *args: (str(target), ""),
    )
    index = window.chat_list.index_of(session.chat.id)
    menu = window.chat_list.list.menu_for(index)  # the chat's right-click menu
    next(a for a in menu.actions() if a.text() == "Export as JSON…").trigger()
    qtbot.waitUntil(target.exists, timeout=10000)  # (written off the GUI thread)
    exported = json.loads(target.read_text())
    assert exported["format"] == "contextdesk.chat"
    assert len(exported["messages"]) == len(session.messages)


def test_sending_old_thinking_again_is_confirmed_with_its_cost(
    window: MainWindow, engine: Engine, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = open_demo(window, engine, qtbot, turns=9)
    answers = [QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes]
    asked: list[str] = []

    def answer(parent: object, title: str, text: str) -> QMessageBox.StandardButton:
        asked.append(text)
        return answers.pop(0)

    monkeypatch.setattr(QMessageBox, "question", answer)
    box = window.context.drop_thinking
    box.setChecked(False)  # declined: nothing changes
    assert box.isChecked()
    assert engine.store.chat(session.chat.id).settings.drop_old_thinking
    assert session.plan is not None
    before = session.plan.estimated_input
    with replanned(qtbot, session):
        box.setChecked(False)  # accepted
    assert not engine.store.chat(session.chat.id).settings.drop_old_thinking
    plan = session.plan
    assert plan is not None
    after = plan.estimated_input  # what the question said it would be
    assert f"\n\nNext request: ≈{before:,} → ≈{after:,} tokens." in asked[1]
    assert after > before  # thinking costs tokens when it is sent


def test_without_a_chat_the_panel_says_what_it_will_show(window: MainWindow) -> None:
    assert window.context.currentWidget() is window.context.empty
    assert "next request" in window.context.empty.text()


def test_a_hidden_request_tab_is_not_rebuilt_on_every_plan(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot)
    view = window.context.request
    assert not view.isVisible()
    assert view.body_text() == ""  # typing re-plans; nothing serialized while hidden
    with replanned(qtbot, session):
        session.pin_fact("Order 4471-B ships on 2026-05-02")
    assert view.body_text() == ""
    window.context.tabs.setCurrentWidget(view)  # shown: brought up to date at once
    assert "Order 4471-B ships on 2026-05-02" in view.body_text()


def test_the_next_request_reads_as_folds_with_their_tokens_and_finds_inside_them(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    window.resize(1600, 900)
    session = open_demo(window, engine, qtbot)
    with replanned(qtbot, session):
        session.pin_fact("Order 4471-B ships on 2026-05-02")
    window.menus.context_action.setChecked(True)
    view = window.context.request
    window.context.tabs.setCurrentWidget(view)
    plan = session.plan
    assert plan is not None
    tree = view.tree
    assert tree.isVisible()
    assert not view.text.isVisible()
    items = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    top = {item.text(0).split()[0]: item for item in items if item is not None}
    folds = [item.text(0) for item in top.values()]
    body = plan.request.body()
    messages = plan.sections[Section.MESSAGES] + plan.sections.get(Section.SUMMARY, 0)
    assert f"messages  [{len(body['messages']):,} items] · ≈{messages:,} tokens" in folds
    system = plan.sections.get(Section.SYSTEM, 0) + plan.sections[Section.FACTS]
    assert f"system  [{len(body['system']):,} items] · ≈{system:,} tokens" in folds
    assert top["messages"].childCount() == 1  # not made until opened
    top["messages"].setExpanded(True)
    assert top["messages"].childCount() == len(body["messages"])
    # Find opens the folds on the way to the match, and selects it
    qtbot.keyClicks(view.search, "4471-B")
    qtbot.keyClick(view.search, Qt.Key.Key_Return)
    found = tree.currentItem()
    assert found is not None
    assert "4471-B" in tree.value_at(found.data(0, Qt.ItemDataRole.UserRole))
    # A long string shows its start; a click shows all of it
    assert "click to show all" in found.text(0)
    rect = tree.visualItemRect(found)
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert "Order 4471-B ships on 2026-05-02" in found.text(0)
    assert "click to show all" not in found.text(0)
    # Raw JSON: the body as sent, as text
    qtbot.mouseClick(view.raw, Qt.MouseButton.LeftButton)
    assert view.text.isVisible()
    assert not tree.isVisible()
    assert json.loads(view.body_text()) == body


def test_compact_now_is_offered_only_when_it_can_do_something(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot, turns=3)
    button = window.context.compact_button
    assert not button.isEnabled()
    assert "no turns older than the 10 most recent" in button.toolTip()
    with replanned(qtbot, session):
        session.set_context_settings(replace(session.chat.settings, keep_recent_turns=1))
    assert button.isEnabled()
    assert "summary of the older turns" in button.toolTip()


def test_the_fact_dialog_is_roomy_enter_breaks_a_line_ctrl_enter_pins_tab_leaves(
    qtbot: QtBot,
) -> None:
    from desktop_app.ui.dialogs.fact_dialog import FactDialog

    dialog = FactDialog(None, "Pin a fact", "Sent, verbatim, with every request:")
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    assert dialog.width() >= 480
    assert dialog.height() >= 260
    qtbot.keyClicks(dialog.edit, "Order 88213")
    qtbot.keyClick(dialog.edit, Qt.Key.Key_Return)  # a fact may span lines
    qtbot.keyClicks(dialog.edit, "ships Friday")
    assert dialog.isVisible()
    assert dialog.text() == "Order 88213\nships Friday"
    qtbot.keyClick(dialog.edit, Qt.Key.Key_Tab)  # Tab moves on, it types nothing
    assert not dialog.edit.hasFocus()
    assert "\t" not in dialog.edit.toPlainText()
    dialog.edit.setFocus()
    qtbot.keyClick(dialog.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert dialog.result() == dialog.DialogCode.Accepted


def test_the_request_json_is_coloured_and_a_comparison_as_a_diff(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    open_demo(window, engine, qtbot)
    request = window.context.request
    window.context.tabs.setCurrentWidget(request)
    qtbot.waitUntil(lambda: '"model"' in request.body_text(), timeout=5000)
    document = request.text.document()
    line = next(
        document.findBlockByNumber(n)
        for n in range(document.blockCount())
        if '"model"' in document.findBlockByNumber(n).text()
    )
    colours = {f.format.foreground().color().name() for f in line.layout().formats()}
    assert len(colours) >= 2  # the key and its string value, each in its colour


def test_one_turn_is_said_in_the_singular(window: MainWindow, engine: Engine, qtbot: QtBot) -> None:
    session = open_demo(window, engine, qtbot)
    spin = window.context.keep_recent
    with replanned(qtbot, session):
        session.set_context_settings(replace(session.chat.settings, keep_recent_turns=1))
    assert spin.text() == "1 turn"
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, "4")
    qtbot.keyClick(spin, Qt.Key.Key_Return)
    assert spin.value() == 4
    assert spin.text() == "4 turns"


def test_an_empty_chat_counts_one_next_request_in_the_overview_and_the_request_tab(
    window: MainWindow, qtbot: QtBot
) -> None:
    def messages_in(text: str) -> int:
        found = re.search(r"messages(?:&nbsp;| )≈([\d,]+)", text)
        assert found is not None, text
        return int(found[1].replace(",", ""))

    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    session = window.current
    assert session is not None
    qtbot.waitUntil(lambda: session.plan is not None, timeout=5000)
    panel = window.context
    panel.tabs.setCurrentWidget(panel.request)
    said = panel.request.sections.text()
    assert 'a one-word message ("Hello") would send' in said
    assert panel.rows.tokens_of("messages") == messages_in(said) > 0
    assert '"Hello" standing for the empty composer' in panel.figures.text()
    with replanned(qtbot, session):
        qtbot.keyClicks(window.pane.composer.edit, "A longer first question about the refund")
    said = panel.request.sections.text()
    assert "with your draft as the last message" in said
    assert panel.rows.tokens_of("messages") == messages_in(said)
    assert "standing for" not in panel.figures.text()


def test_names_and_errors_from_outside_are_shown_as_text_never_as_markup(
    window: MainWindow, engine: Engine, qtbot: QtBot, tmp_path: Path
) -> None:
    """A project imported with an <img> for a name, an HTML error page from a proxy: a
    label reading them as rich text would load the image's path (any file, /dev/zero)."""
    picture = tmp_path / "big.png"
    big = QImage(600, 600, QImage.Format.Format_RGB32)
    big.fill(QColor("red"))
    assert big.save(str(picture))
    tag = f'<img src="{picture}">'
    session = open_demo(window, engine, qtbot)
    project = engine.projects.new(f"Acme {tag}")
    engine.projects.move(session.chat, project.id)
    session.settings_changed()
    line = window.context.project_line
    qtbot.waitUntil(lambda: "Acme" in line.text(), timeout=5000)
    assert line.sizeHint().height() < 200  # the picture was not read and drawn
    assert "&lt;img" in line.text()  # the name, as written
    window.banner.show_error(
        ErrorInfo("Bad gateway", f"<html><body>{tag} upstream failed</body></html>")
    )
    assert window.banner.message.text().startswith("<html>")
    assert window.banner.message.sizeHint().height() < 200


def test_a_pinned_fact_is_a_card_that_holds_all_its_words(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    """However long, a fact's card grows with its lines (nothing cut), its meta line
    under them; a short one stays one line high."""
    window.resize(1600, 900)
    session = open_demo(window, engine, qtbot)
    long = "The customer agreed on the phone to " + "a refund in two parts, " * 12 + "in May."
    with replanned(qtbot, session):
        session.pin_fact(long)
    with replanned(qtbot, session):
        session.pin_fact("Short one")
    window.menus.context_action.setChecked(True)
    panel = window.context
    panel.tabs.setCurrentWidget(panel.facts)
    view = panel.facts.list
    qtbot.waitUntil(view.isVisible, timeout=3000)
    texts = [view.model().index(r, 0).data() for r in range(view.model().rowCount())]
    long_row = next(r for r, t in enumerate(texts) if t.startswith("The customer agreed"))
    short_row = next(r for r, t in enumerate(texts) if t.startswith("Short one"))
    line = view.fontMetrics().height()
    long_rect = view.visualRect(view.model().index(long_row, 0))
    short_rect = view.visualRect(view.model().index(short_row, 0))
    width = long_rect.width() - 40  # (the card's paddings and edge)
    needed = view.fontMetrics().boundingRect(0, 0, width, 10_000, Qt.TextFlag.TextWordWrap, long)
    assert long_rect.height() >= needed.height() + line  # its lines, and the meta line
    assert short_rect.height() < 4 * line
    assert long_rect.right() <= view.viewport().width()  # no wider than the panel


def test_a_claude_export_imports_every_chat_and_says_what_going_on_costs(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    export = Path(__file__).resolve().parents[1] / "data" / "exports" / "claude_conversations.json"
    session = window.import_chat(str(export))
    assert session is not None
    assert session.chat.title == "Refund for order 88213"  # the first, opened
    titles = {c.title for c in engine.store.list_chats()}
    assert {"Refund for order 88213", "What is a haiku?"} <= titles
    box = window.findChild(QMessageBox, "exportImported")
    assert box is not None
    assert box.text() == "2 chats imported from Claude."
    assert "photo.jpg is not in the export" in box.detailedText()
    assert window.import_chat(str(export)) is None  # again: nothing new
    again = [b for b in window.findChildren(QMessageBox, "exportImported") if b is not box]
    assert "2 were imported before" in again[-1].text()


def system_text(session: ChatSession) -> str:
    plan = session.plan
    return "".join(p.text for p in plan.request.system) if plan else ""


def test_a_chatgpt_export_offers_its_custom_instructions_in_the_chat_it_came_with(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    export = Path(__file__).resolve().parents[1] / "data" / "exports"
    session = window.import_chat(str(export / "chatgpt_conversations-000.json"))
    assert session is not None
    box = window.findChild(QMessageBox, "exportImported")
    assert box is not None
    model = engine.store.chat(session.chat.id).model  # (Settings': the demo asks for none)
    named = {m.id: m.display_name for m in engine.known_models()}.get(model, model)
    assert f"Their models in ChatGPT (gpt-5) go on as {named}." in box.informativeText()
    panel = window.context.facts
    qtbot.waitUntil(lambda: not panel.suggestions.isHidden(), timeout=5000)
    assert [f.text for f in panel.suggested.facts()] == [
        "About me: I live in Bergen and travel by train.",
        "How to respond: Give prices in NOK.",
    ]
    assert panel.suggested_label.text().startswith("<b>Suggested by an import</b>")
    qtbot.waitUntil(lambda: session.plan is not None, timeout=10_000)
    plan = session.plan
    assert plan is not None
    assert "Bergen and travel" not in "".join(p.text for p in plan.request.system)
    qtbot.mouseClick(panel.accept_all_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.suggestions.isHidden(), timeout=5000)
    qtbot.waitUntil(lambda: "Give prices in NOK" in system_text(session), timeout=10_000)
    assert [f.pending for f in session.state().facts] == [False, False]


def test_a_long_import_shows_its_progress_and_stop_keeps_what_came(
    window: MainWindow, engine: Engine, qtbot: QtBot, tmp_path: Path
) -> None:
    from PySide6.QtWidgets import QProgressDialog, QPushButton

    from tests.integration.test_import_exports import chatgpt_export

    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(chatgpt_export(400)))
    seen: list[str] = []

    def stop() -> None:
        dialog = window.findChild(QProgressDialog, "importProgress")
        if dialog is None or not dialog.isVisible() or "Importing" not in dialog.labelText():
            QTimer.singleShot(20, stop)
            return
        seen.append(dialog.labelText())
        button = dialog.findChild(QPushButton)
        assert button is not None
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)  # Stop

    QTimer.singleShot(0, stop)
    session = window.import_chat(str(export))
    assert seen
    assert seen[0].startswith("Importing ")
    stored = len(engine.store.list_chats())
    assert 0 < stored < 400  # the chats stored by then stay; the rest never came
    assert session is not None  # the first is opened
    box = window.findChild(QMessageBox, "exportImported")
    assert box is not None
    assert box.text() == f"{stored} chats imported from ChatGPT before you stopped it."


def test_an_export_asks_once_which_model_its_chats_go_on_with(
    open_window: Callable[[Engine], MainWindow],
    qtbot: QtBot,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    engine = Engine.open(tmp_path / "own")  # with a server (not the demo): models to choose
    asked: list[tuple[str, list[str]]] = []

    def choose(_parent: object, _title: str, label: str, items: list[str], *_: object) -> Any:
        asked.append((label, items))
        return next(i for i in items if i.startswith("Claude Haiku 5.5")), True

    monkeypatch.setattr("PySide6.QtWidgets.QInputDialog.getItem", choose)
    window = open_window(engine)
    try:
        export = (
            Path(__file__).resolve().parents[1] / "data" / "exports" / "claude_conversations.json"
        )
        session = window.import_chat(str(export))
        assert session is not None
        ((label, items),) = asked  # once for the whole export
        assert label.startswith("A Claude export: its chats go on with which Claude model?")
        assert items[0].startswith("Claude Sonnet 5.5 · ")  # Settings' model first, by name
        assert {c.model for c in engine.store.list_chats()} == {"claude-haiku-5-5"}
    finally:
        window.close()  # (before its engine)
        engine.close()


def test_the_wheel_scrolls_the_panel_past_its_number_boxes_without_changing_them(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    from PySide6.QtCore import QPoint, QPointF
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    session = open_demo(window, engine, qtbot)
    panel = window.context
    keep = panel.keep_recent
    before = keep.value()
    bar = panel._overview_scroll.verticalScrollBar()
    bar.setValue(0)
    centre = QPointF(keep.rect().center())
    down = QWheelEvent(
        centre,
        QPointF(keep.mapToGlobal(keep.rect().center())),
        QPoint(0, 0),
        QPoint(0, -120),  # one notch down
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(keep, down)
    assert keep.value() == before
    assert session.chat.settings.keep_recent_turns == before
    assert bar.value() > 0 or bar.maximum() == 0  # the panel moved instead
