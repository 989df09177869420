"""The tools view, driven as a user does: servers start after the first paint, the
dialog opens from its shortcut, a tool unchecked leaves the chat's next request, a failed
server shows why, and the meter's tools segment tells the servers apart."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QTreeWidget, QTreeWidgetItem
from pytestqt.qtbot import QtBot

from desktop_app.chats import Engine
from desktop_app.config.mcp_servers import McpServer
from desktop_app.ui.context_meter import TOOLS
from desktop_app.ui.main_window import MainWindow
from desktop_app.ui.mcp_dialog import McpDialog
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

    qtbot.keyClick(
        window,
        Qt.Key.Key_T,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    qtbot.waitUntil(lambda: isinstance(window.tools_dialog, McpDialog), timeout=5000)
    dialog = window.tools_dialog
    assert dialog is not None
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
    assert any(t.name == "mcp__many__tool_042" for t in other.plan().request.tools)

    item(tree, "many").setCheckState(0, Qt.CheckState.Unchecked)  # the whole server
    qtbot.waitUntil(
        lambda: (
            session.plan is not None
            and not any(t.name.startswith("mcp__many__") for t in session.plan.request.tools)
        ),
        timeout=10_000,
    )
    dialog.reject()
    qtbot.waitUntil(lambda: window.tools_dialog is None, timeout=5000)
    QApplication.processEvents()


def test_the_tools_view_shows_each_server_s_protocol_version(
    engine: Engine, open_window: Callable[[Engine], MainWindow], qtbot: QtBot
) -> None:
    configure(engine, ("modern", ()), ("old", ("--legacy",)))
    window = open_window(engine)
    hub = engine.mcp
    assert hub is not None
    qtbot.waitUntil(lambda: {s.status.value for s in hub.states()} == {"ready"}, timeout=60_000)
    qtbot.keyClick(
        window,
        Qt.Key.Key_T,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    qtbot.waitUntil(lambda: isinstance(window.tools_dialog, McpDialog), timeout=5000)
    dialog = window.tools_dialog
    assert dialog is not None
    for name, protocol in (("modern", "2026-07-28"), ("old", "2025-11-25")):
        server = item(dialog.tree, name)
        assert protocol in server.toolTip(1)
        dialog.tree.setCurrentItem(server)  # as a click on its row does
        assert f"MCP {protocol}" in dialog.details.text()
    dialog.reject()
    qtbot.waitUntil(lambda: window.tools_dialog is None, timeout=5000)
    QApplication.processEvents()
