"""Search across every message: the FTS index follows every write the store makes, an
old database is indexed on upgrade, and what is found is what is stored."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop_app.core.blocks import TextBlock, ToolResultBlock
from desktop_app.core.messages import Message, MessageStatus, user_text
from desktop_app.storage.exchange import import_chat
from desktop_app.storage.search import (
    MARK_END,
    MARK_START,
    MAX_QUERY_CHARS,
    clean_query,
    merge_a_little,
    search,
)
from desktop_app.storage.store import ChatStore
from tests.unit.builders import a, call, database_at, result, u


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ChatStore]:
    opened = ChatStore.open(tmp_path / "test.sqlite3")
    yield opened
    opened.close()


def found(store: ChatStore, text: str, chat_id: str | None = None) -> list[tuple[str, int]]:
    """(chat id, message position) of each message hit; titles left out."""
    return [(h.chat_id, h.position) for h in store.search(text, chat_id=chat_id) if h.message_id]


def test_text_tool_calls_and_tool_results_are_found_anywhere_in_a_word(store: ChatStore) -> None:
    chat = store.create_chat("Invoices")
    store.append_messages(
        chat.id,
        [
            u("Where is the quarterly report?"),
            a("Let me look.", call("toolu_1", "read_file", path="reports/q3-summary.md")),
            u(result("toolu_1", "Revenue grew by 12 percent")),
            a("Revenue grew; 报告在这里。"),
        ],
    )
    assert found(store, "QUARTERLY") == [(chat.id, 0)]  # case does not matter
    assert found(store, "uarter") == [(chat.id, 0)]  # nor where in the word it starts
    assert found(store, "q3-summary") == [(chat.id, 1)]  # a tool call's arguments
    assert found(store, "12 percent") == [(chat.id, 2)]  # a tool result's text
    assert found(store, "报告在") == [(chat.id, 3)]  # no spaces needed between words
    assert found(store, "报告") == [(chat.id, 3)]  # and two characters make a word
    assert [p for _, p in found(store, "revenue grew")] == [3, 2]  # newest first
    [hit] = [h for h in store.search("quarterly") if h.message_id]
    assert f"{MARK_START}quarterly{MARK_END}" in hit.snippet
    assert hit.chat_title == "Invoices"


def test_titles_match_short_text_and_messages_need_three_characters(store: ChatStore) -> None:
    chat = store.create_chat("Go tips")
    store.append_message(chat.id, user_text("go go go"))
    hits = store.search("go")
    assert [(h.chat_id, h.message_id) for h in hits] == [(chat.id, None)]
    assert found(store, "go go") == [(chat.id, 0)]
    assert store.search("   ") == []


def test_the_query_is_text_not_search_syntax(store: ChatStore) -> None:
    chat = store.create_chat()
    store.append_message(chat.id, user_text('she said "NOT OR AND" * (twice)'))
    for query in ('"NOT OR AND"', "* (tw", "NOT OR", 'd "N'):
        assert found(store, query) == [(chat.id, 0)], query


def test_a_hostile_query_is_bounded_and_never_an_error(store: ChatStore) -> None:
    """A 5,000-character paste over a long run of one letter took 13 s (a phrase's cost
    grows with its length times the text's); a NUL said the database could not be used."""
    chat = store.create_chat("Runs")
    store.append_message(chat.id, user_text("a" * 100_000))
    store.append_message(chat.id, user_text("tab\there, a NUL\x00 too"))
    hits = store.search("a" * 5_000)  # searched as its first MAX_QUERY_CHARS
    assert [h.position for h in hits if h.message_id] == [0]
    assert not hits.cut
    assert clean_query("a" * 5_000) == "a" * MAX_QUERY_CHARS
    assert found(store, "\x00NUL\x00") == [(chat.id, 1)]  # a control character is a space
    assert found(store, "\x00\x01\x7f") == []
    assert clean_query("\x00 tab\there\n") == "tab here"
    # Out of time: SQLite is interrupted, what was found is kept and the list says so.
    slow = search(store.db, "a" * 200, budget_s=0.0)
    assert slow.cut
    assert not [h for h in slow if h.message_id]  # stopped before it read a message
    assert store.search("a" * 200)  # the connection is usable again


def test_one_chat_is_searched_in_order(store: ChatStore) -> None:
    first, second = store.create_chat("one"), store.create_chat("two")
    store.append_messages(first.id, [u("alpha beta"), a("beta gamma"), u("beta again")])
    store.append_messages(second.id, [u("beta elsewhere")])
    assert found(store, "beta", first.id) == [(first.id, 0), (first.id, 1), (first.id, 2)]
    assert found(store, "beta", second.id) == [(second.id, 0)]


def test_streamed_text_the_trash_and_hidden_replies_follow_the_store(tmp_path: Path) -> None:
    path = tmp_path / "chats.sqlite3"
    store = ChatStore.open(path)
    chat = store.create_chat()
    store.append_message(chat.id, user_text("tell me about walruses"))
    reply = Message("assistant", (TextBlock("Walruses are"),), status=MessageStatus.STREAMING)
    store.checkpoint(chat.id, reply)
    store.checkpoint(chat.id, replace(reply, blocks=(TextBlock("Walruses live in the Arctic"),)))
    assert found(store, "Arctic") == [(chat.id, 1)]
    assert found(store, "Walruses are") == []  # the earlier checkpoint's text is gone

    store.delete_chat(chat.id)
    assert store.search("walrus") == []
    store.restore_chat(chat.id)  # Undo
    assert found(store, "walrus") == [(chat.id, 1), (chat.id, 0)]

    empty = Message("assistant", (), status=MessageStatus.STREAMING)
    store.append_message(chat.id, user_text("and seals?"))
    store.checkpoint(chat.id, empty)
    store.db.close()  # a crash before the reply's first word
    reopened = ChatStore.open(path)
    reopened.recover()
    assert found(reopened, "seals") == [(chat.id, 2)]
    reopened.close()


def test_a_reply_is_searchable_once_it_ends_or_once_a_crash_left_it(tmp_path: Path) -> None:
    """While words come, a reply's latest second is saved but not indexed (indexing it
    whole every second made the index merge on the window's thread); its end, or the
    repair at the next start after a crash, makes it searchable."""
    path = tmp_path / "chats.sqlite3"
    store = ChatStore.open(path)
    chat = store.create_chat()
    store.append_message(chat.id, user_text("tell me about walruses"))
    reply = Message("assistant", (TextBlock("Walruses are"),), status=MessageStatus.STREAMING)
    store.checkpoint(chat.id, reply, partial=True)
    assert found(store, "Walruses are") == []
    store.checkpoint(chat.id, replace(reply, status=MessageStatus.INTERRUPTED))
    assert found(store, "Walruses are") == [(chat.id, 1)]

    store.append_message(chat.id, user_text("and seals?"))
    seals = Message("assistant", (TextBlock("Seals swim"),), status=MessageStatus.STREAMING)
    store.checkpoint(chat.id, seals, partial=True)
    other = store.create_chat()  # as an earlier ContextDesk left it: indexed while streaming
    store.checkpoint(
        other.id, Message("assistant", (TextBlock("Otters float"),), status=seals.status)
    )
    store.db.close()  # a crash while they stream
    reopened = ChatStore.open(path)
    assert sorted(reopened.recover()) == sorted([chat.id, other.id])
    assert found(reopened, "Seals swim") == [(chat.id, 3)]
    assert found(reopened, "Otters float") == [(other.id, 0)]  # indexed once, not twice
    assert found(reopened, "Walruses are") == [(chat.id, 1)]
    reopened.close()


def test_a_fork_and_an_import_are_searchable(store: ChatStore) -> None:
    chat = store.create_chat()
    store.append_messages(chat.id, [u("first question"), a("first answer"), u("second")])
    first_answer = store.messages(chat.id)[1]
    fork = store.fork(chat.id, first_answer.id, "Edited")
    assert sorted(found(store, "first answer")) == sorted([(chat.id, 1), (fork.id, 1)])
    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "imported question about the Hydra ferry"},
            {"role": "assistant", "content": [{"type": "text", "text": "It leaves at 9."}]},
        ],
    }
    imported = import_chat(store, json.dumps(body).encode())
    assert found(store, "hydra ferry") == [(imported.chat.id, 0)]
    assert store.chats([imported.chat.id, fork.id, "chat_gone"]).keys() == {
        imported.chat.id,
        fork.id,
    }


