"""A chat read again while nothing changed it costs one row (`storage/kept_transcripts.py`):
the store keeps what it read and what it wrote, and reads again whenever anything else —
another program, a rolled-back write, an edit's branch — changed the chat."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from desktop_app.chats import Engine
from desktop_app.core.blocks import TextBlock
from desktop_app.core.errors import ErrorKind
from desktop_app.core.messages import Message, MessageStatus, user_text
from desktop_app.storage.errors import StorageError
from desktop_app.storage.kept_transcripts import KeptTranscripts, Mark
from desktop_app.storage.store import ChatStore
from tests.fakes.tools import ScriptedApprover
from tests.unit.builders import a, database_at, u


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "kept.sqlite3"


@pytest.fixture
def store(path: Path) -> Iterator[ChatStore]:
    opened = ChatStore.open(path, kept=KeptTranscripts())
    yield opened
    opened.close()


@pytest.fixture
def other(path: Path, store: ChatStore) -> Iterator[ChatStore]:
    """Another program's connection to the same file (nothing kept)."""
    opened = ChatStore.open(path)
    yield opened
    opened.close()


def block_reads(store: ChatStore) -> list[str]:
    """The statements that read block rows through this store's connection, from now on."""
    seen: list[str] = []
    store.db.set_trace_callback(lambda sql: seen.append(sql) if "FROM blocks" in sql else None)
    return seen


def test_a_chat_read_again_unchanged_is_not_read_from_the_file(store: ChatStore) -> None:
    chat = store.create_chat("Long")
    store.append_messages(chat.id, [u("one"), a("two")])
    first = store.messages(chat.id)
    reads = block_reads(store)
    again = store.messages(chat.id)
    assert reads == []
    assert again == first
    assert all(x is y for x, y in zip(again, first, strict=True))
    with pytest.raises(TypeError):  # the one kept, not a copy: it cannot be changed
        again.append(u("mine"))  # type: ignore[attr-defined]
    assert [m.text for m in store.messages(chat.id)] == ["one", "two"]


def test_the_stores_own_writes_carry_the_kept_transcript_along(store: ChatStore) -> None:
    chat = store.create_chat("Turn")
    store.append_messages(chat.id, [u("one"), a("two")])
    first = store.messages(chat.id)
    reads = block_reads(store)
    question = u("three?")
    store.append_message(chat.id, question)
    partial = Message("assistant", (TextBlock("Fo"),), status=MessageStatus.STREAMING)
    store.checkpoint(chat.id, partial, partial=True)
    store.checkpoint(chat.id, replace(partial, blocks=(TextBlock("Four."),)), partial=True)
    answer = replace(partial, blocks=(TextBlock("Four, done."),), status=MessageStatus.COMPLETE)
    store.checkpoint(chat.id, answer)
    kept = store.messages(chat.id)
    assert not [sql for sql in reads if sql.lstrip().upper().startswith("SELECT")]
    assert kept[:2] == first
    assert kept[2] is question
    assert kept[3] is answer
    store.kept = None  # what the file says, read afresh
    assert store.messages(chat.id) == kept


def test_a_streamed_reply_kept_is_what_a_read_gives_back(store: ChatStore, path: Path) -> None:
    chat = store.create_chat("Streaming")
    store.append_message(chat.id, u("hi"))
    store.messages(chat.id)
    for text in ("Hel", "Hello"):  # each checkpoint a message of its own, as a turn makes them
        partial = Message("assistant", (TextBlock(text),), id="msg_reply", created_at=len(text))
        store.checkpoint(chat.id, replace(partial, status=MessageStatus.STREAMING), partial=True)
    store.checkpoint(chat.id, Message("assistant", (TextBlock("Hello."),), id="msg_reply"))
    fresh = ChatStore.open(path)
    try:
        assert store.messages(chat.id) == fresh.messages(chat.id)
    finally:
        fresh.close()


def test_a_branch_switched_while_the_store_read_is_never_served_for_another(
    store: ChatStore, path: Path
) -> None:
    chat = store.create_chat("Two branches")
    question, answer = u("question"), a("answer")
    store.append_messages(chat.id, [question, answer])
    edit = u("question, edited")
    store.append_message(chat.id, edit, beside=question.id)
    store.show_end(chat.id, answer.id)
    elsewhere = sqlite3.connect(path, isolation_level=None)  # the command line, say
    switched: list[str] = []

    def switch_between_the_mark_and_the_messages(sql: str) -> None:
        if not switched and "shown_count" in sql:  # (the chat's row, read after the mark)
            switched.append(sql)
            elsewhere.execute("UPDATE chats SET leaf_id = ? WHERE id = ?", (edit.id, chat.id))

    store.db.set_trace_callback(switch_between_the_mark_and_the_messages)
    assert [m.text for m in store.messages(chat.id)] == ["question, edited"]
    store.db.set_trace_callback(None)
    assert switched
    elsewhere.execute("UPDATE chats SET leaf_id = ? WHERE id = ?", (answer.id, chat.id))
    elsewhere.close()
    assert [m.text for m in store.messages(chat.id)] == ["question", "answer"]


