"""A real main window over real parts: a temp home with a SQLite file, the offline demo's
simulator on a loopback socket, the anthropic SDK, the in-memory keyring."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop_app.api.simulator import SimulatorServer
from desktop_app.chats import Engine
from desktop_app.demo_chat import create_demo_chat
from desktop_app.ui.conversation.session import ChatSession
from desktop_app.ui.gui import make_app
from desktop_app.ui.main_window import MainWindow

W = TypeVar("W")
TURN_TIMEOUT_MS = 20_000  # the first turn of a run imports the SDK (~2.5 s on 2 cores)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    (folder / "notes.md").write_text("Invoice #88213: refund 847.20 EUR by 2026-04-13.\n")
    return folder


@pytest.fixture
def engine(tmp_path: Path, workspace: Path) -> Iterator[Engine]:
    make_app()
    engine = Engine.open(tmp_path / "home", demo=True)
    engine.settings = replace(engine.settings, workspace=str(workspace))
    yield engine
    engine.close()


@pytest.fixture
def open_window(qtbot: QtBot) -> Callable[[Engine], MainWindow]:
    def make(engine: Engine) -> MainWindow:
        window = MainWindow.over(engine)
        qtbot.addWidget(window)
        window.resize(1200, 800)
        window.show()
        qtbot.waitExposed(window)
        qtbot.waitUntil(lambda: window.started, timeout=5000)  # the first frame's aftermath
        return window

    return make


@pytest.fixture
def window(engine: Engine, open_window: Callable[[Engine], MainWindow]) -> MainWindow:
    return open_window(engine)


@pytest.fixture
def simulator(engine: Engine) -> SimulatorServer:
    """The demo's simulator, started now so a test can queue replies and faults, and
    read what it was sent (the app's keeps nothing)."""
    engine.connection.backend()
    assert isinstance(engine.connection.simulator, SimulatorServer)
    engine.connection.simulator.state.recording = True
    return engine.connection.simulator


def open_demo(
    window: MainWindow, engine: Engine, qtbot: QtBot, turns: int = 6, *, planned: bool = True
) -> ChatSession:
    """A demo chat of `turns` exchanges, opened in the window (and planned, by default)."""
    chat = create_demo_chat(engine.store, turns)
    window.chat_list.set_chats(engine.store.list_chats())
    session = window.open_chat(chat.id)
    assert session is not None
    if planned:
        qtbot.waitUntil(lambda: session.plan is not None, timeout=5000)
    return session


def when_shown(kind: type[W], act: Callable[[W], object]) -> None:
    """When a window of `kind` is next shown (a modal dialog, a menu, a message box, whose
    `exec` holds the test until it closes), `act` on it — as a person would, through its
    widgets."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    def look() -> None:
        shown = next(
            (w for w in QApplication.topLevelWidgets() if isinstance(w, kind) and w.isVisible()),
            None,
        )
        if shown is None:
            QTimer.singleShot(20, look)
            return
        act(shown)

    QTimer.singleShot(0, look)


def answer_fact_dialog(qtbot: QtBot, text: str) -> None:
    """When the next fact dialog opens (modal), type `text` into it and press
    Ctrl+Enter, as a person would."""
    from desktop_app.ui.dialogs.fact_dialog import FactDialog

    def answer(dialog: FactDialog) -> None:
        dialog.edit.selectAll()
        qtbot.keyClicks(dialog.edit, text)
        qtbot.keyClick(dialog.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)

    when_shown(FactDialog, answer)
