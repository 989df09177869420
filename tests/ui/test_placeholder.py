"""The placeholder window opens, says what it is, and renders."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from desktop_app.ui.placeholder import PlaceholderWindow


def test_the_window_renders(qtbot: QtBot, tmp_path: Path) -> None:
    window = PlaceholderWindow()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert window.windowTitle() == "ContextDesk"
    image = window.grab()
    assert image.width() >= 500
    assert image.save(str(tmp_path / "placeholder.png"))
