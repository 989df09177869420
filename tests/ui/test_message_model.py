"""The message list model: Qt's model rules (qtmodeltester), paging, streaming, chips."""

from __future__ import annotations

from dataclasses import replace

from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from desktop_app.context.plan import BlockState
from desktop_app.core.blocks import TextBlock
from desktop_app.core.messages import Message, MessageStatus, Usage, user_text
from desktop_app.ui.conversation.message_model import (
    OLDER_PAGE,
    PAGE,
    BlockChip,
    MessageListModel,
    Role,
)
from desktop_app.ui.conversation.message_words import token_label

IN, SUMMARIZED = BlockState.IN_CONTEXT, BlockState.SUMMARIZED


def chat(n: int) -> list[Message]:
    return [
        user_text(f"q{i}") if i % 2 == 0 else Message("assistant", (TextBlock(f"a{i}"),))
        for i in range(n)
    ]


def test_the_model_follows_qts_rules(qtmodeltester: ModelTester) -> None:
    model = MessageListModel()
    model.set_messages(chat(PAGE + 50))
    qtmodeltester.check(model)
    model.load_older()
    model.append(user_text("new"))
    model.append_text("streaming-1", "Hel")
    model.append_text("streaming-1", "lo")
    model.set_chip_source(lambda m, j: BlockChip("text", 3, False, IN))
    model.remove_message("streaming-1")
    qtmodeltester.check(model)


def test_a_long_chat_opens_at_its_newest_page_and_loads_older_ones_on_demand() -> None:
    model = MessageListModel()
    messages = chat(1000)
    model.set_messages(messages)
    assert model.rowCount() == PAGE
    assert model.data(model.index(PAGE - 1), 0) == "a999"
    assert model.row_of(messages[0].id) is None  # not loaded yet
    assert not model.canFetchMore(model.index(-1))  # Qt's own fetching would load it all
    while model.has_older():
        model.load_older()
    assert model.rowCount() == 1000
    assert model.data(model.index(0), 0) == "q0"
    assert model.row_of(messages[0].id) == 0


def test_a_turn_in_a_long_chat_finds_its_rows_without_indexing_every_message() -> None:
    """A 100,000-message chat's id → row index was 6.8 MB held for nothing: a turn adds
    and changes its newest rows only. An older row asked for is found (and from then on
    every row is indexed)."""
    model = MessageListModel()
    history = chat(10_000)
    model.set_messages(history[-PAGE:], complete=False)
    model.attach_history(history)
    model.append(user_text("A question?"))
    model.append_text("reply-1", "Hel")  # a reply streams
    model.append_text("reply-1", "lo")
    reply = model.all_messages()[-1]
    model.replace_message(replace(reply, status=MessageStatus.COMPLETE))  # it ends
    assert model.all_messages()[-1].text == "Hello"
    assert model.rowCount() == PAGE + 2
    assert model._row_of._index is None  # (what this is about: nothing indexed)
    assert model.row_of(history[0].id) is None  # not loaded: older than the rows shown
    while model.has_older():
        model.load_older()
    assert model.row_of(history[0].id) == 0
    assert model.row_of(history[5_000].id) == 5_000
    model.append(user_text("And another?"))
    assert model.row_of(model.all_messages()[-1].id) == 10_002


def test_streaming_changes_one_row_only(qtbot: QtBot) -> None:
    model = MessageListModel()
    model.set_messages(chat(10))
    changed: list[tuple[int, int]] = []
    model.dataChanged.connect(
        lambda first, last, roles=(): changed.append((first.row(), last.row()))
    )
    with qtbot.assertNotEmitted(model.modelReset):
        model.append_text("reply-1", "Hello")  # the first delta appends the row
        model.append_text("reply-1", ", world")
        model.append_text("reply-1", "!")
    last = model.rowCount() - 1
    assert changed == [(last, last), (last, last)]
    message = model.data(model.index(last), Role.MESSAGE)
    assert message.text == "Hello, world!"
    assert message.status is MessageStatus.STREAMING
    assert model.data(model.index(last), Role.REVISION) == 2
    model.replace_message(Message("assistant", (TextBlock("Hello, world!"),), id="reply-1"))
    assert model.data(model.index(last), Role.STATUS) == "complete"