def test_an_older_moment_read_elsewhere_does_not_replace_a_newer_one() -> None:
    kept = KeptTranscripts()
    older, newer = (u("one"),), (u("one"), a("two"))
    kept.keep("c", Mark(None, 2), newer)
    kept.keep("c", Mark(None, 1), older)  # a reader's snapshot, taken before the write
    assert tuple(kept.get("c", Mark(None, 2)) or ()) == newer


def test_another_programs_write_is_read(store: ChatStore, other: ChatStore) -> None:
    chat = store.create_chat("Shared")
    store.append_messages(chat.id, [u("one"), a("two")])
    store.messages(chat.id)
    reply = other.messages(chat.id)[1]
    other.checkpoint(chat.id, replace(reply, blocks=(TextBlock("two, edited elsewhere"),)))
    assert [m.text for m in store.messages(chat.id)] == ["one", "two, edited elsewhere"]
    other.append_message(chat.id, u("three"))
    store.append_message(chat.id, a("four"))  # (after a write it did not follow)
    assert [m.text for m in store.messages(chat.id)] == [
        "one",
        "two, edited elsewhere",
        "three",
        "four",
    ]


def test_token_counts_kept_beside_the_blocks_change_nothing(store: ChatStore) -> None:
    chat = store.create_chat("Counted")
    store.append_messages(chat.id, [u("one"), a("two")])
    first = store.messages(chat.id)
    store.keep_block_counts({m.id: (3,) for m in first})
    assert all(x is y for x, y in zip(store.messages(chat.id), first, strict=True))


def test_a_branch_and_a_branch_switch_are_read(store: ChatStore) -> None:
    chat = store.create_chat("Branches")
    question, answer = u("one"), a("two")
    store.append_messages(chat.id, [question, answer])
    store.messages(chat.id)
    edit = u("one, again")
    store.append_message(chat.id, edit, beside=question.id)
    assert [m.text for m in store.messages(chat.id)] == ["one, again"]
    store.show_end(chat.id, answer.id)
    assert [m.text for m in store.messages(chat.id)] == ["one", "two"]


def test_a_write_that_failed_leaves_nothing_kept(store: ChatStore) -> None:
    chat = store.create_chat("Full")
    store.append_messages(chat.id, [u("one"), a("two")])
    store.messages(chat.id)
    pages = store.db.execute("PRAGMA page_count").fetchone()[0]
    store.db.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own SQLITE_FULL
    with pytest.raises(StorageError) as raised:
        store.append_message(chat.id, user_text("x" * 200_000))
    assert raised.value.kind is ErrorKind.DISK_FULL
    store.db.execute("PRAGMA max_page_count = 1073741823")
    store.append_message(chat.id, user_text("three"))  # the count it failed to raise, raised
    assert [m.text for m in store.messages(chat.id)] == ["one", "two", "three"]


def test_a_database_from_before_counts_its_changes(path: Path) -> None:
    old = database_at(path, 18)
    old.execute(
        "INSERT INTO chats (id, title, model, created_at, updated_at) VALUES ('c', 'Old', 'm', 0, 0)"
    )
    old.close()
    store = ChatStore.open(path, kept=KeptTranscripts())
    try:
        triggers = {
            r[0] for r in store.db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        }
        assert {
            "messages_inserted",
            "messages_updated",
            "messages_deleted",
            "blocks_updated",
            "blocks_deleted",
            "branch_shown_changed",
        } <= triggers
        store.append_messages("c", [u("one")])
        assert [m.text for m in store.messages("c")] == ["one"]
        raw = sqlite3.connect(path)
        raw.execute("UPDATE blocks SET raw = json_set(raw, '$.text', 'one, by hand')")
        raw.commit()
        raw.close()
        assert [m.text for m in store.messages("c")] == ["one, by hand"]
    finally:
        store.close()


def test_a_send_in_a_chat_read_already_reads_no_message_again(tmp_path: Path) -> None:
    engine = Engine.open(tmp_path / "home", demo=True)
    try:
        chat = engine.create_demo_chat(turns=30)
        with engine.transcript_at_one_moment(chat.id) as (_store, shown):
            pass  # as the window reads a chat it opens
        reads = block_reads(engine.store)
        turn = chat.turns.start(user_text("And now?"), ScriptedApprover())
        assert reads == []
        assert turn.state.messages[: len(shown)] == shown
        assert all(x is y for x, y in zip(turn.state.messages, shown, strict=False))
        assert chat.turns.answer(turn).error is None
        assert [m.id for m in chat.messages()] == [m.id for m in engine.store.messages(chat.id, {})]
    finally:
        engine.close()
