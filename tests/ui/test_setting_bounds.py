"""A number a person sets has one range wherever it is set: the Settings dialog, the
context panel, a project's defaults, `contextdesk settings` and `chat set`
(context/bounds.py declares each once)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSpinBox
from pytestqt.qtbot import QtBot

from desktop_app.chats import Engine
from desktop_app.config.settings import SETTINGS, problems, with_values
from desktop_app.context import bounds
from desktop_app.core.errors import ContextDeskError
from desktop_app.demo_chat import create_demo_chat
from desktop_app.ui.dialogs.settings_dialog import SettingsDialog
from desktop_app.ui.main_window import MainWindow


def typed(qtbot: QtBot, spin: QSpinBox, text: str) -> int:
    """Select the box's number, type `text` and leave the box, as a person would; the
    value it then holds (a spin box takes no number beyond its range)."""
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, text)
    qtbot.keyClick(spin, Qt.Key.Key_Tab)
    return spin.value()


def test_the_longest_reply_has_one_range_in_settings_in_a_chat_and_in_the_dialog(
    engine: Engine, qtbot: QtBot
) -> None:
    low, high = bounds.MAX_TOKENS.whole_range
    chat = engine.new_chat("Short answers")
    chat.setup.change({"max_tokens": str(low)})  # a chat could always ask for one token
    assert (
        problems(with_values(engine.settings, {"max_tokens": str(low)})) == []
    )  # so can new chats
    assert chat.settings.max_tokens == low
    chat.setup.change({"max_tokens": f"{high:,}", "context_window": "1000000"})
    with pytest.raises(ContextDeskError) as refused:
        chat.setup.change({"max_tokens": str(high + 1)})
    why = bounds.MAX_TOKENS.why_not(high + 1)
    assert problems(with_values(engine.settings, {"max_tokens": str(high + 1)})) == [
        f"max_tokens: {why}"
    ]
    assert f"max_tokens {why}" in refused.value.message  # the same reason on both

    dialog = SettingsDialog(engine.settings, engine.secrets, "none yet", [])
    qtbot.addWidget(dialog)
    dialog.show()
    assert typed(qtbot, dialog.max_tokens, str(low)) == low
    assert typed(qtbot, dialog.max_tokens, str(high)) == high
    assert typed(qtbot, dialog.max_tokens, str(high * 10)) != high * 10


def test_the_panel_shows_and_keeps_compaction_numbers_set_on_the_command_line(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    """`chat set threshold=0.3 keep_recent=0` is allowed: the panel shows it as it is and
    another edit there leaves it so (a narrower box once raised them to 50 % and 1 turn)."""
    chat = create_demo_chat(engine.store, 6)
    engine.chat(chat.id).setup.change({"threshold": "0.335", "keep_recent": "0"})
    window.chat_list.set_chats(engine.store.list_chats())
    session = window.open_chat(chat.id)
    assert session is not None
    qtbot.waitUntil(lambda: session.plan is not None, timeout=5000)
    panel = window.context
    assert panel.threshold.value() == 34  # percent, shown rounded
    assert panel.keep_recent.value() == 0
    panel.keep_first.setFocus()
    with qtbot.waitSignal(session.planned, timeout=10_000):
        qtbot.keyClick(panel.keep_first, Qt.Key.Key_Space)  # another edit
    settings = engine.store.chat(session.chat.id).settings
    assert settings.keep_first_message is False
    assert settings.compaction_threshold == 0.335  # not rounded to what the box shows
    assert settings.keep_recent_turns == 0

    lowest = round(bounds.COMPACTION_THRESHOLD.low * 100)
    with qtbot.waitSignal(session.planned, timeout=10_000):
        assert typed(qtbot, panel.threshold, str(lowest)) == lowest
    assert engine.store.chat(session.chat.id).settings.compaction_threshold == lowest / 100
    assert typed(qtbot, panel.max_messages, "999999") == 999_999
    assert engine.store.chat(session.chat.id).settings.max_context_messages == 999_999


def test_the_settings_dialog_names_each_row_as_the_settings_declare_it(
    engine: Engine, qtbot: QtBot
) -> None:
    """A row's name comes from the same declaration as its range and its check, so the
    line that says what is wrong names the row it stands under."""
    dialog = SettingsDialog(engine.settings, engine.secrets, "none yet", [])
    qtbot.addWidget(dialog)
    dialog.show()
    shown = {label.text() for label in dialog.findChildren(QLabel) if label.isVisible()}
    rows = "base_url model context_window max_tokens thinking system_prompt tools_enabled"
    rows += " workspace send_with_enter appearance text_size reading_width"
    declared = {spec.attr: spec.label for spec in SETTINGS}
    assert {declared[attr] for attr in rows.split()} <= shown
    dialog.max_tokens.setValue(2048)
    dialog.thinking.setCurrentIndex(dialog.thinking.findData("budget"))
    dialog.thinking_budget.setValue(4096)  # not below the max output: raised to fit…
    assert dialog.max_tokens.value() > 4096
    assert problems(dialog.chosen(), labels=True) == []
