"""The window and its data folder: new chats take Settings' defaults, a full disk costs
nothing, the command line writes alongside the window, and one window per folder."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from desktop_app.api.simulator import SimulatorServer
from desktop_app.app import main
from desktop_app.chats import Engine, app_folders
from desktop_app.chats.instance import InstanceLock
from desktop_app.core.blocks import TextBlock
from desktop_app.core.errors import ErrorKind
from desktop_app.core.messages import Message, MessageStatus, user_text
from desktop_app.ui.gui import FIRST_PAINT_PROBE, open_window, run_gui
from desktop_app.ui.main_window import MainWindow
from desktop_app.ui.qt_loading import init_fontconfig
from desktop_app.ui.startup.single_instance import SingleInstance
from tests.ui.conftest import TURN_TIMEOUT_MS, open_demo
from tests.unit.builders import database_at


def test_a_chat_made_in_the_window_takes_every_default_from_settings(
    window: MainWindow, engine: Engine, simulator: SimulatorServer, qtbot: QtBot
) -> None:
    engine.save_settings(
        replace(
            engine.settings,
            model="claude-haiku-4-5",
            max_tokens=6000,
            thinking="budget",
            thinking_budget=2048,
            system_prompt="Answer in French.",
        )
    )
    qtbot.mouseClick(window.chat_list.new_button, Qt.MouseButton.LeftButton)
    session = window.current
    assert session is not None
    chat = engine.store.chat(session.chat.id)
    assert (chat.model, chat.system_prompt) == ("claude-haiku-4-5", "Answer in French.")
    assert (chat.settings.max_tokens, chat.settings.thinking_budget) == (6000, 2048)
    qtbot.keyClicks(window.pane.composer.edit, "Bonjour")
    qtbot.keyClick(window.pane.composer.edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not session.busy, timeout=TURN_TIMEOUT_MS)
    sent = simulator.message_requests()[-1].body  # what the server was sent
    assert sent["max_tokens"] == 6000
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert sent["system"][0]["text"].startswith("Answer in French.")


def test_a_full_disk_is_explained_and_the_draft_and_the_chat_are_kept(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot, turns=2)
    before = [m.id for m in engine.store.messages(session.chat.id)]
    pages = engine.store.db.execute("PRAGMA page_count").fetchone()[0]
    engine.store.db.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's real SQLITE_FULL
    draft = "A long message. " * 20_000
    window.pane.composer.edit.setPlainText(draft)
    qtbot.mouseClick(window.pane.composer.send_button, Qt.MouseButton.LeftButton)
    assert window.pane.banner.isVisible()
    assert window.pane.banner.title.text() == "The disk is full"
    assert "Nothing was changed" in window.pane.banner.message.text()
    assert window.pane.banner.retry_button.isHidden()  # Retry answers again; this needs Send
    assert window.pane.composer.edit.toPlainText() == draft  # nothing typed is lost
    assert not session.busy
    assert [m.id for m in session.messages] == before  # no message that was not stored
    assert [m.id for m in engine.store.messages(session.chat.id)] == before
    session.set_error(None)
    big_fact = "Pinned on a full disk: " + "x" * 200_000
    with qtbot.waitSignal(session.planned, timeout=5000):
        window.context.facts.add_requested.emit(big_fact)
    assert session.error is not None
    assert session.error.kind is ErrorKind.DISK_FULL
    assert window.pane.banner.title.text() == "The disk is full"
    assert big_fact not in [f.text for f in session.state().facts]
    engine.store.db.execute("PRAGMA max_page_count = 1073741823")  # space again: send works
    qtbot.mouseClick(window.pane.composer.send_button, Qt.MouseButton.LeftButton)
    assert session.busy
    assert window.pane.composer.edit.toPlainText() == ""
    qtbot.waitUntil(lambda: not session.busy, timeout=TURN_TIMEOUT_MS)
    assert len(engine.store.messages(session.chat.id)) == len(before) + 2


def test_a_disk_that_fills_during_a_turn_stops_it_says_so_and_loses_nothing(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    """The question is stored; the request's record then needs the disk (the long history
    is sent, so written to the ledger, for the first time) and there is none."""
    history = "Notes from the meeting, kept word for word. " * 6_000
    body = {
        "model": "claude-sonnet-5-5",
        "messages": [
            {"role": "user", "content": history},
            {"role": "assistant", "content": "I have read them."},
        ],
    }
    chat = engine.import_bytes(json.dumps(body).encode(), "Meeting").chat
    window.chat_list.set_chats(engine.store.list_chats())
    session = window.open_chat(chat.id)
    assert session is not None
    qtbot.waitUntil(lambda: session.plan is not None, timeout=5000)
    # (the plan's token counts are kept after it, by a connection of their own: written
    # before the disk is measured, they cannot take the space the test leaves)
    qtbot.waitUntil(lambda: len(engine.store.block_counts(chat.id)) == 2, timeout=5000)
    pages = engine.store.db.execute("PRAGMA page_count").fetchone()[0]
    engine.store.db.execute(f"PRAGMA max_page_count = {pages + 8}")  # the question fits
    window.pane.composer.edit.setPlainText("What did we decide?")
    qtbot.mouseClick(window.pane.composer.send_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not session.busy, timeout=TURN_TIMEOUT_MS)
    qtbot.waitUntil(window.pane.banner.isVisible, timeout=5000)
    assert window.pane.banner.title.text() == "The disk is full"
    assert "space" in window.pane.banner.message.text()  # what to do
    assert session.error is not None
    assert session.error.kind is ErrorKind.DISK_FULL
    # Nothing lost: the history and the question are stored, as the chat reopens them —
    # and what arrived of the reply. Which write meets the full disk first is SQLite's
    # to decide (pages freed by the index's merges are reused before the file grows): the
    # request's record, a streaming checkpoint, or the bookkeeping after a whole reply.
    stored = engine.store.messages(chat.id)
    assert [m.text for m in stored[:3]] == [history, "I have read them.", "What did we decide?"]
    assert [m.text for m in session.messages] == [m.text for m in stored]
    for partial in stored[3:]:
        assert partial.role == "assistant"
        assert "[Simulated reply from the ContextDesk offline demo model]".startswith(
            partial.text[:20]
        )
    if stored[3:] and stored[-1].status is MessageStatus.COMPLETE:
        # The reply was whole and stored before the disk filled: there is nothing to
        # answer again, so no retry is offered (it would ask the question twice).
        assert len(stored) == 4
        assert not window.pane.banner.retry_button.isVisible()
        return

    engine.store.db.execute("PRAGMA max_page_count = 1073741823")  # space again
    assert window.pane.banner.retry_button.isVisible()
    qtbot.mouseClick(window.pane.banner.retry_button, Qt.MouseButton.LeftButton)
    assert session.busy  # the stored question is answered
    qtbot.waitUntil(lambda: not session.busy, timeout=TURN_TIMEOUT_MS)
    assert session.error is None
    answered = session.messages[-2:]
    assert answered[0].text == "What did we decide?"
    assert answered[1].status is MessageStatus.COMPLETE
    assert not window.pane.banner.isVisible()


def test_the_command_line_writes_alongside_the_window_and_the_window_shows_it(
    window: MainWindow, engine: Engine, qtbot: QtBot, capsys: pytest.CaptureFixture[str]
) -> None:
    session = open_demo(window, engine, qtbot, turns=2)
    # Each change below is awaited: look every 50 ms, not every WATCH_MS (1.5 s) (the same
    # look, more often; waiting out the interval five times was most of this test's time)
    window.watch_timer.setInterval(50)
    qtbot.keyClicks(window.pane.composer.edit, "a draft in progress")
    lock = InstanceLock(engine.paths.data)  # as the running app holds it
    assert lock.acquire()
    try:
        home = str(engine.paths.data.parent)
        assert main(["--home", home, "pin", session.chat.id, "Pinned from the terminal"]) == 0
        qtbot.waitUntil(
            lambda: "Pinned from the terminal" in [f.text for f in session.state().facts],
            timeout=5000,
        )
        qtbot.waitUntil(
            lambda: (
                "Pinned from the terminal" in [f.text for f in window.context.facts.model.facts()]
            ),
            timeout=5000,
        )
        assert main(["--home", home, "chat", "set", session.chat.id, "title=Renamed outside"]) == 0
        qtbot.waitUntil(lambda: "Renamed outside" in window.windowTitle(), timeout=5000)
        shown = len(session.messages)
        assert main(["--home", home, "--demo", "send", session.chat.id, "From the terminal"]) == 0
        qtbot.waitUntil(lambda: len(session.messages) == shown + 2, timeout=5000)
        assert session.messages[-2].text == "From the terminal"
        assert window.pane.composer.edit.toPlainText() == "a draft in progress"  # untouched
        assert main(["--home", home, "settings", "model=claude-haiku-4-5"]) == 0
        qtbot.waitUntil(lambda: engine.settings.model == "claude-haiku-4-5", timeout=5000)
        other = engine.new_chat("Trashed from the terminal")
        window.open_chat(other.id)
        assert main(["--home", home, "chat", "delete", other.id]) == 0
        qtbot.waitUntil(lambda: window.current is None, timeout=5000)
        assert window.chat_list.model.row_of(other.id) is None
        assert other.id not in window.panes.sessions()
    finally:
        lock.release()
    capsys.readouterr()


def test_a_second_window_on_the_folder_raises_the_first_and_writes_nothing(
    tmp_path: Path, qtbot: QtBot, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    first = SingleInstance(Engine.open(home).paths.data)
    assert first.claim()
    first.listen()
    try:
        database = home / "data" / "contextdesk.sqlite3"
        before = database.stat().st_mtime_ns
        with qtbot.waitSignal(first.activation_requested, timeout=5000):
            assert run_gui(home) == 0  # returns at once: no second window
        assert "already open" in capsys.readouterr().err
        assert database.stat().st_mtime_ns == before
        assert not SingleInstance(home / "data").claim()
    finally:
        first.release()
    second = SingleInstance(home / "data")
    assert second.claim()  # the first let go: the folder is free again
    second.release()


def test_the_window_repairs_what_a_crash_left_and_goes_on_there(
    tmp_path: Path, qtbot: QtBot
) -> None:
    home = tmp_path / "home"
    before = Engine.open(home)
    chat = before.new_chat("Cut by a crash")
    before.store.append_message(chat.id, user_text("What is the refund?"))
    half = Message("assistant", (TextBlock("The refund is"),), status=MessageStatus.STREAMING)
    before.store.checkpoint(chat.id, half)  # as a reply being written when the app died
    before.close()
    instance = SingleInstance(app_folders(home).data)
    assert instance.claim()  # as run_gui does, before the window opens the database
    try:
        window = open_window(home, demo=True)
        qtbot.addWidget(window)
        assert not window.attached  # the first frame comes first, the engine after it
        assert window.chat_list.model.row_of(chat.id) == 0
        window.show()
        qtbot.waitUntil(lambda: window.started, timeout=5000)
        assert not window.engine.window_open  # its own lock is not "another window"
        assert window.engine.store.messages(chat.id)[-1].status is MessageStatus.INTERRUPTED
        session = window.open_chat(chat.id)
        assert session is not None
        qtbot.keyClicks(window.pane.composer.edit, "Please go on")
        qtbot.keyClick(window.pane.composer.edit, Qt.Key.Key_Return)
        assert session.busy
        qtbot.waitUntil(lambda: not session.busy, timeout=TURN_TIMEOUT_MS)
        assert session.error is None
        assert session.messages[-1].text.startswith("[Simulated reply")
        window.close()
        window.engine.close()
    finally:
        instance.release()


def test_chats_made_before_thinking_was_per_chat_keep_the_settings_budget(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    engine = Engine.open(home)
    chat = engine.new_chat(model="claude-haiku-4-5")  # a model that takes a budget
    engine.store.db.execute(  # as an older ContextDesk stored it: no thinking at all
        "UPDATE chats SET settings = json_remove(settings, '$.thinking_budget', '$.thinking', "
        "'$.effort', '$.thinking_display')"
    )
    engine.change_settings({"thinking": "2048"})
    engine.close()
    upgraded = Engine.open(home)
    assert upgraded.chat(chat.id).settings.thinking_budget == 2048
    body = upgraded.chat(chat.id).plans.plan("hi").request.body()
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    upgraded.close()


def test_the_real_entry_point_reports_its_first_paint_for_the_benchmark(tmp_path: Path) -> None:
    """What tests/perf/bench_startup.py measures: `python -m desktop_app` to its first
    frame; the app then quits on its own."""
    env = {
        **os.environ,
        FIRST_PAINT_PROBE: "1",
        "QT_QPA_PLATFORM": "offscreen",
        "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
    }
    done = subprocess.run(
        [sys.executable, "-m", "desktop_app", "--home", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["FIRST-PAINT"]


def test_loading_qt_leaves_python_s_own_import_in_place() -> None:
    """PySide6's import hook reads the source of every later module (~20 ms of start-up)."""
    script = (
        "import builtins; plain = builtins.__import__\n"
        "from desktop_app.ui.qt_loading import load_qt; load_qt()\n"
        "import desktop_app.ui.gui\n"
        "print(builtins.__import__ is plain)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.split() == ["True"], done.stderr[-2000:]


START_UP_THREAD = """
from desktop_app.config.privacy import protect_process
from desktop_app.ui.qt_loading import _started, load_qt, wait_for_start_up

load_qt(make_private=protect_process)
thread = _started[-1]
wait_for_start_up()
print(thread.name, thread.is_alive(), thread.private, _started == [])
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl and fontconfig")
def test_the_start_up_thread_has_made_the_process_private_and_started_fontconfig() -> None:
    """While Qt loads, a thread makes the process private and starts fontconfig (the
    first widget with text would wait ~5 ms for it); the application waits for it."""
    done = subprocess.run(
        [sys.executable, "-c", START_UP_THREAD], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.split() == ["start-up", "False", "True", "True"], done.stderr[-2000:]
    assert init_fontconfig() is True  # (fontconfig here: started, it says so again)
    assert init_fontconfig("libfontconfig-that-is-not-there.so.1") is False


FIRST_FRAME_WATCH = """
import json, sys
import PySide6.QtCore as core
from desktop_app.ui.gui import make_app, open_window

class Watch(core.QObject):
    def eventFilter(self, watched, event):
        if event.type() == core.QEvent.Type.Paint:
            watched.removeEventFilter(self)
            loaded = [m for m in ENGINE if m in sys.modules]
            print(json.dumps({"loaded": loaded, "qt_enums": "Qt" in vars(core),
                              "rows": window.chat_list.model.rowCount(),
                              "list_view": LIST_VIEW in sys.modules}), flush=True)
            core.QTimer.singleShot(0, app.quit)
        return False

ENGINE = ["desktop_app.chats.engine", "desktop_app.storage.store", "desktop_app.context.state",
          "desktop_app.core.messages", "desktop_app.ui.chat_list.controller",
          # the settings and their checks, the errors, the database's migrations, the search
          "desktop_app.config.settings", "desktop_app.core.errors", "desktop_app.storage.db",
          "desktop_app.storage.search"]
LIST_VIEW = "desktop_app.ui.chat_list.list_view"  # (made for a first frame with chats only)
app = make_app()
window = open_window(sys.argv[1])
watch = Watch()
window.installEventFilter(watch)
window.show()
app.exec()
"""


def first_frame(home: Path) -> dict[str, object]:
    """What was loaded when the real start-up's window first painted (a fresh process)."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"
    done = subprocess.run(
        [sys.executable, "-c", FIRST_FRAME_WATCH, str(home)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    import json

    return dict(json.loads(done.stdout.splitlines()[0]))


def test_the_first_frame_lists_the_chats_before_the_engine_loads(tmp_path: Path) -> None:
    """Start-up (the window basics issue): the frame and the chat list paint from a light
    read; the engine, and Qt's namespace of enums, load after it. A first start's frame
    has no chats to list: the list's view is made after it."""
    empty = {"loaded": [], "qt_enums": False, "rows": 0, "list_view": False}
    assert first_frame(tmp_path / "empty") == empty
    home = tmp_path / "returning"
    engine = Engine.open(home)
    for title in ("First", "Second"):
        engine.new_chat(title)
    engine.close()
    # (the list takes the focus as the window shows: no row's flags are asked for then)
    assert first_frame(home) == {"loaded": [], "qt_enums": False, "rows": 2, "list_view": True}


def test_an_older_database_is_listed_once_the_engine_has_upgraded_it(
    tmp_path: Path, qtbot: QtBot
) -> None:
    home = tmp_path / "home"
    db = database_at(app_folders(home).data / "contextdesk.sqlite3", 9)  # before branches
    db.execute(
        "INSERT INTO chats (id, title, model, created_at, updated_at) "
        "VALUES ('c', 'Kept through the upgrade', 'm', 0, 0)"
    )
    db.execute("INSERT INTO context_state (chat_id) VALUES ('c')")
    db.close()
    window = open_window(home)
    qtbot.addWidget(window)
    assert window.frame.chats is None  # not read by the first frame: the engine upgrades it
    window.show()
    qtbot.waitUntil(lambda: window.started, timeout=5000)
    assert [c.title for c in window.chat_list.model.chats()] == ["Kept through the upgrade"]
    window.close()
    window.engine.close()


def test_a_database_the_window_cannot_open_is_said_after_the_first_frame(
    tmp_path: Path, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    engine = Engine.open(home)
    engine.close()
    import sqlite3

    db = sqlite3.connect(app_folders(home).data / "contextdesk.sqlite3")
    db.execute("PRAGMA user_version = 99")  # from a newer ContextDesk
    db.close()
    said: list[str] = []
    monkeypatch.setattr(
        "PySide6.QtWidgets.QMessageBox.critical", lambda _w, title, text: said.append(text)
    )
    codes: list[int] = []  # (the real exit would end this test process's event loops)
    monkeypatch.setattr("PySide6.QtWidgets.QApplication.exit", codes.append)
    window = open_window(home)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.closed, timeout=5000)
    assert not window.attached
    assert "Update ContextDesk to open it" in said[0]
    assert codes == [1]  # `contextdesk` ends with an error


def test_the_real_start_up_restores_the_last_chat_and_the_layout(
    tmp_path: Path, qtbot: QtBot
) -> None:
    """As `test_the_window_remembers_its_layout_and_last_chat`, through the start-up's
    own path: the frame first, the engine and the dock after it."""
    home = tmp_path / "home"
    engine = Engine.open(home)
    first, last = engine.new_chat("First"), engine.new_chat("Where I left off")
    engine.store.append_message(last.id, user_text("Where was I?"))
    before = MainWindow.over(engine)
    qtbot.addWidget(before)
    before.resize(760, 560)  # inside the offscreen screen (800×600)
    before.show()
    qtbot.waitUntil(lambda: before.started, timeout=5000)
    before.open_chat(last.id)
    before.menus.context_view_action.setChecked(True)
    before.menus.chat_list_action.setChecked(True)  # narrow, the list folds: shown anyway
    before.splitter.setSizes([250, 200])
    expected = before.splitter.sizes()
    before.close()
    engine.close()
    window = open_window(home)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.started, timeout=5000)
    assert window.current is not None
    assert window.current.chat.id == last.id
    assert window.size() == before.size()
    window.menus.chat_list_action.setChecked(True)  # the list's width is remembered
    qtbot.waitUntil(lambda: window.splitter.sizes()[0] == expected[0], timeout=2000)
    assert window.menus.context_view_action.isChecked()
    assert window.menus.new_action.isEnabled()
    assert not window.menus.new_action.shortcut().isEmpty()
    assert window.chat_list.model.row_of(first.id) is not None
    window.close()
    window.engine.close()


def test_a_log_file_that_cannot_be_opened_does_not_stop_the_window(
    tmp_path: Path, qtbot: QtBot
) -> None:
    home = tmp_path / "home"
    Engine.open(home).close()
    (home / "logs" / "contextdesk.log").mkdir()  # not a file: it cannot be written
    window = open_window(home)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.started, timeout=5000)
    assert window.attached
    assert window.new_chat("Still works") is not None
    window.close()
    window.engine.close()


def test_a_shortcut_pressed_before_the_engine_is_attached_is_answered(
    tmp_path: Path, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine opens right after the first frame; a key pressed in between opens it
    at once instead of being lost (what xdotool does as soon as the window is up)."""
    home = tmp_path / "home"
    engine = Engine.open(home)
    engine.new_chat("Existing")
    engine.close()
    window = open_window(home)
    qtbot.addWidget(window)
    after_paint = window.after_first_paint
    monkeypatch.setattr(window, "after_first_paint", lambda: None)  # hold it back
    window.show()
    qtbot.waitUntil(lambda: window._painted, timeout=5000)
    assert not window.attached
    window.chat_list.list.setFocus()
    qtbot.keyClick(window.chat_list.list, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert window.attached
    assert window.current is not None
    assert window.current.chat.title == "New chat"
    after_paint()  # what the first frame's aftermath does then: the rest, once
    assert window.started
    assert [c.title for c in window.engine.list_chats()] == ["New chat", "Existing"]
    window.close()
    window.engine.close()


def test_a_shortcut_pressed_on_a_first_start_after_its_list_is_made_is_answered(
    tmp_path: Path, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first start's list view is made right after the frame, with the early input's
    filter off meanwhile (`WindowFrame._first_frame_done`); it is back on after, so a
    key pressed before the engine opens still opens it."""
    window = open_window(tmp_path / "home")
    qtbot.addWidget(window)
    after_paint = window.after_first_paint
    monkeypatch.setattr(window, "after_first_paint", lambda: None)  # hold it back
    window.show()
    qtbot.waitUntil(lambda: window.chat_list.first_frame_shown, timeout=5000)
    assert not window.attached
    qtbot.keyClick(window.chat_list.search, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert window.attached
    assert window.current is not None
    assert window.current.chat.title == "New chat"
    after_paint()
    assert window.started
    window.close()
    window.engine.close()


def test_a_menu_opened_before_the_engine_shows_its_items_disabled(
    tmp_path: Path, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first frame has the menus' titles; their items are made when first needed:
    opened before the engine, a menu lists them, disabled, and once it is here they work."""
    window = open_window(tmp_path / "home")
    qtbot.addWidget(window)
    after_paint = window.after_first_paint
    monkeypatch.setattr(window, "after_first_paint", lambda: None)  # hold it back
    window.show()
    qtbot.waitUntil(lambda: window._painted, timeout=5000)
    titles = [top.text() for top in window.menuBar().actions()]
    assert titles == ["&File", "&Chat", "&View", "&Help"]
    file_menu = window.menus.menus[0]
    file_menu.popup(window.mapToGlobal(window.rect().center()))
    qtbot.waitUntil(file_menu.isVisible, timeout=5000)
    items = [action for action in file_menu.actions() if action.text()]
    assert items[0].text() == "&New chat"
    assert not any(action.isEnabled() for action in items)
    file_menu.close()
    after_paint()
    assert window.attached
    assert window.menus.new_action.isEnabled()
    assert window.menus.new_action.shortcut().toString() == "Ctrl+N"
    window.close()
    window.engine.close()


def test_a_first_start_lists_its_first_chat_in_the_list_made_after_the_first_frame(
    tmp_path: Path, qtbot: QtBot
) -> None:
    """A first start's frame shows "No chats yet" and no list (its view is made after
    the frame, as is the icon); the first chat, made with Ctrl+N from the search box that has the focus,
    is listed there and current."""
    window = open_window(tmp_path / "home")
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.started, timeout=5000)
    # the icon, given right after the frame, at every size it is drawn at
    sizes = {size.width() for size in QApplication.windowIcon().availableSizes()}
    assert {16, 32, 512} <= sizes
    panel = window.chat_list
    assert panel.empty.isVisible()
    assert "No chats yet" in panel.empty.text()
    assert not panel.list.isVisible()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is panel.search, timeout=5000)
    qtbot.keyClick(panel.search, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: panel.list.isVisible(), timeout=5000)
    assert panel.model.rowCount() == 1
    assert window.current is not None
    assert panel.selected_id() == window.current.chat.id
    assert not panel.empty.isVisible()
    window.close()
    window.engine.close()


class _WindowsShown(QObject):
    """Records every top-level widget shown (an application-wide event filter)."""

    def __init__(self) -> None:
        super().__init__()
        self.shown: list[str] = []

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        shown = event.type() == QEvent.Type.Show
        if shown and isinstance(watched, QWidget) and watched.isWindow():
            self.shown.append(type(watched).__name__)
        return False


def test_a_returning_user_s_chat_list_is_made_inside_the_window(
    tmp_path: Path, qtbot: QtBot
) -> None:
    """The list's view is made as the first frame's chats are listed: placed in the
    panel before it is shown, never a window of its own for a moment."""
    home = tmp_path / "home"
    engine = Engine.open(home)
    engine.new_chat("One")
    engine.close()
    watch = _WindowsShown()
    app = QApplication.instance()
    assert app is not None
    app.installEventFilter(watch)
    try:
        window = open_window(home)
        qtbot.addWidget(window)
        window.show()
        qtbot.waitUntil(lambda: window.started, timeout=5000)
    finally:
        app.removeEventFilter(watch)
    assert watch.shown == ["MainWindow"]
    assert window.chat_list.list.isVisible()
    window.close()
    window.engine.close()


def test_down_in_the_chat_list_at_start_goes_to_the_second_chat(
    tmp_path: Path, qtbot: QtBot
) -> None:
    """The list takes the focus as the window shows; Qt then makes the first row current
    (not opened) — done after the first frame now, so Down still goes to the second."""
    home = tmp_path / "home"
    engine = Engine.open(home)
    for title in ("Oldest", "Middle", "Newest"):
        engine.new_chat(title)
    engine.close()
    window = open_window(home)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.started, timeout=5000)
    assert window.current is None  # no chat was open when it last closed
    listed = window.chat_list.list
    assert listed.hasFocus()
    qtbot.keyClick(listed, Qt.Key.Key_Down)
    qtbot.waitUntil(lambda: window.current is not None, timeout=5000)
    assert window.current is not None
    assert window.current.chat.title == "Middle"
    window.close()
    window.engine.close()


def test_the_window_s_socket_is_in_a_folder_only_its_user_may_enter(
    tmp_path: Path, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It was /tmp/contextdesk-<hash>: a predictable name with the umask's mode."""
    short = Path(tempfile.mkdtemp(prefix="cd", dir="/tmp"))  # a socket's path is short
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(short))
    home = tmp_path / "home"
    first = SingleInstance(Engine.open(home).paths.data)
    assert first.name is not None
    folder = Path(first.name).parent
    assert folder == short / f"contextdesk-{os.getuid()}"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert first.claim()
    first.listen()
    try:
        assert stat.S_IMODE(Path(first.name).stat().st_mode) & 0o077 == 0  # the user's alone
        with qtbot.waitSignal(first.activation_requested, timeout=5000):
            assert not SingleInstance(home / "data").claim()  # a second copy still calls
    finally:
        first.release()

    # A folder someone else made there, or one others may enter: no socket at all.
    os.chmod(folder, 0o777)
    assert SingleInstance(home / "data").name is None
    os.chmod(folder, 0o700)
    if os.getuid() == 0:  # only root can give it away
        os.chown(folder, 65534, 65534)
        assert SingleInstance(home / "data").name is None
    # A temp folder so deep the socket's path would not fit: no socket, no error.
    deep = tmp_path / ("d" * 90)
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    assert SingleInstance(home / "data").name is None
    shutil.rmtree(short)
