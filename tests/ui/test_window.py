"""The window around the conversation: first run, the chat list, remembered state, long
chats, the per-message actions, and what the window looks like."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path

import keyring
import pytest
from PySide6.QtCore import QMimeData, QModelIndex, QPoint, Qt, QUrl
from PySide6.QtGui import QAction, QColor, QGuiApplication, QImage, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QLineEdit,
    QMenu,
    QPushButton,
    QToolButton,
    QWidget,
)
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from desktop_app.api.simulator import Fault, FaultKind, SimulatorServer
from desktop_app.chats import Engine
from desktop_app.config.secrets import KeySource
from desktop_app.config.settings import load
from desktop_app.config.window_state import AppState
from desktop_app.context.plan import BlockState
from desktop_app.core.blocks import ImageBlock, ThinkingBlock
from desktop_app.core.errors import ErrorInfo
from desktop_app.core.messages import Message
from desktop_app.demo_chat import DEMO_TITLE, create_demo_chat
from desktop_app.tokens.images import image_size
from desktop_app.ui import theme
from desktop_app.ui.chat_list.model import ACTIVITY_ROLE, GROUP_ROLE, HIT_ROLE, Activity
from desktop_app.ui.chat_list.panel import ChatListPanel
from desktop_app.ui.conversation.composer import file_attachment
from desktop_app.ui.conversation.message_model import OLDER_PAGE, Role
from desktop_app.ui.conversation.session import FIRST_PAGE
from desktop_app.ui.dialogs.settings_dialog import SettingsDialog
from desktop_app.ui.gui import make_app
from desktop_app.ui.main_window import MainWindow
from tests.fakes.keyring_backend import LockedKeyring
from tests.ui.conftest import TURN_TIMEOUT_MS, open_demo, when_shown
from tests.ui.test_conversation import type_and_send
from tests.ui.test_text_sizes import cut_words
from tests.unit.builders import a, u

OpenWindow = Callable[[Engine], MainWindow]


def test_a_new_user_without_a_key_is_offered_a_key_or_the_demo(
    tmp_path: Path, open_window: OpenWindow, qtbot: QtBot
) -> None:
    engine = Engine.open(tmp_path / "fresh")
    try:
        window = open_window(engine)
        qtbot.waitUntil(lambda: window.center.currentWidget() is window.welcome, timeout=5000)
        assert not window.demo_label.isVisible()
        window.resize(1440, 900)
        qtbot.wait(50)  # (laid out by events)
        assert cut_words(window) == []  # every line of the welcome whole (they were cut)
        qtbot.mouseClick(window.welcome.try_demo, Qt.MouseButton.LeftButton)
        assert engine.demo
        assert window.demo_label.isVisible()
        assert "offline demo" in window.windowTitle()
        assert window.current is not None
        assert window.current.chat.title == DEMO_TITLE
        assert window.center.currentWidget() is window.pane
        assert window.current.model.rowCount() > 0
        window.close()
    finally:
        engine.close()


def test_a_stored_key_skips_the_welcome(
    tmp_path: Path, open_window: OpenWindow, qtbot: QtBot
) -> None:
    keyring.set_password("ContextDesk", "anthropic-api-key", "sk-ant-test")
    engine = Engine.open(tmp_path / "keyed")
    try:
        window = open_window(engine)
        qtbot.waitUntil(lambda: window.connection.key_known, timeout=5000)
        assert window.connection.key is not None
        assert window.connection.key.source is KeySource.KEYRING
        assert window.center.currentWidget() is not window.welcome
        window.close()
    finally:
        engine.close()


def test_settings_explain_a_locked_keyring_and_offer_the_session(
    engine: Engine, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    keyring.set_keyring(LockedKeyring())
    dialog = SettingsDialog(engine.settings, engine.secrets, "none yet", [])
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.key.setText("sk-ant-secret")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert dialog.key_problem.isVisible()
    assert "session only" in dialog.key_problem.text()
    assert dialog.session_only.isChecked()
    assert dialog.result() != QDialog.DialogCode.Accepted  # nothing was lost: still open
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert dialog.result() == QDialog.DialogCode.Accepted
    key = engine.secrets.get()  # the session key is found before the locked keyring
    assert key is not None
    assert (key.value, key.source) == ("sk-ant-secret", KeySource.SESSION)


def test_settings_change_what_new_chats_and_the_composer_use(
    engine: Engine, window: MainWindow, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    dialog = SettingsDialog(engine.settings, engine.secrets, "none yet", window.connection.models)
    qtbot.addWidget(dialog)
    dialog.system_prompt.setPlainText("Answer in French.")
    dialog.send_with_enter.setChecked(False)
    index = dialog.model.findData("claude-haiku-4-5")
    assert index >= 0
    assert "200,000-token window" in dialog.model.itemText(index)
    dialog.model.setCurrentIndex(index)
    chosen = dialog.chosen()
    assert (chosen.model, chosen.system_prompt, chosen.send_with_enter) == (
        "claude-haiku-4-5",
        "Answer in French.",
        False,
    )


def test_the_chat_list_renames_and_deletes_with_undo(
    window: MainWindow, engine: Engine, qtbot: QtBot, qtmodeltester: ModelTester
) -> None:
    for title in ("Tax return", "Holiday plans", "Tax questions"):
        window.new_chat(title)
    panel = window.chat_list
    qtmodeltester.check(panel.model)
    assert [c.title for c in panel.model.chats()][:3] == [
        "Tax questions",
        "Holiday plans",
        "Tax return",
    ]  # newest activity first
    assert panel.index_of(panel.model.chats()[0].id).data(GROUP_ROLE) == "Today"
    holiday = engine.store.list_chats()[1]
    panel.rename_requested.emit(holiday.id, "Summer 2027")
    assert engine.store.chat(holiday.id).title == "Summer 2027"
    menu = panel.list.menu_for(panel.index_of(holiday.id))
    next(a for a in menu.actions() if a.text() == "Move to trash").trigger()
    assert engine.store.chat(holiday.id).deleted_at is not None
    assert panel.model.row_of(holiday.id) is None
    assert panel.undo_bar.isVisible()
    qtbot.mouseClick(panel.undo_button, Qt.MouseButton.LeftButton)
    assert engine.store.chat(holiday.id).deleted_at is None
    assert panel.model.row_of(holiday.id) is not None


def test_search_finds_messages_without_opening_anything_or_moving_focus(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    holiday = engine.store.create_chat("Holiday plans")
    engine.store.append_messages(
        holiday.id, [u("Book the ferry to Hydra, please"), a("Done: the 9:00 ferry.")]
    )
    window.chats.refresh()
    for title in ("Tax return", "Tax questions"):
        window.new_chat(title)
    panel = window.chat_list
    shown = window.current
    assert shown is not None
    assert shown.chat.title == "Tax questions"
    qtbot.keyClick(window.pane.composer.edit, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(panel.search, "hydra")
    qtbot.waitUntil(lambda: panel.model.searching and panel.model.rowCount() == 1, timeout=2000)
    assert panel.search.hasFocus()  # every letter went into the search box
    assert window.current is shown  # nothing opened by itself
    assert window.pane.composer.edit.toPlainText() == ""
    hit = panel.model.index(0).data(HIT_ROLE)
    assert hit.chat_id == holiday.id
    assert "Hydra" in hit.snippet

    qtbot.keyClick(panel.search, Qt.Key.Key_Return)  # opens the chat at the match
    assert window.current is not None
    assert window.current.chat.id == holiday.id
    found = window.pane.messages.currentIndex()
    assert found.data(Role.MESSAGE).text.startswith("Book the ferry")
    assert window.pane.composer.edit.hasFocus()

    panel.search.clear()
    qtbot.keyClicks(panel.search, "tax")  # titles too
    qtbot.waitUntil(lambda: panel.model.rowCount() == 2, timeout=2000)
    panel.search.setFocus()
    qtbot.keyClick(panel.search, Qt.Key.Key_Escape)  # Esc clears it: every chat again
    qtbot.waitUntil(lambda: not panel.model.searching, timeout=2000)
    assert panel.model.rowCount() == 3

    qtbot.keyClicks(panel.search, "tax")  # the clear button, once there is text, clears it
    clear = next(b for b in panel.search.findChildren(QToolButton) if b.isVisible())
    qtbot.mouseClick(clear, Qt.MouseButton.LeftButton)
    assert panel.search.text() == ""
    qtbot.waitUntil(lambda: not panel.model.searching, timeout=2000)
    assert panel.model.rowCount() == 3


def test_a_pasted_page_in_the_search_box_never_holds_the_window(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    """The window searched on its own thread at every keystroke: a 5,000-character paste
    over a long run of one letter held it 13 s. Now the search thread does it, the newest
    query's answer is the one shown, and a long query is cut (the status bar says so)."""
    runs = engine.store.create_chat("Runs")
    engine.store.append_messages(runs.id, [u("a" * 100_000), a("b")])
    notes = engine.store.create_chat("Notes")
    engine.store.append_messages(notes.id, [u("The ferry to Hydra"), a("Booked.")])
    window.chats.refresh()
    panel = window.chat_list
    searched_on: list[bool] = []
    search_chats = engine.search_chats

    def recorded(text: str, limit: int = 200) -> object:
        searched_on.append(threading.current_thread() is threading.main_thread())
        return search_chats(text, limit)

    engine.search_chats = recorded  # type: ignore[method-assign,assignment]
    panel.search.setFocus()
    QGuiApplication.clipboard().setText("a" * 5_000)
    qtbot.keyClick(panel.search, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: panel.model.searching and panel.model.rowCount() == 1, timeout=5000)
    assert panel.model.index(0).data(HIT_ROLE).chat_id == runs.id
    assert window.statusBar().currentMessage() == "Searched for the first 256 characters"
    assert searched_on == [False]  # on the search thread

    panel.search.clear()
    qtbot.keyClicks(panel.search, "ferry")  # typed quickly: the last query wins
    qtbot.waitUntil(
        lambda: (
            panel.model.rowCount() == 1 and panel.model.index(0).data(HIT_ROLE).chat_id == notes.id
        ),
        timeout=5000,
    )
    assert "ferry" in panel.model.index(0).data(HIT_ROLE).snippet
    assert not any(searched_on)