def test_a_version_3_database_is_indexed_on_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "v3.sqlite3"
    old = database_at(path, 3)
    old.execute(
        "INSERT INTO chats (id, title, model, system_prompt, settings, created_at, updated_at)"
        " VALUES ('c1', 'Old chat', 'm', '', '{}', 1.0, 2.0)"
    )
    old.execute(
        "INSERT INTO messages (id, chat_id, position, role, status, created_at) "
        "VALUES ('m1', 'c1', 0, 'user', 'complete', 1.0)"
    )
    raw = json.dumps({"type": "text", "text": "written before search existed"})
    old.execute(
        "INSERT INTO blocks (message_id, position, type, raw) VALUES ('m1', 0, 'text', ?)", (raw,)
    )
    old.close()
    store = ChatStore.open(path)
    assert found(store, "before search") == [("c1", 0)]
    store.close()


# -- the index never drifts from the messages ------------------------------------------------

WORDS = ["apple", "banana", "cherry", "Apfel", "Kirsche", "苹果派", "tool", "ferry"]
sentences = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 2), sentences),
        st.tuples(st.just("result"), st.integers(0, 2), sentences),
        st.tuples(st.just("checkpoint"), st.integers(0, 2), sentences),
        st.tuples(st.just("trash"), st.integers(0, 2), st.just("")),
        st.tuples(st.just("restore"), st.integers(0, 2), st.just("")),
    ),
    max_size=12,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=operations, query=st.sampled_from([*WORDS, "pple", "erry ap", "果派"]))
