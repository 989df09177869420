"""`/name` in the composer (issue 36, item 3): typing `/` lists the MCP servers' prompts;
choosing one with the keys asks for its arguments, and its text becomes the draft —
Enter chooses, it does not send."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QApplication, QInputDialog
from pytestqt.qtbot import QtBot

from desktop_app.chats import Engine
from desktop_app.ui.main_window import MainWindow
from tests.ui.conftest import when_shown
from tests.ui.test_mcp_dialog import with_test_server


def visible_popup() -> QAbstractItemView | None:
    return next(
        (
            w
            for w in QApplication.topLevelWidgets()
            if w.objectName() == "promptCommands" and w.isVisible()
        ),
        None,
    )  # type: ignore[return-value]


def test_a_slash_lists_the_servers_prompts_and_one_becomes_the_draft(
    engine: Engine, open_window: Callable[[Engine], MainWindow], qtbot: QtBot
) -> None:
    window, session = with_test_server(engine, open_window, qtbot)
    pane = window.shown
    assert pane is not None
    edit = pane.composer.edit
    before = len(session.messages)
    edit.setFocus()
    qtbot.keyClicks(edit, "/re")
    qtbot.waitUntil(lambda: visible_popup() is not None, timeout=20_000)
    popup = visible_popup()
    assert popup is not None
    shown = [popup.model().index(r, 0).data() for r in range(popup.model().rowCount())]
    assert shown == ["/review — Ask for a careful review of a topic · t"]

    def answer(dialog: QInputDialog) -> None:
        assert dialog.labelText() == "topic"
        dialog.setTextValue("the refund policy")
        dialog.accept()

    when_shown(QInputDialog, answer)
    qtbot.keyClicks(edit, "view")  # "/review" typed whole: the first command is chosen
    qtbot.keyClick(popup, Qt.Key.Key_Return)
    qtbot.waitUntil(
        lambda: edit.toPlainText().startswith("Review the refund policy"), timeout=20_000
    )
    assert edit.toPlainText() == "Review the refund policy carefully, and list what is missing."
    assert len(session.messages) == before  # Enter chose the command: nothing was sent
    assert not session.busy

    edit.clear()
    qtbot.keyClicks(edit, "/nothing-like-it")
    QApplication.processEvents()
    assert visible_popup() is None  # no prompt by that name: no list

    def planned_with_draft() -> bool:  # (the draft's plan, before the engine closes)
        plan = session.plan
        return plan is not None and "/nothing-like-it" in str(plan.request.messages[-1].blocks)

    qtbot.waitUntil(planned_with_draft, timeout=20_000)