def test_a_new_plan_updates_the_chips_of_every_row() -> None:
    model = MessageListModel()
    messages = chat(4)
    model.set_messages(messages)
    assert model.data(model.index(0), Role.BLOCKS) == (BlockChip("text", 0, False, None),)
    summarized = {messages[1].id}
    model.set_chip_source(
        lambda m, j: (
            BlockChip("text", 7, False, SUMMARIZED, words="summarized in #1")
            if m.id in summarized
            else BlockChip("text", 7, False, IN)
        )
    )
    assert model.data(model.index(1), Role.BLOCKS) == (
        BlockChip("text", 7, False, SUMMARIZED, words="summarized in #1"),
    )
    assert model.data(model.index(2), Role.BLOCKS)[0].state is IN


def test_a_chat_shows_its_newest_page_then_takes_in_the_whole_history(qtbot: QtBot) -> None:
    history = chat(500)
    model = MessageListModel()
    model.set_messages(history[-60:], complete=False)
    assert not model.history_complete
    assert not model.has_older()  # nothing older is known yet
    model.append(user_text("sent while the history was being read"))
    with qtbot.assertNotEmitted(model.modelReset), qtbot.assertNotEmitted(model.rowsInserted):
        model.attach_history(history)
    assert model.history_complete
    assert model.rowCount() == 61  # what was on screen stays on screen
    assert model.data(model.index(0), 0) == history[-60].text
    assert model.data(model.index(60), 0) == "sent while the history was being read"
    assert len(model.all_messages()) == 501
    model.load_older()
    assert model.rowCount() == 61 + OLDER_PAGE
    assert model.row_of(history[0].id) is None


def test_a_replys_header_shows_its_estimate_and_the_exact_output() -> None:
    chips = (
        BlockChip("text", 70, False, IN),
        BlockChip("tool_use", 15, False, IN),
    )
    reply = Message("assistant", (TextBlock("a"), TextBlock("b")), usage=Usage(900, 120))
    assert token_label(reply, chips) == "≈85 tokens · 120 generated (exact)"
    assert token_label(user_text("q"), chips[:1]) == "≈70 tokens"
    assert token_label(user_text("q"), ()) == ""
    # Stopped mid-reply: the API's count (sent at the end) never came; 1 is not "exact".
    stopped = replace(reply, status=MessageStatus.INTERRUPTED, usage=Usage(900, 1))
    assert token_label(stopped, chips) == "≈85 tokens · interrupted: this much arrived"


def test_a_reply_being_written_says_streaming_once_not_twice() -> None:
    from desktop_app.ui.conversation.message_model import context_marker

    streaming = (BlockChip("text", 0, False, None, streaming=True),)
    assert context_marker(streaming) == (None, "")  # the header's "● streaming…" says it
    done = (BlockChip("text", 12, False, IN, 12),)
    assert context_marker(done) == (IN, "in context · ≈12")
    # The state is the plan's value: a mark's colour never comes from parsing its words
    mixed = (
        BlockChip("text", 90, False, SUMMARIZED, words="summarized in #2"),
        BlockChip("text", 10, False, IN, 10),
    )
    assert context_marker(mixed) == (SUMMARIZED, "partly summarized · ≈10")


def test_a_tool_step_names_the_tool_as_people_do_and_previews_json_on_one_line() -> None:
    from desktop_app.core.blocks import ToolUseBlock
    from desktop_app.ui.conversation.message_words import call_line, result_preview

    call = ToolUseBlock("toolu_1", "mcp__time__get_current_time", {"timezone": "UTC"})
    assert call_line(call) == "time.get_current_time(timezone: UTC)"  # as its approval said
    assert result_preview('{\n  "timezone": "UTC",\n  "datetime": "2026-12-03T03:00:00Z"\n}') == (
        '{"timezone": "UTC", "datetime": "2026-12-03T03:00:00Z"}'
    )
    assert result_preview("order,promised\n4471-B,2026-11-24") == "order,promised"
    assert result_preview("  ") == "(empty)"
