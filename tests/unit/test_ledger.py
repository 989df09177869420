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
        row = recorder.record(store.db, chat, request, server="https://api.anthropic.com")
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