def test_pinned_chats_stay_on_top_and_archived_ones_leave_the_list(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    for title in ("Oldest", "Middle", "Newest"):
        window.new_chat(title)
    panel = window.chat_list
    oldest = next(c for c in engine.store.list_chats() if c.title == "Oldest")
    menu = panel.list.menu_for(panel.index_of(oldest.id))
    next(a for a in menu.actions() if a.text() == "Pin to top").trigger()
    assert panel.model.chats()[0].id == oldest.id
    assert panel.model.index(0).data(GROUP_ROLE) == "Pinned"
    assert panel.model.index(1).data(GROUP_ROLE) == "Today"
    window.new_chat("Newer still")  # a new chat goes under the pinned one
    assert [c.title for c in panel.model.chats()][:2] == ["Oldest", "Newer still"]
    assert engine.store.list_chats()[-1].pinned_at is not None  # stored; activity untouched

    middle = next(c for c in engine.store.list_chats() if c.title == "Middle")
    menu = panel.list.menu_for(panel.index_of(middle.id))
    next(a for a in menu.actions() if a.text() == "Archive").trigger()
    assert panel.model.row_of(middle.id) is None
    assert "archived" in panel.undo_label.text()
    assert [c.title for c in engine.list_chats(archived=True)] == ["Middle"]
    window.chats.show_archive()
    assert [c.title for c in panel.model.chats()] == ["Middle"]
    assert panel.archive_bar.isVisibleTo(panel)
    menu = panel.list.menu_for(panel.index_of(middle.id))
    next(a for a in menu.actions() if a.text() == "Unarchive").trigger()
    assert panel.model.rowCount() == 0
    window.chats.show_archive(False)
    assert panel.model.row_of(middle.id) is not None


def test_a_chat_answering_in_the_background_is_marked_in_the_list(
    window: MainWindow, engine: Engine, qtbot: QtBot, simulator: SimulatorServer
) -> None:
    session = open_demo(window, engine, qtbot, turns=1)
    simulator.queue(Fault(FaultKind.HANG, after_events=3))
    window.pane.composer.edit.setPlainText("a long answer, please")
    qtbot.mouseClick(window.pane.composer.send_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: session.busy, timeout=TURN_TIMEOUT_MS)
    window.new_chat("Something else")  # the answering chat is no longer shown
    index = window.chat_list.index_of(session.chat.id)
    assert index.data(ACTIVITY_ROLE) == Activity.ANSWERING
    session.stop()
    qtbot.waitUntil(lambda: not session.busy, timeout=TURN_TIMEOUT_MS)
    assert window.chat_list.index_of(session.chat.id).data(ACTIVITY_ROLE) == ""


def test_a_refused_regenerate_is_said_in_the_chat_but_a_failed_turn_marks_the_list(
    window: MainWindow, engine: Engine, qtbot: QtBot, simulator: SimulatorServer
) -> None:
    """Regenerate under a reply whose question is excluded is refused before anything is
    sent: the chat says why, and the list does not mark the chat failed (nothing failed).
    A turn that does fail marks it."""
    session = open_demo(window, engine, qtbot, turns=1)
    view = window.pane.messages
    question = next(m for m in session.messages if m.role == "user")
    reply = session.messages[-1]

    def click(message: Message, label: str) -> None:
        next(a for a in view.menu_for(message).actions() if a.text().startswith(label)).trigger()

    click(question, "Exclude")
    qtbot.waitUntil(lambda: question.id in session.chat.state.excluded_messages, timeout=5000)
    click(reply, "Regenerate")
    assert session.error is not None
    assert session.error.title == "Your message is left out"
    assert window.chat_list.index_of(session.chat.id).data(ACTIVITY_ROLE) == ""

    click(question, "Include")
    qtbot.waitUntil(lambda: question.id not in session.chat.state.excluded_messages, timeout=5000)
    simulator.queue(Fault(FaultKind.MID_STREAM_ERROR, after_events=3))
    click(reply, "Regenerate")
    qtbot.waitUntil(lambda: not session.busy and session.error is not None, timeout=TURN_TIMEOUT_MS)
    assert window.chat_list.index_of(session.chat.id).data(ACTIVITY_ROLE) == Activity.FAILED


def test_retry_from_the_error_banner_leaves_the_keys_in_the_composer(
    window: MainWindow, engine: Engine, qtbot: QtBot, simulator: SimulatorServer
) -> None:
    """The banner's Retry button has the focus when clicked; the banner then goes, and the
    focus goes to the composer, where the user goes on, not to the chat list's search
    box (a new user's report)."""
    session = open_demo(window, engine, qtbot, turns=1)
    window.activateWindow()
    simulator.queue(Fault(FaultKind.MID_STREAM_ERROR, after_events=3))
    type_and_send(window, qtbot, "Once more, please")
    qtbot.waitUntil(lambda: not session.busy and session.error is not None, timeout=TURN_TIMEOUT_MS)
    retry = window.pane.banner.retry_button
    qtbot.waitUntil(retry.isVisible, timeout=5000)
    retry.setFocus()
    qtbot.waitUntil(retry.hasFocus, timeout=5000)
    qtbot.mouseClick(retry, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not session.busy and session.error is None, timeout=TURN_TIMEOUT_MS)
    assert not window.pane.banner.isVisible()
    assert window.pane.composer.edit.hasFocus()


def test_the_window_remembers_its_layout_and_last_chat(
    engine: Engine, open_window: OpenWindow, qtbot: QtBot
) -> None:
    window = open_window(engine)
    window.resize(760, 560)  # inside the offscreen screen (800×600): geometry is clamped to it
    qtbot.waitUntil(lambda: not window.chat_list.isVisible(), timeout=2000)  # narrow: folded
    qtbot.keyClick(window, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)  # shown anyway
    assert window.chat_list.isVisible()
    width = window.splitter.width()  # the rail gives its room back (laid out by events)
    qtbot.waitUntil(lambda: window.splitter.width() > width, timeout=2000)
    chat = create_demo_chat(engine.store, 3)
    window.chat_list.set_chats(engine.store.list_chats())
    window.open_chat(chat.id)
    window.splitter.setSizes([250, 200])
    expected = window.splitter.sizes()  # what the splitter made of it
    window.close()
    state = load(engine.paths.state_file, AppState)
    assert state.last_chat_id == chat.id
    assert state.splitter_sizes == tuple(expected)
    restored = MainWindow.over(engine, state)
    qtbot.addWidget(restored)
    restored.show()
    qtbot.waitUntil(lambda: restored.current is not None, timeout=5000)
    assert restored.current is not None
    assert restored.current.chat.id == chat.id
    assert restored.size() == window.size()
    assert not restored.chat_list.isVisible()  # narrow again: folded, until asked for
    qtbot.keyClick(restored, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: restored.splitter.sizes() == expected, timeout=2000)


def test_a_long_chat_opens_at_the_newest_messages_and_loads_older_on_scroll(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot, turns=400, planned=False)  # ~1,000 messages
    view = window.pane.messages
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum(), timeout=5000)
    assert session.model.rowCount() == FIRST_PAGE  # read and laid out before the first paint
    qtbot.waitUntil(lambda: session.model.history_complete, timeout=5000)
    newest = session.messages[-1]
    assert view.indexAt(view.viewport().rect().bottomLeft() - _up(10)).data(Role.MESSAGE).id in {
        m.id for m in session.messages[-3:]
    }
    # Reading an older message: the page above loads and the reader stays in place.
    top_index = view.indexAt(view.viewport().rect().topLeft() + _down(5))
    reading = top_index.data(Role.MESSAGE).id
    bar.setValue(0)
    assert session.model.rowCount() >= FIRST_PAGE + OLDER_PAGE
    assert bar.value() > 0
    assert (
        view.indexAt(view.viewport().rect().topLeft() + _down(5)).data(Role.MESSAGE).id != newest.id
    )
    assert session.model.row_of(reading) is not None
    # While the user reads older messages, a new message does not yank the view down.
    value = bar.value()
    session.model.append_text("reply-x", "new words " * 50)
    qtbot.wait(50)
    assert bar.value() == value
    view.restore_scroll(None)
    session.model.append_text("reply-x", "more words " * 50)
    qtbot.waitUntil(lambda: bar.value() == bar.maximum(), timeout=2000)


