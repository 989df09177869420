"""SQLite storage: schema and pragmas, chats, messages byte-exact, recovery, context state."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop_app.config.paths import app_paths
from desktop_app.context.chat_settings import ContextSettings
from desktop_app.context.facts import Fact, FactSource
from desktop_app.context.state import ContextState, Summary
from desktop_app.core.blocks import (
    ImageBlock,
    OpaqueBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
)
from desktop_app.core.history import merge_same_role
from desktop_app.core.messages import Message, MessageStatus, Usage, user_text
from desktop_app.core.protocol import validate
from desktop_app.core.repair import repair
from desktop_app.storage import search
from desktop_app.storage.db import connect
from desktop_app.storage.errors import ChatNotFound, NewerSchema
from desktop_app.storage.store import ChatStore
from desktop_app.storage.version import SCHEMA_VERSION
from desktop_app.tokens.calibration import Calibration
from tests.strategies import messy_histories
from tests.unit.builders import a, call, database_at, result, u


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ChatStore]:
    opened = ChatStore.open(tmp_path / "test.sqlite3")
    yield opened
    opened.close()


def test_paths_follow_contextdesk_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTEXTDESK_HOME", str(tmp_path / "home"))
    paths = app_paths()
    assert paths.database == tmp_path / "home" / "data" / "contextdesk.sqlite3"
    assert not (tmp_path / "home").exists()  # nothing is created until asked
    paths.ensure()
    assert paths.config.is_dir()
    assert paths.settings_file == tmp_path / "home" / "config" / "settings.json"
    assert paths.state_file == tmp_path / "home" / "state" / "state.json"
    assert app_paths(tmp_path / "other").data == tmp_path / "other" / "data"


def test_the_database_is_configured_for_safety(tmp_path: Path) -> None:
    db = connect(tmp_path / "x.sqlite3")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    db.close()


def test_a_newer_schema_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite3"
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA user_version = 99")
    raw.close()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(NewerSchema, match="schema version 99"):
        connect(path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_a_version_1_database_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "v1.sqlite3"
    old = database_at(path, 1)
    old.execute(
        "INSERT INTO chats (id, title, model, system_prompt, settings, created_at, updated_at)"
        " VALUES ('c1', 'Old chat', 'm', '', '{}', 1.0, 2.0)"
    )
    old.close()
    store = ChatStore.open(path)
    chat = store.chat("c1")
    assert (chat.title, chat.token_total) == ("Old chat", None)  # unknown until counted
    store.set_token_total("c1", 1234)
    assert store.chat("c1").token_total == 1234
    assert store.chat("c1").updated_at == 2.0  # counting is not activity
    store.close()


def test_a_version_11_database_keeps_each_chats_count_from_its_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "v11.sqlite3"
    old = database_at(path, 11)
    old.execute(
        "INSERT INTO chats (id, title, model, created_at, updated_at, branched)"
        " VALUES ('c1', 'Old chat', 'm', 1.0, 2.0, 1)"
    )
    rows = [  # q → r (hidden: cut before its first word) → q2, and a version of q beside it
        ("q", None, 0, 0, 0),
        ("r", "q", 1, 1, 0),
        ("q2", "r", 2, 0, 0),
        ("tool", "q2", 3, 0, 1),
        ("q-again", None, 4, 0, 0),
    ]
    old.executemany(
        "INSERT INTO messages (id, chat_id, position, role, status, created_at, parent_id, "
        "deleted, tool_results) VALUES (?, 'c1', ?, 'user', 'complete', 1.0, ?, ?, ?)",
        [(i, pos, parent, deleted, tools) for i, parent, pos, deleted, tools in rows],
    )
    old.execute("UPDATE chats SET leaf_id = 'tool'")
    old.close()
    store = ChatStore.open(path)
    assert _shown_count(store, "c1") == 2  # q and q2: counted by the upgrade, once
    assert store.chat("c1").message_count == 2
    store.close()


def test_a_version_16_database_keeps_its_facts_and_takes_an_import_s(tmp_path: Path) -> None:
    """Version 17 makes the facts table again (its CHECK names the new source)."""
    from desktop_app.context.facts import Fact, FactSource
    from desktop_app.context.state import ContextState

    path = tmp_path / "v16.sqlite3"
    old = database_at(path, 16)
    old.execute(
        "INSERT INTO chats (id, title, model, created_at, updated_at) "
        "VALUES ('c1', 'Old chat', 'm', 1.0, 2.0)"
    )
    old.execute("INSERT INTO context_state (chat_id) VALUES ('c1')")
    old.execute(
        "INSERT INTO facts (id, chat_id, position, text, source, pending, created_at, "
        "updated_at) VALUES ('f1', 'c1', 0, 'Order 88213', 'model', 1, 1.0, 1.0)"
    )
    old.close()
    store = ChatStore.open(path)
    (kept,) = store.context_state("c1").facts
    assert (kept.id, kept.text, kept.source, kept.pending) == (
        "f1",
        "Order 88213",
        FactSource.MODEL,
        True,
    )
    offered = Fact("About me: I live in Bergen.", source=FactSource.IMPORT, pending=True)
    store.save_context_state("c1", ContextState(facts=(kept, offered)))
    assert [f.source for f in store.context_state("c1").facts] == [
        FactSource.MODEL,
        FactSource.IMPORT,
    ]
    store.close()


def test_the_search_index_writes_a_large_import_in_few_segments(tmp_path: Path) -> None:
    """Version 14: the index buffers 16 MB of new entries (FTS5 `hashsize`) before it
    writes a segment, new databases and upgraded ones alike; 1 MB made a 10,000-message
    import write and merge ~40 segments."""
    fresh = connect(tmp_path / "new.sqlite3")
    old = database_at(tmp_path / "v13.sqlite3", 13)
    old.close()
    upgraded = connect(tmp_path / "v13.sqlite3")
    for db in (fresh, upgraded):
        kept = db.execute("SELECT v FROM message_search_config WHERE k = 'hashsize'").fetchone()
        assert kept is not None
        assert kept[0] == search.INDEX_BUFFER
        db.close()
    store = ChatStore.open(tmp_path / "v13.sqlite3")
    chat = store.create_chat("after the upgrade")
    store.append_messages(chat.id, [Message("user", (TextBlock("order A-1093 refunded"),))])
    assert [hit.chat_id for hit in store.search("A-1093")] == [chat.id]
    store.close()


def test_a_version_8_database_gains_project_defaults_and_keeps_its_projects(
    tmp_path: Path,
) -> None:
    from desktop_app.storage import projects

    path = tmp_path / "v8.sqlite3"
    old = database_at(path, 8)
    old.execute(
        "INSERT INTO projects (id, name, created_at, updated_at) VALUES ('p1', 'Acme', 1, 1)"
    )
    old.close()
    store = ChatStore.open(path)
    assert projects.get(store.db, "p1").defaults == ()
    changed = projects.update(store.db, "p1", defaults={"max_tokens": 8000})
    assert changed.defaults == (("max_tokens", 8000),)
    store.close()
    # A development build's v8 had the column already: the upgrade still goes through.
    early = tmp_path / "early-v8.sqlite3"
    old = database_at(early, 8)
    old.execute("ALTER TABLE projects ADD COLUMN defaults TEXT NOT NULL DEFAULT '{}'")
    old.close()
    ChatStore.open(early).close()


def open_twice_at_once(path: Path) -> tuple[int, list[BaseException]]:
    """Two threads open (and so make) the same new database at the same moment."""
    import threading

    opened: list[sqlite3.Connection] = []
    failed: list[BaseException] = []
    start = threading.Barrier(2)

    def open_it() -> None:
        start.wait()
        try:
            opened.append(connect(path))
        except BaseException as exc:  # the test reports it
            failed.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for db in opened:
        db.close()
    return len(opened), failed


def test_two_copies_making_one_new_database_at_once_both_open_it(tmp_path: Path) -> None:
    """Switching a new file to WAL while the other copy does fails at once in SQLite (no
    busy wait there): it happened in about a third of such races, so run twenty."""
    for race in range(20):
        assert open_twice_at_once(tmp_path / f"new-{race}.sqlite3") == (2, [])


def test_chats_by_activity_prefix_lookup_and_trash(store: ChatStore) -> None:
    first = store.create_chat("First", settings=ContextSettings(keep_recent_turns=4))
    second = store.create_chat("Second")
    store.append_message(first.id, user_text("bump"))
    assert [c.title for c in store.list_chats()] == ["First", "Second"]
    assert store.chat(first.id).settings.keep_recent_turns == 4
    assert store.chat(first.id).message_count == 1
    assert store.find_chat(second.id[:-3]).id == second.id
    with pytest.raises(ChatNotFound, match="chats start with it"):
        store.find_chat("chat_")
    with pytest.raises(ChatNotFound):
        store.find_chat("nope")
    before = store.chat(second.id).updated_at
    store.update_chat(second.id, title="Renamed", system_prompt="Be brief.")
    assert store.chat(second.id).system_prompt == "Be brief."
    assert store.chat(second.id).updated_at == before  # a rename is not activity
    assert [c.title for c in store.list_chats()] == ["First", "Renamed"]
    store.delete_chat(first.id)
    assert [c.id for c in store.list_chats()] == [second.id]
    assert [c.id for c in store.list_chats(trash=True)] == [first.id]
    store.restore_chat(first.id)
    assert store.messages(first.id)[0].text == "bump"  # nothing lost in the trash


def test_every_block_comes_back_exactly(store: ChatStore) -> None:
    chat = store.create_chat()
    history = [
        u("Read it 📄 请 مرحبا", ImageBlock("image/png", "iVBORw0KGgo=")),
        Message(
            "assistant",
            (
                ThinkingBlock("Let me think…\n  ", "EqQBCkYIARgC+/=="),
                TextBlock("ok"),
                call("toolu_1", path="a.py"),
            ),
            usage=Usage(10, 5, 2, 3),
            stop_reason="tool_use",
        ),
        u(
            result("toolu_1", "contents"),
            ToolResultBlock("toolu_2", (TextBlock("x"), ImageBlock("image/gif", "R0lGOD")), True),
        ),
        a(
            OpaqueBlock(
                "server_tool_use",
                {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"q": "x"}},
            )
        ),
    ]
    store.append_messages(chat.id, history)
    loaded = store.messages(chat.id)
    assert [m.blocks for m in loaded] == [m.blocks for m in history]
    assert [m.id for m in loaded] == [m.id for m in history]
    assert loaded[1].usage == Usage(10, 5, 2, 3)
    assert loaded[1].stop_reason == "tool_use"


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(history=messy_histories)
def test_any_repaired_history_round_trips(store: ChatStore, history: list[Message]) -> None:
    messages = list(repair(history).messages)
    chat = store.create_chat()
    store.append_messages(chat.id, messages)
    assert [m.blocks for m in store.messages(chat.id)] == [m.blocks for m in messages]


def test_a_streaming_reply_is_checkpointed_and_recovered_after_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "crash.sqlite3"
    store = ChatStore.open(path)
    chat = store.create_chat()
    store.append_message(chat.id, user_text("rename the files"))
    streaming = Message("assistant", (TextBlock("Renaming"),), status=MessageStatus.STREAMING)
    store.checkpoint(chat.id, streaming)
    store.checkpoint(
        chat.id,
        replace(
            streaming,
            blocks=(TextBlock("Renaming now"), call("toolu_9", "run_command", command="mv a b")),
        ),
    )
    store.db.close()  # the app dies here

    reopened = ChatStore.open(path)
    assert reopened.recover() == [chat.id]
    history = reopened.messages(chat.id)
    assert [m.status for m in history] == [
        MessageStatus.COMPLETE,
        MessageStatus.INTERRUPTED,
        MessageStatus.COMPLETE,
    ]
    assert history[1].text == "Renaming now"
    [interrupted] = history[2].blocks
    assert isinstance(interrupted, ToolResultBlock)
    assert interrupted.is_error
    assert validate(list(merge_same_role([*history, user_text("next")]))) == []
    assert "marked interrupted" in reopened.repairs(chat.id)[0]
    assert reopened.recover() == []  # nothing left to recover
    reopened.close()


def test_context_state_round_trips(store: ChatStore) -> None:
    chat = store.create_chat()
    store.append_messages(chat.id, [u("a"), a("b")])
    ids = [m.id for m in store.messages(chat.id)]
    state = (
        ContextState()
        .pin(Fact("Refund 847.20", (("order", "#88213"),)))
        .pin(Fact("Prefers e-mail", source=FactSource.MODEL, pending=True))
        .with_summary(Summary(1, (ids[1],), "They talked.", "claude-x", warnings=("847.20",)))
        .exclude_message(ids[0])
        .exclude_block(ids[1], 0)
        .clear_results({"toolu_1"})
        .compaction_failed("timeout")
    )
    store.save_context_state(chat.id, state)
    assert store.context_state(chat.id) == state


def test_calibration_persists_through_the_store(tmp_path: Path) -> None:
    path = tmp_path / "cal.sqlite3"
    store = ChatStore.open(path)
    Calibration(store).learn("claude-x", 1500, 1000)
    store.close()
    reopened = ChatStore.open(path)
    assert Calibration(reopened).factor("claude-x") == 1.5
    reopened.close()


def test_fork_copies_up_to_a_message_and_leaves_the_original(store: ChatStore) -> None:
    chat = store.create_chat("Original", system_prompt="Be kind.")
    store.append_messages(chat.id, [u("one"), a("two"), u("three"), a("four")])
    store.save_context_state(chat.id, ContextState().pin(Fact("pinned")))
    second = store.messages(chat.id)[1]
    fork = store.fork(chat.id, second.id)
    assert fork.title == "Original (fork)"
    assert fork.system_prompt == "Be kind."
    assert [m.text for m in store.messages(fork.id)] == ["one", "two"]
    assert [f.text for f in store.context_state(fork.id).facts] == ["pinned"]
    assert len(store.messages(chat.id)) == 4
    assert {m.id for m in store.messages(fork.id)}.isdisjoint(m.id for m in store.messages(chat.id))


def test_the_newest_page_of_a_chat_is_read_without_the_rest(store: ChatStore) -> None:
    chat = store.create_chat()
    history = [user_text(f"q{i}") if i % 2 == 0 else a(f"a{i}") for i in range(30)]
    store.append_messages(chat.id, history)
    assert [m.id for m in store.recent_messages(chat.id, 5)] == [m.id for m in history[-5:]]
    assert [m.text for m in store.recent_messages(chat.id, 1)] == ["a29"]
    assert [m.id for m in store.recent_messages(chat.id, 100)] == [m.id for m in history]
    assert store.recent_messages(chat.id, 5)[-1].blocks == history[-1].blocks
    assert store.recent_messages(store.create_chat().id, 5) == []


def test_nothing_at_a_turns_end_waits_for_the_disk_and_the_reply_is_synced_after(
    tmp_path: Path,
) -> None:
    """A streaming reply's latest second, the finished reply, the ledger's note of how it
    ended and the mark that a turn runs are written unsynced (Stop would wait for each
    sync); the finished reply's write then reaches the database file itself, synced, from
    a thread of its own; the connection is FULL again after each."""
    from desktop_app.core.request import ChatRequest
    from desktop_app.storage import ledger

    file = tmp_path / "x.sqlite3"
    store = ChatStore.open(file)
    chat = store.create_chat()
    store.turn_started(chat.id, 4242)
    row = ledger.RequestRecorder().record(
        store.db, chat.id, ChatRequest("m", (user_text("Hi"),), 100), server="s"
    )
    said: list[str] = []
    store.db.set_trace_callback(said.append)
    reply = Message("assistant", (TextBlock("Half a"),), status=MessageStatus.STREAMING)
    store.checkpoint(chat.id, reply, partial=True)  # words still coming
    partial, said[:] = list(said), []
    done = replace(reply, blocks=(TextBlock("Half a reply."),), status=MessageStatus.COMPLETE)
    store.checkpoint(chat.id, done)
    finished, said[:] = list(said), []
    ledger.finish(store.db, row, seconds=1.0, usage=None, status="complete", reply_id=done.id)
    noted, said[:] = list(said), []
    store.turn_ended(chat.id, 4242)
    ended = list(said)
    store.db.set_trace_callback(None)

    def at(statements: list[str], start: str) -> int:
        return next(i for i, sql in enumerate(statements) if sql.startswith(start))

    for statements, write in (
        (partial, "INSERT INTO messages"),
        (finished, "UPDATE messages"),
        (noted, "UPDATE requests"),
        (ended, "DELETE FROM running_turns"),
    ):  # written unsynced, then the connection is back to FULL
        assert at(statements, "PRAGMA synchronous = NORMAL") < at(statements, write)
        assert at(statements, write) < at(statements, "PRAGMA synchronous = FULL")
    for syncing in threading.enumerate():  # the finished reply's sync: wait for it to end
        if syncing.name == "contextdesk-sync":
            syncing.join(5)
    assert b"Half a reply." in file.read_bytes()  # checkpointed into the database file
    assert store.db.execute("PRAGMA synchronous").fetchone()[0] == 2
    assert store.messages(chat.id)[0].text == "Half a reply."
    assert ledger.requests(store.db, chat.id)[0].status == "complete"
    assert store.running_turns() == {}
    store.close()


# -- the count of messages kept with the chat (schema v12) ---------------------------------


def _shown_count(store: ChatStore, chat_id: str) -> int | None:
    row = store.db.execute("SELECT shown_count FROM chats WHERE id = ?", (chat_id,)).fetchone()
    return None if row[0] is None else int(row[0])


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(st.tuples(st.sampled_from(range(6)), st.integers(0, 10_000)), max_size=10))
def test_the_count_kept_with_a_chat_is_the_count_of_its_branch_shown(
    store: ChatStore, steps: list[tuple[int, int]]
) -> None:
    """Whatever writes a chat goes through — appends, tool steps, a version beside
    another, another branch shown, a reply saved while it streams, a crash's repair —
    the count the chat list shows is the messages a person reads on the branch shown, and
    it is kept with the chat (not counted again on every read)."""
    chat = store.create_chat("counted")
    for step, pick in steps:
        rows = store.db.execute(
            "SELECT id FROM messages WHERE chat_id = ? AND NOT deleted", (chat.id,)
        )
        ids = [r[0] for r in rows]
        if step == 0:
            store.append_message(chat.id, u(f"question {pick}"))
        elif step == 1:
            steps_of_a_tool = [a(call("toolu_x", "t")), u(result("toolu_x")), a("done")]
            store.append_messages(chat.id, steps_of_a_tool)
        elif step == 2 and ids:
            store.append_message(chat.id, a(f"another version {pick}"), beside=ids[pick % len(ids)])
        elif step == 3 and ids:
            store.show_branch(chat.id, ids[pick % len(ids)], exactly=pick % 2 == 0)
        elif step == 4:
            store.checkpoint(chat.id, Message("assistant", (), status=MessageStatus.STREAMING))
        elif step == 5:
            store.recover()  # the streaming reply with no words is hidden
        shown = [m for m in store.messages(chat.id) if not m.is_tool_results]
        assert store.chat(chat.id).message_count == len(shown)
        assert _shown_count(store, chat.id) == len(shown)  # kept, not made on this read


def test_a_forgotten_count_is_made_on_the_read_and_kept_by_the_next_write(tmp_path: Path) -> None:
    path = tmp_path / "v11.sqlite3"
    store = ChatStore.open(path)
    chat = store.create_chat("older")
    store.append_messages(chat.id, [u("one"), a("two"), u("three")])
    store.db.execute("UPDATE chats SET shown_count = NULL")  # as if a writer had forgotten it
    assert store.chat(chat.id).message_count == 3  # counted on the read
    assert [c.message_count for c in store.list_chats()] == [3]
    store.append_message(chat.id, a("four"))
    assert _shown_count(store, chat.id) == 4
    store.close()


def test_writes_from_several_threads_on_the_apps_connection_take_turns(store: ChatStore) -> None:
    """The window, a turn's worker and the background thread write through one
    connection: two transactions at once were one, or failed with "cannot start a
    transaction within a transaction"."""
    import threading

    chat = store.create_chat("shared")
    failures: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for k in range(60):
                store.append_message(chat.id, u(f"thread {n}, message {k}"))
        except BaseException as exc:  # what the other thread's write met
            failures.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert store.chat(chat.id).message_count == 180
