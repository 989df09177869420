"""What a layout pass costs as a chat grows: a streaming reply's text is added to, not
laid out again; every row loaded keeps its height; older rows load a page at a time.
Over the real window, its view and delegate (offscreen)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from PySide6.QtGui import QTextTable
from pytestqt.qtbot import QtBot

from desktop_app.chats import Engine
from desktop_app.ui.conversation.message_content import make_document
from desktop_app.ui.conversation.message_delegate import CACHE_SIZE, MessageDelegate
from desktop_app.ui.conversation.message_model import OLDER_PAGE
from desktop_app.ui.main_window import MainWindow
from tests.ui.conftest import open_demo


def counting_layouts(delegate: MessageDelegate, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the messages the delegate lays out from now on."""
    made: list[str] = []
    original: Callable[..., Any] = delegate._make_layout

    def make_layout(message: Any, *args: Any, **kwargs: Any) -> Any:
        made.append(message.id)
        return original(message, *args, **kwargs)

    monkeypatch.setattr(delegate, "_make_layout", make_layout)
    return made


def test_a_streaming_text_grows_in_its_document_and_reads_as_if_laid_out_whole(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot, turns=2)
    view = window.pane.messages
    delegate = view.delegate
    pieces = [f"line {n} of the answer, with some words to wrap " * 3 + "\n" for n in range(40)]
    for piece in pieces:
        session.model.append_text("streaming-1", piece)
        view.doItemsLayout()
    row = session.model.row_of("streaming-1")
    assert row is not None
    index = session.model.index(row)
    layout = delegate._layout(index, view.font())
    doc = layout.parts[0].doc
    assert doc is not None
    whole = make_document("".join(pieces), view.font(), int(doc.textWidth()))
    assert doc.toPlainText() == whole.toPlainText()
    assert doc.size().height() == whole.size().height()
    assert delegate.streamed.holds(doc)  # one document, added to


def test_a_streaming_text_past_its_shown_part_changes_only_the_line_that_counts_the_rest(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    """Once a reply passes SHOWN_CHARS, only its first part shows, then "… N more
    characters": N grows every frame, and laying out the whole part again each time
    (25 ms at 20,000 characters) was the streaming lag."""
    from desktop_app.ui.conversation.long_text import SHOWN_CHARS, shown_plain

    session = open_demo(window, engine, qtbot, turns=2)
    view = window.pane.messages
    delegate = view.delegate
    piece = "words 😀 in a line of the answer\n"  # (an emoji: two positions in a document)
    sent, first = "", None
    while len(sent) < SHOWN_CHARS + 3_000:
        session.model.append_text("streaming-1", piece * 40)
        sent += piece * 40
        view.doItemsLayout()
        row = session.model.row_of("streaming-1")
        assert row is not None
        doc = delegate._layout(session.model.index(row), view.font()).parts[0].doc
        if first is None and len(sent) > SHOWN_CHARS:
            first = doc
    assert first is not None
    assert doc is first  # the same document: only its last line changed since the cut
    assert doc.toPlainText() == shown_plain(sent).text


def test_every_row_loaded_keeps_its_height_past_the_kept_layouts(
    window: MainWindow, engine: Engine, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scrolled back past CACHE_SIZE rows, a layout pass measured every row beyond it
    again, each time (≈370 ms at 610 rows): now only the rows it has not seen."""
    session = open_demo(window, engine, qtbot, turns=320, planned=False)  # ~750 messages
    qtbot.waitUntil(lambda: session.model.history_complete, timeout=10_000)
    view = window.pane.messages
    while session.model.rowCount() <= CACHE_SIZE + 50 and session.model.has_older():
        session.model.load_older()
        view.doItemsLayout()
    assert session.model.rowCount() > CACHE_SIZE
    made = counting_layouts(view.delegate, monkeypatch)
    view.doItemsLayout()
    assert made == []


def test_scrolling_up_loads_one_older_page_a_step(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    session = open_demo(window, engine, qtbot, turns=200, planned=False)
    qtbot.waitUntil(lambda: session.model.history_complete, timeout=10_000)
    view = window.pane.messages
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=5000)
    shown = session.model.rowCount()
    bar.setValue(0)
    assert session.model.rowCount() == shown + OLDER_PAGE  # one page, laid out in the step
    assert bar.value() > 0  # the reader stays where they were, above the new page


def test_a_long_history_is_set_aside_from_the_garbage_collector(
    window: MainWindow, engine: Engine, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full collection walks every object: 80 ms over a 100,000-message history, with
    the window stopped. Once read, a long history is frozen out of it (`gc.freeze`)."""
    import gc

    from desktop_app.ui.conversation import session as session_module

    monkeypatch.setattr(session_module, "FREEZE_AT", 100)  # (20,000 in the app)
    gc.unfreeze()
    try:
        session = open_demo(window, engine, qtbot, turns=60, planned=False)  # ~150 messages
        qtbot.waitUntil(lambda: session.model.history_complete, timeout=10_000)
        frozen = [m for m in session.messages if gc.is_tracked(m)]
        assert gc.get_freeze_count() >= len(frozen) > 100
    finally:
        gc.unfreeze()


def test_a_reply_that_ends_shows_as_it_streamed_until_the_window_has_said_so(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    """Laying a long reply out whole (tables, code) takes long: when it ends, the window
    first shows that it ended, with the reply as it streamed, and lays it out whole a
    moment later (`StreamedText.ended`)."""
    from desktop_app.core.blocks import TextBlock
    from desktop_app.core.messages import Message, MessageStatus

    session = open_demo(window, engine, qtbot, turns=2)
    view = window.pane.messages
    delegate = view.delegate
    text = "| Order | Paid |\n|---|---:|\n| #1 | 847.20 |\n\nDone.\n\n" * 20
    session.model.append_text("streaming-1", text)
    view.doItemsLayout()
    row = session.model.row_of("streaming-1")
    assert row is not None
    streamed = delegate._layout(session.model.index(row), view.font()).parts[0].doc
    assert streamed is not None
    session.model.replace_message(
        Message("assistant", (TextBlock(text),), id="streaming-1", status=MessageStatus.COMPLETE)
    )
    view.doItemsLayout()
    shown = delegate._layout(session.model.index(row), view.font()).parts[0].doc
    assert shown is streamed  # as it streamed: plain text, no tables yet
    assert not any(isinstance(f, QTextTable) for f in shown.rootFrame().childFrames())
    qtbot.waitUntil(lambda: not delegate.streamed.settling("streaming-1"), timeout=2000)
    whole = delegate._layout(session.model.index(row), view.font()).parts[0].doc
    assert whole is not None
    assert whole is not streamed
    assert sum(isinstance(f, QTextTable) for f in whole.rootFrame().childFrames()) == 20
