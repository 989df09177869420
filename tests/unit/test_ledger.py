"""The request ledger: bodies read back as sent, across checkpoints, in little space."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from desktop_app.core.messages import Usage
from desktop_app.core.request import ChatRequest, SystemPart
from desktop_app.storage import ledger
from desktop_app.storage.errors import StorageError
from desktop_app.storage.store import ChatStore
from tests.unit.builders import a, u


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ChatStore]:
    opened = ChatStore.open(tmp_path / "chats.db")
    yield opened
    opened.close()


def test_a_long_chats_requests_read_back_as_sent_and_take_little_room(store: ChatStore) -> None:
    """1,000 turns, each request the whole history so far (cache marker on its last
    message): the ledger holds them in under 3× the chat's own messages, and every body
    — across the checkpoints every 50 — reads back exactly."""
    chat = store.create_chat("long").id
    recorder = ledger.RequestRecorder()
    request = ChatRequest(
        "claude-x", (), 4096, system=(SystemPart("Be brief.", cache=True),), cache_last_message=True
    )
    sent: list[dict[str, object]] = []
    for turn in range(1000):
        question = u(f"Question {turn}: " + "how does this part work, in detail? " * 6)
        request = replace(request, messages=(*request.messages, question))
        row = recorder.record(
            store.db, chat, request, server="http://127.0.0.1:9"
        )  # a name only: nothing is sent
        ledger.finish(store.db, row, seconds=1.5, usage=Usage(100 + turn, 20), status="complete")
        if turn % 97 == 0:
            sent.append({**request.body(), "stream": True})
        answer = a(f"Answer {turn}: " + "it works like this, step by step. " * 8)
        request = replace(request, messages=(*request.messages, answer))
    listed = ledger.requests(store.db, chat)
    assert [r.number for r in listed] == list(range(1, 1001))
    assert listed[-1].usage == Usage(1099, 20)
    assert listed[-1].message_count == 1999
    for body in sent:
        number = (len(body["messages"]) + 1) // 2  # type: ignore[arg-type]
        assert ledger.body(store.db, listed[number - 1].id) == body
    own = sum(len(json.dumps(m.to_api())) for m in request.messages)
    assert ledger.storage_bytes(store.db, chat) < 3 * own


def test_a_request_prepared_on_the_worker_is_the_one_written(store: ChatStore) -> None:
    chat = store.create_chat("x").id
    recorder = ledger.RequestRecorder()
    first = ChatRequest("m", (u("hi"),), 100, cache_last_message=True)
    second = replace(first, messages=(u("hi"), a("hello"), u("again")))
    recorder.prepare(first)
    recorder.prepare(second)
    one = recorder.record(store.db, chat, first, server="s")
    two = recorder.record(store.db, chat, second, server="s")
    assert ledger.body(store.db, one) == {**first.body(), "stream": True}
    assert ledger.body(store.db, two) == {**second.body(), "stream": True}
    assert ledger.requests(store.db, chat)[1].status == "sent"  # no reply recorded yet


def test_a_repeated_or_shorter_history_keeps_its_cache_marker(store: ChatStore) -> None:
    """A retry sends the same history again: the body read back still has its marker."""
    chat = store.create_chat("x").id
    recorder = ledger.RequestRecorder()
    three = ChatRequest("m", (u("a"), a("b"), u("c")), 100, cache_last_message=True)
    one = replace(three, messages=three.messages[:1])
    for request in (three, three, one):
        row = recorder.record(store.db, chat, request, server="s")
        assert ledger.body(store.db, row) == {**request.body(), "stream": True}


def test_a_sliding_window_reads_back_as_sent_each_turn(store: ChatStore) -> None:
    """A chat past its window sends the first message with a note (a new message each
    time), then the latest turns: the window slides a turn per turn. The recorder reuses
    what it serialised before; every body still reads back exactly — the marker only on
    the last message, a block's own marker kept wherever its message goes."""
    from desktop_app.core.blocks import OpaqueBlock
    from desktop_app.core.messages import Message

    chat = store.create_chat("x").id
    recorder = ledger.RequestRecorder()
    marked = Message(
        "user",
        (OpaqueBlock("text", {"type": "text", "text": "kept", "cache_control": {"type": "x"}}),),
    )
    history = [u("first"), a("one"), marked, a("two")]
    for turn in range(12):
        history.append(u(f"question {turn}"))  # last here, in the middle next turn
        note = u(f"first\n\n[{turn} turns left out]")
        request = ChatRequest("m", (note, *history[-7:]), 100, cache_last_message=True)
        recorder.prepare(request)
        row = recorder.record(store.db, chat, request, server="s")
        assert ledger.body(store.db, row) == {**request.body(), "stream": True}
        history.append(a(f"answer {turn}"))


def test_two_recorders_writing_one_chat_read_back_as_sent(store: ChatStore) -> None:
    """Another window's recorder wrote the request before (an edit's branch): this one's
    is stored against that request as read back, not as this recorder last wrote."""
    chat = store.create_chat("x").id
    mine, theirs = ledger.RequestRecorder(), ledger.RequestRecorder()
    requests = [
        (mine, (u("q"), a("a"), u("more"))),
        (theirs, (u("q"), a("a"), u("other"))),
        (mine, (u("q"), a("a"), u("more"), a("b"), u("again"))),
    ]
    for recorder, messages in requests:
        request = ChatRequest("m", messages, 100, cache_last_message=True)
        row = recorder.record(store.db, chat, request, server="s")
        assert ledger.body(store.db, row) == {**request.body(), "stream": True}


def test_a_failed_write_leaves_no_dangling_parts_for_the_next(store: ChatStore) -> None:
    recorder = ledger.RequestRecorder()
    first = ChatRequest("m", (u("a"),), 100, cache_last_message=True)
    with pytest.raises(StorageError):  # no such chat: the write is rolled back
        recorder.record(store.db, "chat_missing", first, server="s")
    chat = store.create_chat("x").id
    second = replace(first, messages=(u("a"), a("b"), u("c")))
    row = recorder.record(store.db, chat, second, server="s")
    assert ledger.body(store.db, row) == {**second.body(), "stream": True}


def test_a_facts_last_sent_matches_whole_lines_only(store: ChatStore) -> None:
    chat = store.create_chat("x").id
    system = "## Pinned facts\n- Use Python 3.12\n- Refunds take 5 days."
    request = ChatRequest("m", (u("hi"),), 100, system=(SystemPart(system),))
    ledger.RequestRecorder().record(store.db, chat, request, server="s")
    found = ledger.last_sent_with(store.db, chat, ["- Use Python", "- Use Python 3.12"])
    assert set(found) == {"- Use Python 3.12"}  # "- Use Python" alone was never sent
    last = ledger.last_sent_with(store.db, chat, ["- Refunds take 5 days."])
    assert list(last) == ["- Refunds take 5 days."]  # the last line: ends the string


def test_a_changed_model_or_thinking_breaks_the_cache_in_a_comparison() -> None:
    from desktop_app.core.request_diff import diff_bodies

    body = ChatRequest("claude-a", (u("hi"),), 100).body()
    assert diff_bodies(body, {**body, "model": "claude-b"}).first_change == "model"
    thinking = {**body, "thinking": {"type": "enabled", "budget_tokens": 1024}}
    assert diff_bodies(body, thinking).first_change == "messages.0"
    assert diff_bodies(body, body).first_change is None