def test_search_agrees_with_reading_every_message(
    store: ChatStore, ops: list[tuple[str, int, str]], query: str
) -> None:
    store.db.execute("DELETE FROM chats")  # what the last example left (its index rows
    # stay behind, matching no message: search must never show them)
    chats = [store.create_chat(f"c{i}").id for i in range(3)]
    streaming: dict[str, Message] = {}
    for op, which, text in ops:
        chat_id = chats[which]
        if op == "append":
            streaming.pop(chat_id, None)
            store.append_message(chat_id, user_text(text))
        elif op == "result":
            streaming.pop(chat_id, None)
            store.append_message(chat_id, u(ToolResultBlock("toolu_x", (TextBlock(text),))))
        elif op == "checkpoint":
            reply = streaming.setdefault(
                chat_id, Message("assistant", (), status=MessageStatus.STREAMING)
            )
            streaming[chat_id] = replace(reply, blocks=(TextBlock(text),))
            store.checkpoint(chat_id, streaming[chat_id])
        elif op == "trash":
            store.delete_chat(chat_id)
        else:
            store.restore_chat(chat_id)
    expected = sorted(
        (chat.id, position)
        for chat in store.list_chats()
        for position, message in enumerate(store.messages(chat.id))
        if query.lower() in _searchable(message).lower()
    )
    assert sorted(found(store, query)) == expected


def _searchable(message: Message) -> str:
    parts = []
    for block in message.blocks:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ToolResultBlock):
            parts.extend(p.text for p in block.content if isinstance(p, TextBlock))
    return "\n".join(parts)


def test_writes_add_index_segments_and_a_finished_reply_merges_them(store: ChatStore) -> None:
    """A write that merged the index's segments (a turn's tiny writes reach 16 on a level
    in eight turns) held a Send ~0.5 s at 100,000 messages. Writes only add a segment;
    the thread a finished reply starts merges them, a step at a time."""
    chat = store.create_chat("Turns")

    def segments() -> int:
        sql = "SELECT count(DISTINCT segid) FROM message_search_idx"
        return int(store.db.execute(sql).fetchone()[0])

    for turn in range(20):  # past the 16 at which a write merged them all
        store.append_message(chat.id, user_text(f"question number {turn}"))
    assert segments() == 20
    store.checkpoint(chat.id, a("answer number 20"))  # a reply's end: its thread merges
    for syncing in threading.enumerate():
        if syncing.name == "contextdesk-sync":
            syncing.join(10)
            assert not syncing.is_alive()  # (it ends once a step finds nothing to merge)
    assert segments() <= 4
    assert not merge_a_little(store.db)  # nothing left: the step says so
    store.db.execute("INSERT INTO message_search (message_search) VALUES ('integrity-check')")
    assert found(store, "question number 7") == [(chat.id, 7)]
    assert found(store, "answer number 20") == [(chat.id, 20)]


def test_a_hit_reads_as_the_conversation_shows_it_not_as_markdown(store: ChatStore) -> None:
    """Around the match, Markdown's marks are left out ("**the warranty" was shown);
    `__` stays (code's `__init__`), a dash inside a line is text, not a list's, and code
    is shown as written: a fenced block's lines, a lone ** (a power, **kwargs)."""
    chat = store.create_chat("Terms")

    def shown(text: str, query: str) -> str:
        store.append_message(chat.id, a(text))
        (hit,) = [h for h in store.search(query) if h.message_id]
        return hit.snippet.replace(MARK_START, "[").replace(MARK_END, "]")

    assert (
        shown(
            "# Terms\n\nRead **the warranty** before `pip install`.\n- costs 5 - 3 in __init__",
            "warranty",
        )
        == "Terms\n\nRead the [warranty] before pip install.\ncosts 5 - 3 in __init__"
    )
    assert (
        shown(
            "Run:\n```bash\n# install deps\n- 3\nfsck --repair\n```\nthen 2**10 and **done**.",
            "repair",
        )
        == "Run:\n```bash\n# install deps\n- 3\nfsck --[repair]\n```\nthen 2**10 and done."
    )
