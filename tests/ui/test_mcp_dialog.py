"""The tools view, driven as a user does: servers start after the first paint, the
dialog opens from its shortcut, a tool unchecked leaves the chat's next request, a failed
server shows why, and the meter's tools segment tells the servers apart."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox, QTreeWidget, QTreeWidgetItem
from pytestqt.qtbot import QtBot

from desktop_app.chats import Engine
from desktop_app.config.mcp_servers import McpServer
from desktop_app.core.blocks import TextBlock
from desktop_app.ui.context.meter import TOOLS
from desktop_app.ui.conversation.session import ChatSession
from desktop_app.ui.dialogs.mcp_dialog import McpDialog
from desktop_app.ui.main_window import MainWindow
from tests.ui.conftest import open_demo

ROOT = Path(__file__).resolve().parents[2]


def configure(engine: Engine, *servers: tuple[str, tuple[str, ...]]) -> None:
    for name, extra in servers:
        engine.mcp_config().add(
            McpServer(
                name,
                command=sys.executable,
                args=("-m", "tests.fakes.mcp_server", *extra),
                cwd=str(ROOT),
            )
        )


def open_tools(window: MainWindow, qtbot: QtBot) -> McpDialog:
    """Tools and MCP servers…, by its keys (Ctrl+Shift+T)."""
    qtbot.keyClick(
        window,
        Qt.Key.Key_T,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    qtbot.waitUntil(lambda: isinstance(window.dialogs.tools_dialog, McpDialog), timeout=5000)
    dialog = window.dialogs.tools_dialog
    assert dialog is not None
    return dialog


def item(tree: QTreeWidget, name: str) -> QTreeWidgetItem:
    found = tree.findItems(name, Qt.MatchFlag.MatchExactly | Qt.MatchFlag.MatchRecursive, 0)
    assert found, f"{name} is not in the tools view"
    return found[0]


def test_the_tools_view_turns_a_tool_off_for_this_chat_only(
    engine: Engine, open_window: Callable[[Engine], MainWindow], qtbot: QtBot
) -> None:
    configure(engine, ("many", ("--many", "100")), ("broken", ("--die-on-start",)))
    window = open_window(engine)
    hub = engine.mcp
    assert hub is not None
    qtbot.waitUntil(  # (two servers starting share the 2 cores with the first plan)
        lambda: {s.status.value for s in hub.states()} == {"ready", "failed"}, timeout=60_000
    )
    session = open_demo(window, engine, qtbot)
    # Planned again with the server's tools, without anyone asking.
    qtbot.waitUntil(
        lambda: (
            session.plan is not None
            and any(t.name == "mcp__many__tool_042" for t in session.plan.request.tools)
        ),
        timeout=10_000,
    )
    tooltip = window.context.meter.describe(TOOLS)
    assert "many: ≈" in tooltip
    assert "built-in: ≈" in tooltip

    dialog = open_tools(window, qtbot)
    tree = dialog.tree
    broken = item(tree, "broken")
    assert broken.text(1).startswith("failed: ")
    assert "fatal: no configuration" in broken.toolTip(1)
    tool = item(tree, "many.tool_042")
    assert tool.checkState(0) == Qt.CheckState.Checked
    assert tool.text(2).startswith("≈")

    tool.setCheckState(0, Qt.CheckState.Unchecked)  # as a click on its box does
    assert "many.tool_042" in session.chat.settings.tools_off
    qtbot.waitUntil(
        lambda: (
            session.plan is not None
            and not any(t.name == "mcp__many__tool_042" for t in session.plan.request.tools)
            and any(t.name == "mcp__many__tool_043" for t in session.plan.request.tools)
        ),
        timeout=10_000,
    )
    # Another chat still offers it.
    other = engine.new_chat()
    assert any(t.name == "mcp__many__tool_042" for t in other.plans.plan().request.tools)

    item(tree, "many").setCheckState(0, Qt.CheckState.Unchecked)  # the whole server
    qtbot.waitUntil(
        lambda: (
            session.plan is not None
            and not any(t.name.startswith("mcp__many__") for t in session.plan.request.tools)
        ),
        timeout=10_000,
    )
    dialog.reject()
    qtbot.waitUntil(lambda: window.dialogs.tools_dialog is None, timeout=5000)
    QApplication.processEvents()


def test_the_tools_view_shows_each_server_s_protocol_version(
    engine: Engine, open_window: Callable[[Engine], MainWindow], qtbot: QtBot
) -> None:
    configure(engine, ("modern", ()), ("old", ("--legacy",)))
    window = open_window(engine)
    hub = engine.mcp
    assert hub is not None
    qtbot.waitUntil(lambda: {s.status.value for s in hub.states()} == {"ready"}, timeout=60_000)
    dialog = open_tools(window, qtbot)
    for name, protocol in (("modern", "2026-07-28"), ("old", "2025-11-25")):
        server = item(dialog.tree, name)
        assert protocol in server.toolTip(1)
        dialog.tree.setCurrentItem(server)  # as a click on its row does
        assert f"MCP {protocol}" in dialog.details.text()
    dialog.reject()
    qtbot.waitUntil(lambda: window.dialogs.tools_dialog is None, timeout=5000)
    QApplication.processEvents()


def test_importing_env_values_without_a_keyring_asks_to_keep_them_in_the_file(
    engine: Engine,
    open_window: Callable[[Engine], MainWindow],
    qtbot: QtBot,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import keyring
    import keyring.backends.fail

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))  # where Claude desktop's is
    desktop = tmp_path / "xdg" / "Claude" / "claude_desktop_config.json"
    desktop.parent.mkdir(parents=True)
    server = {"command": sys.executable, "args": ["-m", "tests.fakes.mcp_server"]}
    desktop.write_text(json.dumps({"mcpServers": {"t": {**server, "env": {"TEST_SECRET": "x"}}}}))
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())  # no keyring service at all
    try:
        window = open_window(engine)
        dialog = open_tools(window, qtbot)
        qtbot.mouseClick(dialog.import_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: _asked(dialog) is not None, timeout=10_000)
        box = _asked(dialog)
        assert box is not None
        assert "readable only by you" in box.informativeText()
        assert [s.name for s in engine.tool_servers.configured()] == []  # not before "Yes"
        yes = box.button(QMessageBox.StandardButton.Yes)
        qtbot.mouseClick(yes, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(
            lambda: [s.name for s in engine.tool_servers.configured()] == ["t"], timeout=10_000
        )
        kept = json.loads(engine.mcp_config().path.read_text())["mcpServers"]["t"]["env"]
        assert kept == {"TEST_SECRET": "x"}
        qtbot.waitUntil(lambda: "mcp.json" in dialog.details.text(), timeout=10_000)
        dialog.reject()
        qtbot.waitUntil(lambda: window.dialogs.tools_dialog is None, timeout=5000)
    finally:
        keyring.set_keyring(previous)
    QApplication.processEvents()


def _asked(dialog: McpDialog) -> QMessageBox | None:
    box = dialog.findChild(QMessageBox, "keepEnvInFile")
    return box if box is not None and box.isVisible() else None


def test_the_tools_view_shows_a_skipped_entry_of_mcp_json_with_its_reason(
    engine: Engine, open_window: Callable[[Engine], MainWindow], qtbot: QtBot
) -> None:
    configure(engine, ("good", ()))
    path = engine.mcp_config().path
    data = json.loads(path.read_text())
    data["mcpServers"]["old"] = {"type": "sse", "url": "https://example.test/sse"}
    path.write_text(json.dumps(data))
    window = open_window(engine)
    hub = engine.mcp
    assert hub is not None
    qtbot.waitUntil(lambda: {s.status.value for s in hub.states()} == {"ready"}, timeout=60_000)
    dialog = open_tools(window, qtbot)
    assert item(dialog.tree, "good").text(1).startswith("ready")
    old = item(dialog.tree, "old")
    assert old.text(1).startswith("skipped: ")
    assert "SSE" in old.toolTip(1)
    dialog.reject()
    qtbot.waitUntil(lambda: window.dialogs.tools_dialog is None, timeout=5000)
    QApplication.processEvents()


def test_the_tools_view_lets_claude_search_other_chats_for_this_chat(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot)
    assert session.plan is not None
    assert all(t.name != "search_chats" for t in session.plan.request.tools)  # off at first
    dialog = open_tools(window, qtbot)
    box = dialog.past_chats
    assert box.currentData() == "off"
    box.setCurrentIndex(box.findData("all"))
    box.activated.emit(box.currentIndex())  # as choosing it does
    qtbot.waitUntil(
        lambda: (
            session.plan is not None
            and any(t.name == "search_chats" for t in session.plan.request.tools)
        ),
        timeout=10_000,
    )
    assert engine.store.chat(session.chat.id).settings.search_chats == "all"
    dialog.reject()


def with_test_server(
    engine: Engine, open_window: Callable[[Engine], MainWindow], qtbot: QtBot
) -> tuple[MainWindow, ChatSession]:
    """The window with the test server ready (its resources and prompt), on a demo chat."""
    configure(engine, ("t", ()))
    window = open_window(engine)
    hub = engine.mcp
    assert hub is not None
    qtbot.waitUntil(lambda: {s.status.value for s in hub.states()} == {"ready"}, timeout=60_000)
    return window, open_demo(window, engine, qtbot)


def test_the_tools_view_lists_a_server_s_resources_and_attaches_one(
    engine: Engine, open_window: Callable[[Engine], MainWindow], qtbot: QtBot
) -> None:
    window, session = with_test_server(engine, open_window, qtbot)
    dialog = open_tools(window, qtbot)
    dialog.tree.setCurrentItem(item(dialog.tree, "t"))
    offers = dialog.offers
    qtbot.waitUntil(lambda: offers.list.count() == 3, timeout=20_000)
    shown = [offers.list.item(i).text() for i in range(3)]
    assert shown == [
        "notes://today — today (text/plain)",
        "images://dot — dot (image/png)",
        "/review(topic)",
    ]
    assert "2 resource(s) and 1 prompt(s)" in offers.title.text()
    offers.list.setCurrentRow(2)
    assert not offers.attach_button.isEnabled()  # a prompt is not attached
    offers.list.setCurrentRow(0)
    qtbot.mouseClick(offers.attach_button, Qt.MouseButton.LeftButton)
    pane = window.shown
    assert pane is not None
    qtbot.waitUntil(lambda: bool(pane.composer.attachments), timeout=20_000)
    (attached,) = pane.composer.attachments
    assert attached.name == "notes://today"
    assert attached.tokens > 0
    first = pane.composer.draft_blocks()[0]
    assert isinstance(first, TextBlock)
    assert first.text.startswith("[Resource notes://today from t]\nCall the courier")
    assert session.chat.id == pane.session.chat.id

    def planned_with_it() -> bool:  # the next request carries it, as Send would
        plan = session.plan
        return plan is not None and "[Resource notes://today" in json.dumps(
            plan.request.body()["messages"][-1]
        )

    qtbot.waitUntil(planned_with_it, timeout=20_000)
    dialog.reject()


def test_a_server_s_prompt_becomes_the_draft_and_a_resource_project_knowledge(
    engine: Engine,
    open_window: Callable[[Engine], MainWindow],
    qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    window, session = with_test_server(engine, open_window, qtbot)
    project = engine.projects.new("Shop")
    engine.projects.move(session.chat, project.id)
    asked: list[str] = []

    def answer(_parent: object, _title: str, label: str) -> tuple[str, bool]:
        asked.append(label)
        return "the refund policy", True

    monkeypatch.setattr("desktop_app.ui.dialogs.mcp_offers.QInputDialog.getText", answer)
    dialog = open_tools(window, qtbot)
    dialog.tree.setCurrentItem(item(dialog.tree, "t"))
    offers = dialog.offers
    qtbot.waitUntil(lambda: offers.list.count() == 3, timeout=20_000)

    offers.list.setCurrentRow(2)  # /review(topic)
    assert offers.prompt_button.isEnabled()
    assert not offers.knowledge_button.isEnabled()
    qtbot.mouseClick(offers.prompt_button, Qt.MouseButton.LeftButton)
    pane = window.shown
    assert pane is not None
    qtbot.waitUntil(lambda: pane.composer.edit.toPlainText() != "", timeout=20_000)
    assert asked == ["topic"]
    assert pane.composer.edit.toPlainText() == (
        "Review the refund policy carefully, and list what is missing."
    )

    def planned_with_draft() -> bool:  # the next request ends with it, as Send would
        plan = session.plan
        return plan is not None and "Review the refund policy" in json.dumps(
            plan.request.body()["messages"][-1]
        )

    qtbot.waitUntil(planned_with_draft, timeout=20_000)

    offers.list.setCurrentRow(0)  # notes://today
    assert offers.knowledge_button.isEnabled()
    qtbot.mouseClick(offers.knowledge_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(engine.projects.find("Shop").files), timeout=20_000)
    (file,) = engine.projects.find("Shop").files
    assert file.name == "notes://today"
    assert "Call the courier about order 88213" in file.text
    dialog.reject()
