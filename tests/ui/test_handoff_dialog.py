"""Chat → Continue in a new chat…, as a user does it: a preview (a digest here: the demo),
a fact moved and one left, the summary edited; Continue opens the new chat, whose first
request holds exactly that, and each chat links to the other."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop_app.chats import Engine
from desktop_app.ui.conversation.pane import ConversationPane
from desktop_app.ui.dialogs.handoff_dialog import HandoffDialog
from desktop_app.ui.main_window import MainWindow
from tests.ui.conftest import open_demo


def test_a_chat_continues_in_a_new_one_with_what_the_user_chose(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot, turns=8)
    old = session.chat
    session.pin_fact("Ticket 5521 is open.")
    qtbot.waitUntil(lambda: len(session.state().facts) >= 2, timeout=5000)
    facts = {f.text: f.id for f in session.state().facts}
    qtbot.keyClick(
        window,
        Qt.Key.Key_N,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    qtbot.waitUntil(lambda: isinstance(window.dialogs.handoff_dialog, HandoffDialog), timeout=5000)
    dialog = window.dialogs.handoff_dialog
    assert dialog is not None
    assert dialog.by_digest.isChecked()  # the demo: no summary request by default
    dialog.keep.setValue(1)
    qtbot.mouseClick(dialog.preview_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(dialog.continue_button.isEnabled, timeout=10_000)
    assert "the last 4 messages verbatim" in dialog.status.text()  # (a turn with a tool step)
    assert "Its first request: ≈" in dialog.status.text()
    assert "this chat's next: ≈" in dialog.status.text()
    assert dialog.summary.toPlainText()  # the digest, to edit
    dialog.summary.setPlainText("Refund agreed for invoice 88213; waiting on the courier.")
    ticket = dialog.fact_boxes[facts["Ticket 5521 is open."]]
    ticket.setCurrentIndex(ticket.findText("Move"))
    others = [box for fid, box in dialog.fact_boxes.items() if fid != facts["Ticket 5521 is open."]]
    for box in others:
        box.setCurrentIndex(box.findText("Leave"))
    qtbot.mouseClick(dialog.continue_button, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: window.shown is not None and window.shown.session.chat.id != old.id)
    pane = window.shown
    assert isinstance(pane, ConversationPane)
    new = pane.session.chat
    assert new.title == f"{old.title} (continued)"
    assert [f.text for f in new.state.facts] == ["Ticket 5521 is open."]
    assert "Ticket 5521 is open." not in [f.text for f in old.state.facts]  # moved
    qtbot.waitUntil(lambda: pane.session.plan is not None, timeout=10_000)
    plan = pane.session.plan
    assert plan is not None
    system = "".join(p.text for p in plan.request.system)
    assert "Refund agreed for invoice 88213; waiting on the courier." in system
    assert "Ticket 5521 is open." in system
    assert len(new.messages()) == 4  # the last turn, verbatim
    assert f'Continued from <a href="{old.id}">“{old.title}”</a>' == pane.links.text()

    pane.links.linkActivated.emit(old.id)  # as a click on the link does
    qtbot.waitUntil(lambda: window.shown is not None and window.shown.session.chat.id == old.id)
    back = window.shown
    assert back is not None
    assert f'Continued in <a href="{new.id}">“{new.title}”</a>' == back.links.text()