def test_excluding_a_message_changes_its_chips_and_the_next_request(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot, turns=3)
    chat = session.chat
    target = session.messages[1]
    before = session.plan
    assert before is not None
    cost = sum(before.block_status(target, j).sent_tokens for j in range(len(target.blocks)))
    label = window.pane.messages.menu_for(target).actions()[1].text()
    assert label == f"Exclude from context (−≈{cost:,} tokens)"  # the change, before it is made
    with qtbot.waitSignal(session.planned, timeout=5000):
        menu_action(window, target, "Exclude from context").trigger()
    row = session.model.row_of(target.id)
    assert row is not None
    chips = session.model.index(row).data(Role.BLOCKS)
    assert {chip.state for chip in chips} == {BlockState.EXCLUDED.value}
    plan = session.plan
    assert plan is not None
    assert plan.estimated_input < before.estimated_input
    assert target.id in engine.store.context_state(chat.id).excluded_messages
    assert "Include in context" in [
        a.text() for a in window.pane.messages.menu_for(target).actions()
    ]


def test_pinning_and_fork(window: MainWindow, engine: Engine, qtbot: QtBot) -> None:
    session = open_demo(window, engine, qtbot, turns=3, planned=False)
    chat = session.chat
    session.pin_fact("  Order 4471-B ships on 2026-05-02  ")
    facts = [f.text for f in engine.store.context_state(chat.id).facts]
    assert "Order 4471-B ships on 2026-05-02" in facts
    # Fork from the second message: a new chat with the first two, opened.
    menu_action(window, session.messages[1], "Fork a new chat from here").trigger()
    fork = window.current
    assert fork is not None
    assert fork is not session
    assert fork.chat.title == f"{chat.title} (fork)"
    forked = engine.store.messages(fork.chat.id)
    assert [m.text for m in forked] == [m.text for m in session.messages[:2]]
    assert [m.id for m in engine.store.messages(chat.id)] == [m.id for m in session.messages]
    # One click made it: the list offers Undo, which puts the fork in the trash (it can be
    # restored) and shows the original again.
    panel = window.chat_list
    assert panel.undo_bar.isVisible()
    assert panel.undo_label.text() == f"Forked into “{chat.title} (fork)”."
    qtbot.mouseClick(panel.undo_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.current is session, timeout=5000)
    assert fork.chat.id in [c.id for c in engine.trashed_chats()]
    assert panel.index_of(fork.chat.id).isValid() is False


def test_undoing_a_fork_does_not_show_an_original_trashed_meanwhile(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot, turns=2, planned=False)
    original = session.chat.id
    menu_action(window, session.messages[1], "Fork a new chat from here").trigger()
    fork = window.current
    assert fork is not None
    assert fork is not session
    engine.store.delete_chat(original)  # as `contextdesk delete` in another program
    qtbot.mouseClick(window.chat_list.undo_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.current is not fork, timeout=5000)
    assert window.current is None or window.current.chat.id != original
    assert {original, fork.chat.id} <= {c.id for c in engine.trashed_chats()}


def menu_action(window: MainWindow, message: Message, text: str) -> QAction:
    """The message's right-click menu item that starts with `text`."""
    actions = [
        a for a in window.pane.messages.menu_for(message).actions() if a.text().startswith(text)
    ]
    assert actions, f"no {text!r} in the menu"
    return actions[0]


