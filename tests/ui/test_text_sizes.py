"""Every word on screen stays whole at every text size (Settings → Text size, 9 to 18)
and window width (900 to 1,280 px): a label wraps, or ends in … with its whole text in a
tooltip; a button is as wide as its words; nothing runs past the right edge of a panel
that scrolls only down; every tab is in sight."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QApplication,
    QLabel,
    QTabBar,
    QWidget,
)
from pytestqt.qtbot import QtBot

from desktop_app.app import main
from desktop_app.chats import Engine
from desktop_app.ui import theme
from desktop_app.ui.context.overview import SectionRows
from desktop_app.ui.main_window import MainWindow
from tests.ui.conftest import open_demo


def _words(widget: QWidget) -> str:
    text = getattr(widget, "text", None)
    return str(text())[:40] if callable(text) else ""


def _in_scrolled_panel(widget: QWidget, top: QWidget) -> QWidget | None:
    """The viewport of the scroll area the widget is in, if any (below `top`)."""
    parent = widget.parentWidget()
    while parent is not None and parent is not top:
        area = parent.parentWidget()
        if isinstance(area, QAbstractScrollArea) and parent is area.viewport():
            return parent
        parent = area
    return None


def cut_words(top: QWidget) -> list[str]:
    """What is cut off in `top` and the widgets in it, said (empty: nothing)."""
    found = []
    for widget in top.findChildren(QWidget):
        if not widget.isVisible() or widget.window() is not top:
            continue
        name = f"{type(widget).__name__} {widget.objectName()!r} {_words(widget)!r}"
        hint = widget.sizeHint().width()
        if isinstance(widget, QAbstractButton) and widget.text() and widget.width() + 1 < hint:
            found.append(f"{name}: a button {widget.width()} px wide for {hint} px of words")
        if (
            isinstance(widget, QLabel)
            and widget.text()
            and not widget.wordWrap()
            and widget.width() + 1 < hint
        ):
            found.append(f"{name}: a label {widget.width()} px wide for {hint} px of words")
        if isinstance(widget, QLabel) and widget.text() and widget.wordWrap():
            needs = widget.heightForWidth(widget.width())
            if needs > widget.height() + 1:
                found.append(f"{name}: a label {widget.height()} px high for {needs} px of lines")
        if isinstance(widget, SectionRows) and widget.height() < widget.sizeHint().height():
            found.append(f"{name}: {widget.height()} px high for {len(widget.rows)} rows")
        if isinstance(widget, QLabel) and widget.text().endswith("…") and not widget.toolTip():
            found.append(f"{name}: cut with … but no tooltip holds the rest")
        if isinstance(widget, QTabBar):
            tabs = sum(widget.tabRect(i).width() for i in range(widget.count()))
            if tabs > widget.width():
                found.append(f"{name}: tabs {tabs} px wide in {widget.width()} px")
        viewport = _in_scrolled_panel(widget, top)
        if viewport is not None:
            right = widget.mapTo(viewport, widget.rect().topRight()).x()
            if right > viewport.width() + 1:
                found.append(f"{name}: runs to x={right}, past the panel's {viewport.width()}")
    return found


@pytest.fixture
def text_size() -> Iterator[None]:
    yield
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    theme.choose(app, "system", 0)  # the look is the application's: later tests start clean


@pytest.mark.usefixtures("text_size")
def test_no_word_is_cut_at_any_text_size_or_width(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    open_demo(window, engine, qtbot)
    problems: list[str] = []

    def resized(width: int) -> bool:
        return window.width() == width

    for size in (9, 12, 15, 18):
        theme.choose(app, "system", size)
        for width in (1280, 900):
            window.resize(width, 800)
            qtbot.waitUntil(functools.partial(resized, width), timeout=2000)
            placement = window.placement
            if placement.narrow and not placement.overlay.isVisible():
                qtbot.mouseClick(window.strip, Qt.MouseButton.LeftButton)  # the panel, over
            for tab in range(window.context.tabs.count()):
                window.context.tabs.setCurrentIndex(tab)
                qtbot.wait(60)  # (fonts and layouts change by events)
                cut = cut_words(window)
                if cut:  # a size hint read while the new font's layouts are still being made
                    qtbot.wait(400)  # is not a cut: what is still cut then is
                    cut = cut_words(window)
                problems += [f"{size} pt, {width} px, tab {tab}: {p}" for p in cut]
    assert problems == [], "\n".join(problems)


# As a start is: a fresh process, Settings' text size read before the first frame.
STARTED_AT_15 = """
import json, sys, time
from pathlib import Path
from desktop_app.app import main
from desktop_app.chats import Engine
from desktop_app.ui.gui import make_app
from desktop_app.ui.main_window import MainWindow
app = make_app()
engine = Engine.open(Path(sys.argv[1]), demo=True)
chat = engine.create_demo_chat(1)
window = MainWindow.over(engine)
window.show()
window.open_chat(chat.id)  # at once: the conversation is made before the first frame
end = time.monotonic() + 30
while time.monotonic() < end and (window.current is None or window.current.plan is None):
    app.processEvents()
for _ in range(50):
    app.processEvents()
header, composer = window.pane.header, window.pane.composer
print(json.dumps({
    "application": app.font().pointSizeF(),
    "model box": header.model.font().pointSizeF(),
    "draft": composer.edit.font().pointSizeF(),
    "send": composer.send_button.font().pointSizeF(),
    "title": header.title.font().pointSizeF(),
}), flush=True)
window.close()  # (its threads stop with it)
engine.close()
"""


def test_a_start_at_a_chosen_text_size_shows_every_word_at_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    main(["--home", str(home), "settings", "text_size=15"])  # Settings → Text size, saved
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    run = subprocess.run(
        [sys.executable, "-c", STARTED_AT_15, str(home)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    sizes = json.loads(run.stdout.strip().splitlines()[-1])
    title = sizes.pop("title")
    assert sizes == dict.fromkeys(sizes, 15.0)
    assert title > 15
