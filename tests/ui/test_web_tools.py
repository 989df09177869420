"""The web in the window (issue 36, item 1): turned on for a chat in Tools and MCP
servers…, the next request offers it; a reply that searched reads as a step of Claude's
turn, its answer as one text with footnote marks and its sources under it, a mark's
tooltip the passage it cites; its request's cost counts the search."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QToolTip
from pytestqt.qtbot import QtBot

from desktop_app.chats import Engine
from desktop_app.ui.main_window import MainWindow
from tests.ui.conftest import TURN_TIMEOUT_MS, open_demo
from tests.ui.test_conversation import reply_option, type_and_send
from tests.ui.test_mcp_dialog import open_tools


def test_searching_the_web_from_the_tools_view_to_a_cited_answer(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot, turns=1)
    assert session.plan is not None
    assert all(t.name != "web_search" for t in session.plan.request.tools)  # off at first
    dialog = open_tools(window, qtbot)
    assert dialog.web.search.isEnabled()  # (the demo plays the API's tools)
    qtbot.mouseClick(dialog.web.search, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: (
            session.plan is not None
            and any(
                t.to_api().get("type") == "web_search_20260318" for t in session.plan.request.tools
            )
        ),
        timeout=10_000,
    )
    assert engine.store.chat(session.chat.id).settings.web_search
    dialog.reject()

    type_and_send(window, qtbot, "Search the web for the latest Example release")
    qtbot.waitUntil(lambda: not session.busy, timeout=TURN_TIMEOUT_MS)
    view = window.pane.messages
    row = view.model().rowCount() - 1
    index, option = reply_option(window, row)
    docs = view.delegate.documents(index, option)
    texts = [part.doc.toPlainText() for _, part in docs if part.doc is not None]
    answer = next(t for t in texts if "Sources:" in t)
    # One text, the cited parts marked, the sources listed under it.
    assert "Version 4.2 was released on 2026-11-30.¹" in answer
    assert "Sources: ¹ Release notes | Example Docs · ² December roundup | Example News" in answer
    layout = view.delegate._layout(index, option.font)
    assert any(p.summary.startswith("Searched the web: “Search the web") for p in layout.parts)
    assert any(p.summary.startswith("↳ 3 results: Release notes") for p in layout.parts)

    # Hovering the first mark shows the passage it cites.
    origin, part = next(
        (o, p) for o, p in docs if p.doc is not None and "Sources:" in p.doc.toPlainText()
    )
    assert part.doc is not None
    found = part.doc.find("¹")
    line = part.doc.documentLayout().blockBoundingRect(found.block())
    spot = next(
        origin + QPointF(x, line.top() + 2 + dy)
        for dy in range(0, int(line.height()), 3)
        for x in range(0, int(line.width()), 2)
        if view.delegate.link_at(index, option, origin + QPointF(x, line.top() + 2 + dy))
        == "https://docs.example.org/release-notes"
    )
    event = QHelpEvent(
        QEvent.Type.ToolTip, spot.toPoint(), view.viewport().mapToGlobal(spot.toPoint())
    )
    assert view.delegate.helpEvent(event, view, option, index)
    assert QToolTip.text() == (
        "Release notes | Example Docs\n“Version 4.2 was released on 2026-11-30.”"
    )
    # The reply's request, in its header's tooltip, says it searched once.
    cost = view.delegate.cost_of(session.messages[-1].id) if view.delegate.cost_of else None
    assert cost is not None
    assert cost.web_searches == 1