def test_the_composer_sends_with_the_configured_key_and_attaches_images(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    window.new_chat()  # (a composer is a chat's)
    composer = window.pane.composer
    sent: list[object] = []
    composer.send_requested.disconnect()
    composer.send_requested.connect(sent.append)
    qtbot.keyClicks(composer.edit, "line one")
    qtbot.keyClick(composer.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(composer.edit, "line two")
    assert composer.edit.toPlainText() == "line one\nline two"
    qtbot.keyClick(composer.edit, Qt.Key.Key_Return)
    assert len(sent) == 1
    composer.set_send_with_enter(False)
    qtbot.keyClick(composer.edit, Qt.Key.Key_Return)
    assert len(sent) == 1  # Enter is a new line now
    qtbot.keyClick(composer.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert len(sent) == 2
    # A 4000×3000 photo is downscaled to what the API keeps, with its token estimate.
    photo = QImage(4000, 3000, QImage.Format.Format_RGB32)
    photo.fill(QColor("#336699"))
    path = tmp_path / "photo.png"
    photo.save(str(path))
    attachment = file_attachment(path, lambda _text: 0)
    assert isinstance(attachment.block, ImageBlock)
    size = image_size(attachment.block.data)
    assert size is not None
    assert max(size) <= 1568
    assert size[0] * size[1] <= 1_200_000
    assert 1000 < attachment.tokens <= 1600
    problems: list[str] = []
    composer.problem.connect(problems.append)
    binary = tmp_path / "data.bin"
    binary.write_bytes(bytes(range(256)) * 4)
    dropped = QMimeData()
    dropped.setUrls([QUrl.fromLocalFile(str(binary))])
    composer.edit.insertFromMimeData(dropped)  # what a paste or a drop does
    assert problems
    assert "not UTF-8 text" in problems[0]
    # A pipe named like a picture or a note, a device: refused at once, never read.
    for name in ("shot.png", "notes.txt"):
        os.mkfifo(tmp_path / name)
    for special in (tmp_path / "shot.png", tmp_path / "notes.txt", Path("/dev/zero")):
        dropped = QMimeData()
        dropped.setUrls([QUrl.fromLocalFile(str(special))])
        composer.edit.insertFromMimeData(dropped)
        assert "is not a regular file" in problems[-1]
    assert composer.attachments == []


def test_the_window_renders_a_demo_chat(
    window: MainWindow, engine: Engine, qtbot: QtBot, tmp_path: Path
) -> None:
    open_demo(window, engine, qtbot, turns=6)
    path = tmp_path / "window.png"
    assert window.grab().save(str(path))
    image = QImage(str(path))
    assert image.width() >= 1000
    colours = {
        image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)
    }
    assert len(colours) > 50  # text, chips and bubbles, not an empty frame
    # The chips are painted in their state's colour: green for "in context".
    chips = window.pane.messages.viewport().grab().toImage()
    colours = {
        chips.pixel(x, y) for x in range(0, chips.width(), 2) for y in range(0, chips.height(), 2)
    }
    green = theme.state_colour("in context", dark=False).rgb()
    assert green in colours or any(_near(c, green) for c in colours)


def test_thinking_and_tool_results_expand_on_click(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot, turns=2, planned=False)
    view = window.pane.messages
    row = next(r for r, m in enumerate(session.messages) if isinstance(m.blocks[0], ThinkingBlock))
    index = session.model.index(row)
    collapsed = view.sizeHintForIndex(index).height()
    assert not view.delegate.is_expanded(session.messages[row].id, 0)
    view.delegate.toggle(index, 0)
    assert view.delegate.is_expanded(session.messages[row].id, 0)
    assert view.sizeHintForIndex(index).height() > collapsed


def _up(n: int) -> QPoint:
    return QPoint(0, n)


def _down(n: int) -> QPoint:
    return QPoint(0, n)


def _near(a: int, b: int) -> bool:
    ca, cb = QColor(a), QColor(b)
    return abs(ca.red() - cb.red()) + abs(ca.green() - cb.green()) + abs(ca.blue() - cb.blue()) < 30


def test_saving_settings_replans_open_chats_and_leaves_the_demo_for_a_key(
    window: MainWindow, engine: Engine, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = open_demo(window, engine, qtbot, turns=2)
    assert session.plan is not None
    assert session.plan.request.tools

    def fill_in(dialog: SettingsDialog) -> int:
        dialog.tools.setChecked(False)
        dialog.key.setText("sk-ant-from-settings")
        dialog.save_button.click()
        return int(dialog.result())

    monkeypatch.setattr(SettingsDialog, "exec", fill_in)
    with qtbot.waitSignal(session.planned, timeout=5000):
        window.open_settings()
    assert session.plan is not None
    assert not session.plan.request.tools  # the open chat was planned again without tools
    assert load(engine.paths.settings_file, type(engine.settings)).tools_enabled is False
    assert not engine.demo  # a real key ends the offline demo
    assert not window.demo_label.isVisible()
    stored = keyring.get_password("ContextDesk", "anthropic-api-key")
    assert stored == "sk-ant-from-settings"
    assert "sk-ant-from-settings" not in engine.paths.settings_file.read_text()


def test_keyboard_ctrl_n_makes_a_chat_and_ctrl_k_searches(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    before = len(engine.store.list_chats())
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert len(engine.store.list_chats()) == before + 1
    assert window.current is not None
    assert window.pane.composer.edit.hasFocus()
    qtbot.keyClick(window.pane.composer.edit, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    assert window.chat_list.search.hasFocus()


def test_a_pasted_image_becomes_an_attachment_with_its_cost(window: MainWindow) -> None:
    window.new_chat()  # (a composer is a chat's)
    photo = QImage(3000, 2000, QImage.Format.Format_RGB32)
    photo.fill(QColor("#884422"))
    clipboard = QMimeData()
    clipboard.setImageData(photo)
    window.pane.composer.edit.insertFromMimeData(clipboard)
    (attachment,) = window.pane.composer.attachments
    assert isinstance(attachment.block, ImageBlock)
    assert 1000 < attachment.tokens <= 1600
    assert f"≈{attachment.tokens:,}" in window.pane.composer.estimate.text()
    assert window.pane.composer.edit.toPlainText() == ""  # the image did not land in the text


def test_settings_keep_a_model_typed_without_enter_and_refuse_what_the_api_would(
    engine: Engine, qtbot: QtBot
) -> None:
    dialog = SettingsDialog(
        engine.settings,
        engine.secrets,
        "none yet",
        engine.known_models(),
        check=engine.settings_faults,
    )
    qtbot.addWidget(dialog)
    dialog.show()
    assert not dialog.context_window.isEnabled()  # a listed model's window is known
    line = dialog.model.lineEdit()
    assert line is not None  # the model box is editable
    line.clear()
    qtbot.keyClicks(line, "qwen3:8b")  # typed, no Enter
    assert dialog.context_window.isEnabled()  # not listed: its window is asked for
    dialog.context_window.setValue(32_768)
    assert not dialog.thinking_budget.isVisible()  # adaptive: no budget to give
    dialog.thinking.setCurrentIndex(dialog.thinking.findData("budget"))  # a 4,096 budget is
    # not below the 4,096 max output…
    assert dialog.max_tokens.value() == 8192  # …so the max output is raised, and that said
    assert dialog.thinking_note.isVisible()
    assert "raised from 4,096 to 8,192" in dialog.thinking_note.text()
    dialog.thinking_budget.setValue(8192)
    assert dialog.max_tokens.value() == 12_288
    dialog.max_tokens.setValue(4096)  # the user insists: then it is a problem, said at once
    beside = dialog.field_problems["thinking_budget"]
    qtbot.waitUntil(beside.isVisible, timeout=2000)  # said before Save is pressed
    assert "must be below the max output tokens" in beside.text()
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert dialog.result() != QDialog.DialogCode.Accepted
    assert dialog.problem.isVisible()
    dialog.max_tokens.setValue(16_384)
    qtbot.waitUntil(lambda: not beside.isVisible(), timeout=2000)
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert dialog.result() == QDialog.DialogCode.Accepted
    chosen = dialog.chosen()
    assert (chosen.model, chosen.thinking_budget, chosen.context_window) == (
        "qwen3:8b",
        8192,
        32_768,
    )


def test_a_chat_is_renamed_in_place_by_f2_or_double_click_and_esc_cancels(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    for title in ("Holiday plans", "Tax return"):  # the tax return is the open chat
        window.new_chat(title)
    holiday = next(c for c in engine.store.list_chats() if c.title == "Holiday plans")
    view = window.chat_list.list
    window.chat_list.select(holiday.id)  # picked in the list, not opened
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_F2)
    editor = view.focusWidget()
    assert isinstance(editor, QLineEdit)  # an editor opened in place
    qtbot.wait(200)  # the new chat's plan lands meanwhile: the rename must survive it
    qtbot.keyClicks(editor, "Summer 2027")  # the title is selected: typing replaces it
    qtbot.keyClick(editor, Qt.Key.Key_Return)  # Qt commits an edit on the next turn of the loop
    qtbot.waitUntil(lambda: engine.store.chat(holiday.id).title == "Summer 2027", timeout=2000)
    spot = view.visualRect(window.chat_list.index_of(holiday.id)).center()
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=spot)  # a double-click
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=spot)  # is click + dbl
    assert view.state() is view.State.EditingState
    # The open editor: the first one may not be deleted yet (deleteLater), and findChild
    # returned it now and then (the suite once timed out typing Esc into it).
    [second] = [e for e in view.findChildren(QLineEdit) if e.isVisible()]
    qtbot.keyClicks(second, "Not this")
    qtbot.keyClick(second, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: view.state() != view.State.EditingState, timeout=2000)
    assert engine.store.chat(holiday.id).title == "Summer 2027"  # Esc changed nothing


def test_stop_and_retry_are_offered_only_when_they_can_do_something(
    window: MainWindow, simulator: SimulatorServer, qtbot: QtBot
) -> None:
    session = window.new_chat()
    assert session is not None
    assert not window.menus.stop_action.isEnabled()
    assert not window.menus.retry_action.isEnabled()  # nothing said yet
    simulator.queue(Fault(FaultKind.SERVER_ERROR))
    window.pane.composer.edit.setPlainText("Hello")
    qtbot.mouseClick(window.pane.composer.send_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not session.busy, timeout=TURN_TIMEOUT_MS)
    assert window.menus.retry_action.isEnabled()  # the message has no answer: Retry can give one
    window.menus.retry_action.trigger()
    assert window.menus.stop_action.isEnabled()
    qtbot.waitUntil(lambda: not session.busy, timeout=TURN_TIMEOUT_MS)
    assert not window.menus.stop_action.isEnabled()
    assert not window.menus.retry_action.isEnabled()  # answered: nothing to retry


def test_tab_leaves_the_composer(window: MainWindow, qtbot: QtBot) -> None:
    window.new_chat()
    edit = window.pane.composer.edit
    edit.setFocus()
    qtbot.keyClicks(edit, "draft")
    qtbot.keyClick(edit, Qt.Key.Key_Tab)
    assert edit.toPlainText() == "draft"  # no tab character typed
    assert not edit.hasFocus()
    for key, modifiers in (
        (Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier),
        (Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier),
    ):
        edit.setFocus()
        qtbot.keyClick(edit, key, modifiers)
        assert edit.toPlainText() == "draft"
        assert not edit.hasFocus(), key


def test_the_window_does_not_grow_when_the_undo_bar_names_a_long_chat(
    window: MainWindow, qtbot: QtBot
) -> None:
    window.chats.new_chat("A very long title for a chat about many things " * 3)
    qtbot.wait(50)
    before = window.width()
    current = window.current
    assert current is not None
    window.chats.trash(current.chat.id)  # the Undo bar appears, naming the chat
    assert window.chat_list.undo_bar.isVisible()
    qtbot.wait(50)
    assert window.width() == before


def test_ctrl_f_steps_through_the_matches_in_the_open_chat(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot, turns=3, planned=False)
    other = engine.store.create_chat("Elsewhere")
    engine.store.append_messages(other.id, [u("refund elsewhere")])  # not in this chat
    holding = [m.id for m in session.messages if "refund" in m.text.lower()]
    assert len(holding) >= 2
    qtbot.keyClick(window.pane.composer.edit, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    bar = window.pane.find_bar
    assert bar.field.hasFocus()
    qtbot.keyClicks(bar.field, "REFUND")
    qtbot.waitUntil(lambda: bar.hits == holding, timeout=2000)
    assert window.pane.messages.currentIndex().data(Role.MESSAGE).id == holding[0]
    assert bar.count.text() == f"1 of {len(holding)}"
    qtbot.keyClick(bar.field, Qt.Key.Key_Return)
    assert window.pane.messages.currentIndex().data(Role.MESSAGE).id == holding[1]
    qtbot.keyClick(bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert window.pane.messages.currentIndex().data(Role.MESSAGE).id == holding[0]
    qtbot.keyClick(bar.field, Qt.Key.Key_Escape)
    assert not bar.isVisible()
    assert window.pane.composer.edit.hasFocus()


def test_ctrl_b_hides_the_chat_list_and_the_window_remembers(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    window.new_chat("Something")
    qtbot.keyClick(window.pane.composer.edit, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    assert not window.chat_list.isVisible()
    window.close()
    again = MainWindow.over(engine, load(engine.paths.state_file, AppState))
    qtbot.addWidget(again)
    again.show()
    qtbot.waitExposed(again)
    assert not again.chat_list.isVisible()
    again.activateWindow()
    qtbot.waitUntil(again.isActiveWindow, timeout=2000)
    qtbot.keyClick(again, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    assert again.chat_list.isVisible()


def test_every_menu_action_has_keys_and_the_sheet_lists_them(window: MainWindow) -> None:
    from desktop_app.ui.dialogs.shortcuts import ShortcutsDialog

    menus = [top.menu() for top in window.menuBar().actions()]
    actions = [
        action
        for menu in menus
        if isinstance(menu, QMenu)
        for action in menu.actions()
        if not action.isSeparator()
    ]
    assert len(actions) >= 15
    assert [a.text() for a in actions if a.shortcut().isEmpty()] == []
    assert len({a.shortcut().toString() for a in actions}) == len(actions)  # none shared
    sheet = ShortcutsDialog(window.menuBar(), window)
    cells = [sheet.table.item(row, 1) for row in range(sheet.table.rowCount())]
    listed = {cell.text() for cell in cells if cell is not None}
    assert {a.text().replace("&", "").rstrip("…") for a in actions} <= listed


def test_the_chat_list_opens_nothing_when_it_only_gets_the_focus(
    window: MainWindow, qtbot: QtBot
) -> None:
    for title in ("One", "Two"):
        window.new_chat(title)
    window._show_pane(None)
    view = window.chat_list.list
    spot = view.visualRect(window.chat_list.model.index(1)).center()
    qtbot.mousePress(view.viewport(), Qt.MouseButton.RightButton, pos=spot)  # for the menu
    assert window.current is None  # and only the menu
    window.chat_list.list.clearFocus()
    window.chat_list.list.setCurrentIndex(QModelIndex())
    qtbot.keyClick(window.chat_list.search, Qt.Key.Key_Tab)  # Tab from the search box
    window.chat_list.list.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.wait(50)
    assert window.current is None
    qtbot.keyClick(window.chat_list.list, Qt.Key.Key_Down)  # the user moving: it opens
    assert window.current is not None
    assert window.chat_list.list.hasFocus()  # and the focus stays in the list


def test_a_narrow_window_folds_the_context_panel_into_a_strip(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot, turns=2)
    window.resize(900, 700)
    qtbot.waitUntil(lambda: window.width() == 900, timeout=2000)
    assert window.placement.narrow
    assert not window.dock.isVisible()
    assert window.strip.isVisible()
    assert window.pane.width() >= 500  # the conversation keeps its room
    assert window.strip.share.text().endswith("%")
    qtbot.mouseClick(window.strip, Qt.MouseButton.LeftButton)  # opens over the conversation
    overlay = window.placement.overlay
    assert overlay.isVisible()
    assert window.context.isVisible()
    assert window.rect().contains(overlay.geometry())
    assert window.context.meter.plan is session.plan  # the same panel, the same plan
    assert window.menus.context_action.isChecked()
    qtbot.mouseClick(overlay.close_button, Qt.MouseButton.LeftButton)
    assert not overlay.isVisible()
    assert not window.menus.context_action.isChecked()  # the View menu says so too
    window.resize(1300, 700)
    qtbot.waitUntil(lambda: not window.placement.narrow, timeout=2000)
    assert window.dock.isVisible()
    assert window.dock.widget() is window.context
    assert not window.strip.isVisible()
    # Docked, its header (the window's type, not the dock's stock bar) closes it too.
    header = window.dock.titleBarWidget()
    assert header is not None
    close = header.findChild(QToolButton, "closeContext")
    qtbot.mouseClick(close, Qt.MouseButton.LeftButton)
    assert not window.dock.isVisible()
    assert not window.menus.context_action.isChecked()
    window.menus.context_action.trigger()
    assert window.dock.isVisible()


def test_a_narrow_window_folds_the_chat_list_and_a_wide_one_brings_it_back(
    window: MainWindow, qtbot: QtBot
) -> None:
    def ctrl_b() -> None:
        qtbot.keyClick(window, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)

    assert window.chat_list.isVisible()
    window.resize(900, 700)
    qtbot.waitUntil(lambda: not window.chat_list.isVisible(), timeout=2000)
    qtbot.waitUntil(lambda: window.center.width() >= 800, timeout=2000)  # the reader's room
    ctrl_b()  # shown over the fold when asked for
    assert window.chat_list.isVisible()
    window.resize(1300, 700)
    qtbot.waitUntil(lambda: window.width() == 1300, timeout=2000)
    assert window.chat_list.isVisible()
    ctrl_b()  # hidden by choice in a wide window: it stays hidden, narrow or wide
    assert not window.chat_list.isVisible()
    window.resize(900, 700)
    qtbot.waitUntil(lambda: window.width() == 900, timeout=2000)
    window.resize(1300, 700)
    qtbot.waitUntil(lambda: window.width() == 1300, timeout=2000)
    assert not window.chat_list.isVisible()
    assert window.app_state.chat_list_hidden


def test_settings_choose_a_dark_look_a_text_size_and_a_reading_width_that_stay(
    window: MainWindow,
    engine: Engine,
    qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
    open_window: Callable[[Engine], MainWindow],
) -> None:
    from desktop_app.ui import theme

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    open_demo(window, engine, qtbot, turns=2)
    assert not theme.is_dark()  # the offscreen system is light

    def fill_in(dialog: SettingsDialog) -> int:
        dialog.appearance.setCurrentIndex(dialog.appearance.findData("dark"))
        dialog.text_size.setValue(15)
        dialog.reading_width.setValue(1000)  # typed, as a person would, without Enter
        dialog.save_button.click()
        return int(dialog.result())

    monkeypatch.setattr(SettingsDialog, "exec", fill_in)
    try:
        window.open_settings()
        assert theme.is_dark()
        assert app.font().pointSizeF() == 15

        # Every word on screen takes the size: the chat bar, the composer, the panel.
        def small() -> list[str]:
            return [
                f"{w.objectName() or type(w).__name__}: {w.font().pointSizeF()}"
                for w in window.findChildren(QWidget)
                if w.isVisible() and 0 < w.font().pointSizeF() < 15
            ]

        qtbot.waitUntil(lambda: not small(), timeout=3000)  # (fonts change by events)
        header = window.pane.header
        assert header.title.font().pointSizeF() > 15  # the chat's title, a little larger
        view = window.pane.messages
        qtbot.waitUntil(
            lambda: view.palette().color(view.backgroundRole()).lightness() < 128, timeout=5000
        )
        saved = load(engine.paths.settings_file, type(engine.settings))
        assert (saved.appearance, saved.text_size, saved.reading_width) == ("dark", 15, 1000)
        # The reading column takes the new width at once: in a wide window, 1,000 px
        window.resize(1800, 800)
        qtbot.waitUntil(lambda: view.viewport().width() > 1000, timeout=5000)
        row = view.visualRect(view.model().index(0, 0))
        assert view.delegate.column_rect(row).width() == 1000
    finally:  # the look is the whole application's: later tests start from the system's
        theme.choose(app, "system", 0)
    assert not theme.is_dark()
    # A window opened later (the next start) takes them from Settings.
    again = open_window(engine)
    try:
        assert theme.is_dark()
        assert app.font().pointSizeF() == 15
        open_demo(again, engine, qtbot, turns=1)
        for widget in (
            again.pane.header,
            again.pane.header.model,
            again.pane.composer,
            again.pane.messages,
        ):
            assert widget.font().pointSizeF() == 15, widget.objectName()
    finally:
        theme.choose(app, "system", 0)
    assert again.isVisible()


def test_light_chosen_in_settings_wins_over_a_dark_system_from_the_first_frame() -> None:
    app = make_app()
    try:
        app.setPalette(theme.palette_for(dark=True))  # as a dark system's palette
        theme.choose(app, "light", 0, first_frame=True)
        assert not theme.is_dark(app.palette())
        assert not theme.is_dark()
    finally:
        theme.choose(app, "system", 0)


def test_the_docked_context_panel_leaves_the_conversation_most_of_a_1280_px_window(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    from desktop_app.ui.context.panel import PANEL_PX

    window.resize(1280, 820)
    session = open_demo(window, engine, qtbot)
    for tab in range(window.context.tabs.count()):  # every tab filled, the widest included
        window.context.tabs.setCurrentIndex(tab)
    qtbot.waitUntil(lambda: session.plan is not None, timeout=5000)
    qtbot.waitUntil(lambda: window.dock.width() <= PANEL_PX + 20, timeout=5000)
    assert window.context.minimumSizeHint().width() <= PANEL_PX
    assert window.center.width() >= 1280 - PANEL_PX - window.chat_list.width() - 40


def test_a_price_entered_in_settings_turns_tokens_only_into_a_cost(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    from desktop_app.ui.dialogs.prices_dialog import PricesDialog

    assert engine.prices().price("my-local-model") is None
    dialog = PricesDialog(engine.prices(), engine.set_price, engine.prices, "my-local-model")
    qtbot.addWidget(dialog)
    rows = dialog.table.rowCount()
    dialog.input.setValue(1.5)
    dialog.output.setValue(6)
    qtbot.mouseClick(dialog.save, Qt.MouseButton.LeftButton)
    assert "Saved for my-local-model" in dialog.said.text()
    assert dialog.table.rowCount() == rows + 1
    price = engine.prices().price("my-local-model")
    assert price is not None
    assert (price.input, price.output, price.cache_write_5m) == (1.5, 6.0, 1.875)
    dialog.model.setText("")
    qtbot.mouseClick(dialog.save, Qt.MouseButton.LeftButton)
    assert dialog.said.text().startswith("Not saved:")


def test_file_dialogs_start_in_documents_then_where_the_last_one_was(
    window: MainWindow,
    engine: Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    qtbot: QtBot,
) -> None:
    from PySide6.QtCore import QStandardPaths

    monkeypatch.chdir(tmp_path)  # wherever the app was started: not where a dialog opens
    documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    first = window.chats.start_folder()
    assert first in (documents, str(Path.home()))
    assert first != str(tmp_path)
    chosen = tmp_path / "exports"
    chosen.mkdir()
    seen: list[str] = []

    def save_as(_parent: object, _title: str, start: str, _filter: str) -> tuple[str, str]:
        seen.append(start)
        return str(chosen / "chat.json"), ""

    monkeypatch.setattr("desktop_app.ui.chat_list.controller.QFileDialog.getSaveFileName", save_as)
    chat = engine.new_chat("Kept")
    said: list[str] = []
    window.chats.status.connect(said.append)
    writing, written = threading.Event(), threading.Event()
    export_to = type(chat).export_to

    def slow_export_to(self: object, *args: object, **kwargs: object) -> None:
        writing.set()
        written.wait(5)  # (a 100,000-message chat takes seconds)
        export_to(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(type(chat), "export_to", slow_export_to)
    window.chats.export(chat.id, "json")  # written off the GUI thread, then said
    assert writing.wait(5)
    assert not (chosen / "chat.json").exists()  # the window went on meanwhile
    written.set()
    qtbot.waitUntil(lambda: said[-1:] == [f"Exported to {chosen / 'chat.json'}"], timeout=10000)
    assert said[0] == "Exporting “Kept”…"
    assert json.loads((chosen / "chat.json").read_text())["chat"]["title"] == "Kept"
    assert seen[0].startswith(first)
    assert window.chats.start_folder() == str(chosen)
    window.close()
    assert engine.load_window_state().last_folder == str(chosen)


def test_an_export_that_cannot_start_says_why_and_says_nothing_else(
    window: MainWindow, engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop_app.core.errors import ContextDeskError

    chat = engine.new_chat("Kept")
    monkeypatch.setattr(
        "desktop_app.ui.chat_list.controller.QFileDialog.getSaveFileName",
        lambda *_args: (str(tmp_path / "chat.json"), ""),
    )

    def cannot(*_args: object) -> None:
        raise ContextDeskError("Settings not readable", "A setting is damaged.")

    monkeypatch.setattr(type(chat), "exporting", cannot)
    said: list[str] = []
    problems: list[ErrorInfo] = []
    window.chats.status.connect(said.append)
    window.chats.problem.connect(problems.append)
    window.chats.export(chat.id, "json")
    assert [p.title for p in problems] == ["Settings not readable"]
    assert said == []
    assert not (tmp_path / "chat.json").exists()


def test_the_trash_restores_a_chat_and_deletes_one_for_good_with_its_ledger(
    window: MainWindow, engine: Engine, simulator: SimulatorServer, qtbot: QtBot
) -> None:
    from PySide6.QtWidgets import QMessageBox

    from desktop_app.ui.dialogs.trash_dialog import TrashDialog
    from tests.fakes.tools import ScriptedApprover

    kept, gone = engine.new_chat("Keep me"), engine.new_chat("Delete me")
    gone.turns.send("The zebra codeword is QUAGGA-77.", ScriptedApprover())
    kept.turns.send("Something to keep.", ScriptedApprover())
    db = engine.store.db
    assert db.execute("SELECT COUNT(*) FROM requests WHERE chat_id = ?", (gone.id,)).fetchone()[0]
    assert engine.search("QUAGGA-77")
    for chat in (kept, gone):
        chat.delete()
    dialog = TrashDialog(engine, window)
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.list.count() == 2
    titles = [dialog.list.item(n).toolTip() for n in range(2)]
    dialog.list.setCurrentRow(titles.index("Keep me"))
    with qtbot.waitSignal(dialog.restored):
        qtbot.mouseClick(dialog.restore_button, Qt.MouseButton.LeftButton)
    assert kept.id in {c.id for c in engine.list_chats()}
    assert dialog.list.count() == 1

    def say_yes(box: QMessageBox) -> None:
        qtbot.mouseClick(box.button(QMessageBox.StandardButton.Yes), Qt.MouseButton.LeftButton)

    when_shown(QMessageBox, say_yes)
    qtbot.mouseClick(dialog.delete_button, Qt.MouseButton.LeftButton)
    assert dialog.list.count() == 0
    assert "empty" in dialog.about.text()
    assert db.execute("SELECT COUNT(*) FROM chats WHERE id = ?", (gone.id,)).fetchone()[0] == 0
    assert (
        db.execute("SELECT COUNT(*) FROM requests WHERE chat_id = ?", (gone.id,)).fetchone()[0] == 0
    )
    assert (
        db.execute("SELECT COUNT(*) FROM messages WHERE chat_id = ?", (gone.id,)).fetchone()[0] == 0
    )
    orphans = db.execute(
        "SELECT COUNT(*) FROM request_parts WHERE id NOT IN (SELECT head FROM requests) "
        "AND id NOT IN (SELECT value FROM requests, json_each(requests.added))"
    ).fetchone()[0]
    assert orphans == 0
    assert engine.search("QUAGGA-77") == []
    assert engine.search("Something to keep")  # the other chat's parts and entries stay
    assert kept.costs.sent_requests()


def test_a_search_hit_in_a_hidden_version_opens_on_its_branch_highlighted(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    chat = engine.new_chat("Ferries")
    engine.store.append_messages(chat.id, [u("Which ferry goes to Hydra?"), a("The 9:00 one.")])
    question = chat.messages()[0]
    engine.store.append_message(chat.id, u("Which ferry goes to Poros?"), beside=question.id)
    engine.store.append_messages(chat.id, [a("The 10:30 one.")])  # the version shown now
    chat.refresh_info()
    window.chats.refresh()
    window.open_chat(chat.id)
    session = window.current
    assert session is not None
    assert "Poros" in session.messages[0].text
    panel = window.chat_list
    qtbot.keyClick(window.pane.composer.edit, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(panel.search, "hydra")
    qtbot.waitUntil(lambda: panel.model.searching and panel.model.rowCount() == 1, timeout=2000)
    qtbot.keyClick(panel.search, Qt.Key.Key_Return)
    qtbot.waitUntil(
        lambda: (
            window.pane.messages.currentIndex().isValid()
            and "Hydra" in window.pane.messages.currentIndex().data(Role.MESSAGE).text
        ),
        timeout=5000,
    )
    assert [m.text for m in session.messages] == ["Which ferry goes to Hydra?", "The 9:00 one."]
    assert engine.store.chat(chat.id).leaf_id is not None  # the branch shown is stored


def highlighted_pixels(widget: QWidget) -> int:
    """How many of the widget's pixels are in the focus ring's colour (the highlight)."""
    image = widget.grab().toImage()
    ring = widget.palette().color(QPalette.ColorRole.Highlight)
    return sum(
        1
        for y in range(0, image.height(), 2)
        for x in range(image.width())
        if abs(image.pixelColor(x, y).hue() - ring.hue()) <= 8
        and image.pixelColor(x, y).saturation() > 80
    )


def test_tab_goes_list_conversation_composer_panel_with_a_ring_where_the_keys_are(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    open_demo(window, engine, qtbot, turns=2)
    composer = window.pane.composer
    window.chat_list.focus_search()
    order: list[QWidget] = []
    for _ in range(12):
        focused = QApplication.focusWidget()
        assert focused is not None
        order.append(focused)
        qtbot.keyClick(focused, Qt.Key.Key_Tab)
    stops = [window.chat_list.list, window.pane.messages, composer.edit, composer.send_button]
    assert all(stop in order for stop in stops)
    assert [order.index(stop) for stop in stops] == sorted(order.index(stop) for stop in stops)
    assert any(window.context.isAncestorOf(w) for w in order[order.index(composer.send_button) :])
    # Where the keys are shows: the composer's box, a button, the keyboard's message.
    composer.edit.setFocus(Qt.FocusReason.TabFocusReason)  # as Tab brings it there
    qtbot.waitUntil(composer.edit.hasFocus)
    ringed = highlighted_pixels(composer.box)
    qtbot.keyClick(composer.edit, Qt.Key.Key_Tab)
    qtbot.waitUntil(composer.attach_button.hasFocus)
    unringed = highlighted_pixels(composer.box)
    assert ringed > unringed + 100
    # A click puts the keys there too, without a ring (the composer has them most of
    # the time: the ring says where Tab went, as a browser's :focus-visible).
    qtbot.mouseClick(composer.edit, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(composer.edit.hasFocus)
    assert highlighted_pixels(composer.box) < unringed + 100
    qtbot.keyClick(composer.edit, Qt.Key.Key_Tab)
    qtbot.waitUntil(composer.attach_button.hasFocus)
    assert highlighted_pixels(composer.attach_button) > 20
    view = window.pane.messages
    before = highlighted_pixels(view.viewport())
    view.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(view.hasFocus)
    view.setCurrentIndex(view.model().index(view.model().rowCount() - 1, 0))
    assert highlighted_pixels(view.viewport()) > before + 100


def test_after_start_up_the_common_languages_are_ready_to_colour_off_the_gui_thread(
    engine: Engine, open_window: Callable[[Engine], MainWindow], qtbot: QtBot
) -> None:
    """Making a language's lexer takes 10–110 ms: paid on a worker after the first paint,
    not by the first paint that shows such code (or by Stop, when a reply ends with it)."""
    from desktop_app.ui.conversation.markdown_style import COMMON_LANGUAGES, _lexer

    _lexer.cache_clear()
    window = open_window(engine)
    qtbot.waitUntil(lambda: window.background.idle(), timeout=5000)
    qtbot.waitUntil(lambda: _lexer.cache_info().currsize >= len(COMMON_LANGUAGES), timeout=5000)
    made = _lexer.cache_info().misses
    for language in COMMON_LANGUAGES:
        _lexer(language)
    assert _lexer.cache_info().misses == made  # none is made on the GUI thread now


def test_each_open_chat_keeps_its_own_draft_and_place(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    """A pane per open chat: what was typed in one stays there when another is shown."""
    first = open_demo(window, engine, qtbot, turns=2)
    first_pane = window.pane
    qtbot.keyClicks(first_pane.composer.edit, "half a question about #88213")
    second = window.new_chat("Another")
    assert second is not None
    assert second is not first
    assert window.pane is not first_pane
    assert window.pane.composer.edit.toPlainText() == ""  # its own, empty
    qtbot.keyClicks(window.pane.composer.edit, "something else")
    window.open_chat(first.chat.id)
    assert window.pane is first_pane  # the same pane, not made again
    assert first_pane.composer.edit.toPlainText() == "half a question about #88213"
    assert window.center.currentWidget() is first_pane


def test_a_problem_that_is_no_chat_s_own_is_said_whole_above_the_chat(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    open_demo(window, engine, qtbot, turns=1)
    words = "The folder /media/usb is read-only: choose another folder for the export."
    window.show_problem(ErrorInfo("Export failed", words))
    banner = window.banner
    assert banner.isVisible()
    assert not window.pane.banner.isVisible()  # not the chat's error: no Retry there
    # In the reading column's width, not squeezed to its size hint (it cut the words)
    assert banner.width() >= min(window.settings.reading_width, window.middle.width()) - 40
    assert banner.message.width() >= banner.message.fontMetrics().horizontalAdvance(words) / 2


def test_a_narrow_window_folds_the_chat_list_to_a_rail_of_icons(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    open_demo(window, engine, qtbot, turns=1)
    window.resize(1300, 700)
    qtbot.waitUntil(lambda: window.chat_list.isVisible(), timeout=2000)
    assert window.rail is None or not window.rail.isVisible()
    window.resize(960, 700)
    qtbot.waitUntil(lambda: not window.chat_list.isVisible(), timeout=2000)
    rail = window.rail
    assert rail is not None
    assert rail.isVisible()
    assert rail.width() <= 48  # icons, not the list
    qtbot.mouseClick(rail.buttons["chats"], Qt.MouseButton.LeftButton)
    assert window.chat_list.isVisible()
    assert not rail.isVisible()
    window.menus.chat_list_action.trigger()  # Ctrl+B: folded again
    assert rail.isVisible()
    qtbot.mouseClick(rail.buttons["search"], Qt.MouseButton.LeftButton)
    assert window.chat_list.isVisible()
    assert window.chat_list.search.hasFocus()
    window.menus.chat_list_action.trigger()
    chats = len(engine.store.list_chats())
    qtbot.mouseClick(rail.buttons["new"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(engine.store.list_chats()) == chats + 1, timeout=3000)
    window.resize(1300, 700)  # wide again: the list as it was, no rail
    qtbot.waitUntil(lambda: window.chat_list.isVisible(), timeout=2000)
    assert not rail.isVisible()


def test_an_unsent_draft_is_there_again_after_a_restart(
    window: MainWindow,
    engine: Engine,
    qtbot: QtBot,
    open_window: Callable[[Engine], MainWindow],
) -> None:
    """Drafts were kept per chat only while the app ran (a new user's report): typed,
    then the window closed before the pause that keeps a draft — it is kept with the
    chat, and in the composer again; sent, it is kept no more."""
    session = open_demo(window, engine, qtbot, turns=2, planned=False)
    chat_id = session.chat.id
    qtbot.keyClicks(window.pane.composer.edit, "half a thought")
    window.close()
    again = open_window(engine)
    again.open_chat(chat_id)
    composer = again.pane.composer
    assert composer.edit.toPlainText() == "half a thought"
    qtbot.keyClick(composer.edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not composer.edit.toPlainText(), timeout=5000)
    qtbot.waitUntil(lambda: engine.chat(chat_id).draft == "", timeout=5000)


def test_tab_goes_through_the_chat_list_s_project_filter_once_there_is_a_project(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    """Tab went from New chat straight to the list, past the project filter (a new
    user's report)."""
    engine.projects.new("Refunds")
    window.open_chat(engine.new_chat("One").id)
    window.chats.refresh()
    panel = window.chat_list
    qtbot.waitUntil(lambda: panel.project_filter.isVisible(), timeout=5000)
    panel.new_button.setFocus()
    qtbot.keyClick(panel.new_button, Qt.Key.Key_Tab)
    assert panel.project_filter.hasFocus()
    qtbot.keyClick(panel.project_filter, Qt.Key.Key_Tab)
    assert panel.list.hasFocus()


def test_tab_reaches_back_to_chats_and_undo_where_they_are_shown(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    """Made when first shown, the archive's Back button and Undo still come in Tab's
    order as the eye reads them: New chat, Back to chats, the list, Undo."""
    kept = engine.new_chat("Kept")
    gone = engine.new_chat("Archived now")
    window.chats.refresh()
    window.open_chat(kept.id)
    panel = window.chat_list
    panel.archive_requested.emit(gone.id, True)  # (the row's menu: Archive)
    qtbot.waitUntil(lambda: panel.undo_bar.isVisible(), timeout=5000)
    panel.archive_toggled.emit(True)  # (View → Archived chats)
    qtbot.waitUntil(lambda: panel.showing_archive, timeout=5000)
    back = panel.archive_bar.findChild(QPushButton)
    assert back is not None
    assert back.text() == "Back to chats"
    panel.new_button.setFocus()
    qtbot.keyClick(panel.new_button, Qt.Key.Key_Tab)
    assert back.hasFocus()
    qtbot.keyClick(back, Qt.Key.Key_Tab)
    assert panel.list.hasFocus()
    qtbot.keyClick(panel.list, Qt.Key.Key_Tab)
    assert panel.undo_button.hasFocus()


def test_a_list_made_after_the_bars_takes_its_place_between_them_in_tab_order(
    engine: Engine, qtbot: QtBot
) -> None:
    """Undo offered, then the archive shown, before the list's view was made: Tab still
    goes Back to chats, the list, Undo."""
    chat = engine.new_chat("Archived now")
    engine.chat(chat.id).set_archived(True)
    panel = ChatListPanel()
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    panel.offer_undo(engine.store.list_chats(archived=True)[0], "archive")
    panel.set_chats(engine.store.list_chats(archived=True), archived=True)
    back = panel.archive_bar.findChild(QPushButton)
    assert back is not None
    back.setFocus()
    qtbot.waitUntil(back.hasFocus, timeout=2000)
    qtbot.keyClick(back, Qt.Key.Key_Tab)
    assert panel.list.hasFocus()
    qtbot.keyClick(panel.list, Qt.Key.Key_Tab)
    assert panel.undo_button.hasFocus()
