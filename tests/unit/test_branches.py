"""Branches in place: an edited message or a regenerated reply is a new version beside
the old one, in the same chat; the chat shows one branch, and its context, its next
request, its export and the command line follow the branch shown. Over a real SQLite
file and the demo's simulator (the anthropic SDK on a loopback socket)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from desktop_app.chats import Chat, Engine
from desktop_app.context.state import Summary
from desktop_app.core.blocks import ImageBlock, TextBlock
from desktop_app.core.branches import Node, Tree
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import ContextDeskError
from desktop_app.core.messages import Message
from tests.fakes.tools import ScriptedApprover
from tests.unit.builders import database_at

PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


# -- the tree, as data --------------------------------------------------------------------------


def test_the_tree_shows_one_path_and_knows_each_messages_versions() -> None:
    # q1 → r1 → q2 → r2, then q2 edited (q2b → r2b), then r1 regenerated (r1b)
    tree = Tree(
        [
            Node("q1", None),
            Node("r1", "q1"),
            Node("q2", "r1"),
            Node("r2", "q2"),
            Node("q2b", "r1"),
            Node("r2b", "q2b"),
            Node("r1b", "q1"),
        ]
    )
    assert tree.path() == ["q1", "r1b"]  # the newest message's branch
    assert tree.path("r2") == ["q1", "r1", "q2", "r2"]
    assert tree.path("gone") == ["q1", "r1b"]
    versions = tree.siblings("q2b")
    assert versions is not None
    assert versions.ids == ("q2", "q2b")
    assert versions.label == "2/2"
    assert tree.siblings("q1") is None
    assert tree.newest_leaf("r1") == "r2b"  # the branch as it was left
    assert tree.newest_leaf("q2") == "r2"
    assert tree.leaves() == ["r2", "r2b", "r1b"]
    assert tree.branched


def test_a_hidden_message_is_passed_over_and_its_children_kept() -> None:
    # an empty reply cut before its first word is hidden; what came after it stays
    tree = Tree([Node("q", None), Node("cut", "q", hidden=True), Node("q2", "cut")])
    assert tree.path() == ["q", "q2"]
    assert not tree.branched


# -- editing and regenerating in place ---------------------------------------------------------


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    opened = Engine.open(tmp_path / "home", demo=True)
    yield opened
    opened.close()


def answered(chat: Chat, *questions: str) -> Sequence[Message]:
    for question in questions:
        assert chat.turns.send(question, ScriptedApprover()).error is None
    return chat.messages()


def run(chat: Chat, message: Message | None = None, **where: Any) -> None:
    """One turn started the way the window starts it (an edit, a regeneration)."""
    turn = chat.turns.start(message, ScriptedApprover(), **where)
    try:
        for event in turn.events(CancelToken()):
            turn.record(event)
    finally:
        turn.finish()
        turn.release_thread()


def sent_texts(chat: Chat) -> list[str]:
    """The texts of the messages the next request sends (before the user's next one)."""
    body = chat.plans.planning("", chat.messages())().request.body()
    return [
        "".join(b.get("text", "") for b in m["content"] if isinstance(b, dict))
        if isinstance(m["content"], list)
        else m["content"]
        for m in body["messages"]
    ]


def test_an_edit_is_a_new_version_and_switching_brings_each_branch_back(engine: Engine) -> None:
    chat = engine.new_chat()
    first = answered(chat, "Order 1 cost 10.", "And order 2?")
    question = first[2]
    run(chat, chat.branches.edited(question, "  And order 3?  "), beside=question.id)
    edited = chat.messages()
    assert [m.text for m in edited[:3]] == ["Order 1 cost 10.", first[1].text, "And order 3?"]
    assert len(edited) == 4
    assert edited[3].role == "assistant"
    assert "And order 3?" in sent_texts(chat)
    assert "And order 2?" not in sent_texts(chat)
    points = chat.branches.points()
    assert points[edited[2].id].ids == (question.id, edited[2].id)
    assert points[edited[2].id].label == "2/2"
    # back to the first version: the branch as it was left, and the request with it
    chat.branches.show(question.id)
    assert [m.id for m in chat.messages()] == [m.id for m in first]
    assert "And order 2?" in sent_texts(chat)
    assert "And order 3?" not in sent_texts(chat)
    # the store keeps it: another program (and the next start) sees the same branch
    assert [m.id for m in engine.store.messages(chat.id)] == [m.id for m in first]
    # a message sent now goes on from the branch shown
    after = answered(chat, "And order 4?")
    assert [m.id for m in after[:4]] == [m.id for m in first]
    assert [b.length for b in chat.branches.all()] == [4, 6]
    assert [b.shown for b in chat.branches.all()] == [False, True]
    # The chat list counts what the branch shown holds, not every version stored.
    assert engine.store.chat(chat.id).message_count == 6
    chat.branches.show(edited[2].id)
    assert engine.store.chat(chat.id).message_count == 4


def test_a_branch_is_read_with_its_kept_token_counts_and_no_other_branchs(
    engine: Engine,
) -> None:
    chat = engine.new_chat()
    first = answered(chat, "Order 1 cost 10.", "And order 2?")
    run(chat, chat.branches.edited(first[2], "And order 3?"), beside=first[2].id)
    shown = chat.messages()
    everything = [*first, *shown[2:]]
    engine.store.keep_block_counts({m.id: (5,) * len(m.blocks) for m in everything})
    counts: dict[str, tuple[int, ...]] = {}
    read = engine.store.messages(chat.id, counts)
    assert [m.id for m in read] == [m.id for m in shown]
    assert counts == {m.id: (5,) * len(m.blocks) for m in shown}
    keys = {key: key for key in counts}  # keyed by the messages' own id strings, not copies
    assert all(keys[message.id] is message.id for message in read)


def test_an_export_holds_the_chat_as_it_was_when_it_began_whatever_is_chosen_meanwhile(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window writes an export on its worker and goes on: a branch chosen while it
    plans is not half in it. Every version is in it once."""
    from desktop_app.chats.planning import Planning

    chat = engine.new_chat()
    first = answered(chat, "Order 1 cost 10.", "And order 2?")
    run(chat, chat.branches.edited(first[2], "And order 3?"), beside=first[2].id)
    every = {m.id for m in first} | {m.id for m in chat.messages()}
    planning = Planning.planning

    def choosing_meanwhile(self: Planning, *args: Any, **kwargs: Any) -> Any:
        engine.store.show_end(chat.id, first[-1].id)  # the first version, chosen now
        return planning(self, *args, **kwargs)

    monkeypatch.setattr(Planning, "planning", choosing_meanwhile)
    doc = json.loads(chat.export())
    shown = [m["id"] for m in doc["messages"]]
    others = [m["id"] for m in doc["branches"]]
    assert shown[-1] != first[-1].id  # as it was when the export began
    assert sorted(shown + others) == sorted(every)


def test_the_chat_list_counts_the_messages_a_person_reads(engine: Engine) -> None:
    """Tool results come back in a message of their own: Claude's work, not a message."""
    from desktop_app.core.blocks import ToolResultBlock, ToolUseBlock

    chat = engine.new_chat()
    engine.store.append_messages(
        chat.id,
        [
            Message("user", (TextBlock("What time is it?"),)),
            Message("assistant", (ToolUseBlock("toolu_1", "current_time", {}),)),
            Message("user", (ToolResultBlock("toolu_1", "12:00"),)),
            Message("assistant", (TextBlock("Noon."),)),
        ],
    )
    assert engine.store.chat(chat.id).message_count == 3
    assert [c.message_count for c in engine.list_chats() if c.id == chat.id] == [3]


def test_an_edit_keeps_the_images_and_the_first_message_can_be_edited(engine: Engine) -> None:
    chat = engine.new_chat()
    with_image = Message("user", (ImageBlock("image/png", PNG_1PX), TextBlock("look")))
    chat.turns.send([*with_image.blocks], ScriptedApprover())
    shown = chat.messages()[0]
    edited = chat.branches.edited(shown, "look again")
    assert isinstance(edited.blocks[0], ImageBlock)
    assert edited.blocks[-1] == TextBlock("look again")
    run(chat, edited, beside=shown.id)
    assert chat.messages()[0].text == "look again"
    assert chat.branches.points()[chat.messages()[0].id].label == "2/2"
    with pytest.raises(ContextDeskError):
        chat.branches.edited(shown, "   ")


def test_regenerating_a_reply_answers_its_question_again_beside_it(engine: Engine) -> None:
    chat = engine.new_chat()
    first = answered(chat, "Tell me a fact.", "Another?")
    reply = first[1]
    prompt = chat.branches.prompt_of(reply, first)
    assert prompt.id == first[0].id
    run(chat, after=prompt.id)
    now = chat.messages()
    assert [m.id for m in now[:1]] == [first[0].id]
    assert len(now) == 2
    assert now[1].id != reply.id
    assert now[1].role == "assistant"
    assert chat.branches.points()[now[1].id].ids == (reply.id, now[1].id)
    chat.branches.show(reply.id)
    assert [m.id for m in chat.messages()] == [m.id for m in first]


def test_a_reply_to_a_question_left_out_is_not_regenerated(engine: Engine) -> None:
    """The request would end with the reply before it: the API refuses a prefill on the
    current models (a new user's report)."""
    chat = engine.new_chat()
    first = answered(chat, "Tell me a fact.", "Another?")
    chat.memory.set_excluded(first[2], True)
    with pytest.raises(ContextDeskError, match="left out"):
        chat.turns.start(None, ScriptedApprover(), after=first[2].id)
    assert [m.id for m in chat.messages()] == [m.id for m in first]  # nothing changed
    chat.memory.set_excluded(first[2], False)  # included again: answered again
    run(chat, after=first[2].id)
    assert len(chat.messages()) == 4
    assert chat.messages()[3].id != first[3].id


def test_a_regeneration_stopped_before_its_first_word_gives_the_old_answer_back(
    engine: Engine,
) -> None:
    chat = engine.new_chat()
    first = answered(chat, "Tell me a fact.", "Another?")
    stop = CancelToken()
    stop.cancel()  # Stop pressed before anything came
    turn = chat.turns.start(None, ScriptedApprover(), after=first[2].id)
    try:
        for event in turn.events(stop):
            turn.record(event)
    finally:
        changes = turn.finish()
        turn.release_thread()
    assert changes.rows is not None  # the window is told which rows come back
    assert changes.rows.after == first[2].id
    assert [m.id for m in changes.rows.messages] == [first[3].id]
    assert [m.id for m in chat.messages()] == [m.id for m in first]
    assert [m.id for m in engine.store.messages(chat.id)] == [m.id for m in first]
    assert chat.branches.points() == {}
    after = answered(chat, "And a third?")  # goes on after the answer, not after the question
    assert [m.id for m in after[:4]] == [m.id for m in first]


def test_a_summary_stands_only_for_the_branch_it_was_made_on(engine: Engine) -> None:
    chat = engine.new_chat()
    first = answered(chat, "One.", "Two.", "Three.")
    covered = tuple(m.id for m in first[:4])
    summary = Summary(1, covered, "SUMMARY OF ONE AND TWO", "m")
    engine.store.save_context_state(chat.id, chat.state.with_summary(summary))
    chat.reload()
    assert any("SUMMARY OF ONE AND TWO" in t for t in sent_texts(chat))
    # an edit of the second question leaves the summarized span: the summary is not this branch's
    run(chat, chat.branches.edited(first[2], "Two, again."), beside=first[2].id)
    assert not any("SUMMARY OF ONE AND TWO" in t for t in sent_texts(chat))
    assert "Two, again." in sent_texts(chat)
    chat.branches.show(first[2].id)
    assert any("SUMMARY OF ONE AND TWO" in t for t in sent_texts(chat))
    assert engine.store.context_state(chat.id).summaries == (summary,)  # kept, never lost


def test_export_carries_the_tree_and_import_brings_it_back(engine: Engine, tmp_path: Path) -> None:
    chat = engine.new_chat()
    first = answered(chat, "Alpha.", "Beta.")
    run(chat, chat.branches.edited(first[2], "Gamma."), beside=first[2].id)
    run(chat, after=first[0].id)  # and a second answer to the first question
    chat.branches.show(first[2].id)  # the original branch is the one shown
    doc = json.loads(chat.export())
    assert [m["id"] for m in doc["messages"]] == [m.id for m in first]
    assert len(doc["branches"]) == 3  # Gamma, its reply, the second answer to Alpha
    target = tmp_path / "tree.json"
    target.write_text(json.dumps(doc))
    copy = engine.import_file(target).chat
    assert [m.text for m in copy.messages()] == [m.text for m in first]
    # Every version keeps its number, and each branch its place and its end
    assert [(b.length, b.differs_at, b.shown) for b in copy.branches.all()] == [
        (b.length, b.differs_at, b.shown) for b in chat.branches.all()
    ]
    assert [
        (copy.branches.message(b.differs_id).text, copy.branches.message(b.leaf).text)
        for b in copy.branches.all()
    ] == [
        (chat.branches.message(b.differs_id).text, chat.branches.message(b.leaf).text)
        for b in chat.branches.all()
    ]
    assert [s.label for s in copy.branches.points().values()] == [
        s.label for s in chat.branches.points().values()
    ]
    gamma = next(
        b for b in copy.branches.all() if copy.branches.message(b.differs_id).text == "Gamma."
    )
    copy.branches.show(gamma.leaf)
    assert [m.text for m in copy.messages()][:3] == ["Alpha.", first[1].text, "Gamma."]
    # A version whose parent is missing, itself, or after it (a cycle) was refused with the
    # whole file: it is kept, after the nearest earlier message it can follow, and said.
    for broken in (
        lambda d: d["branches"][0].update(parent="msg_nowhere"),
        lambda d: d["branches"][0].update(parent=d["branches"][0]["id"]),  # itself
        lambda d: d["branches"].reverse(),  # a reply before the question it answers
    ):
        bad = json.loads(json.dumps(doc))
        broken(bad)
        target.write_text(json.dumps(bad))
        imported = engine.import_file(target)
        assert any("is not a message before it" in r for r in imported.repairs)
        repaired = imported.chat
        assert [m.text for m in repaired.messages()] == [m.text for m in first]
        kept = [m.text for _, m in engine.store.other_branches(repaired.id)]
        assert sorted(kept) == sorted(m.text for _, m in engine.store.other_branches(chat.id))
        for branch in repaired.branches.all():  # each a conversation: speakers take turns
            repaired.branches.show(branch.leaf)
            roles = [m.role for m in repaired.messages()]
            assert all(x != y for x, y in itertools.pairwise(roles)), roles


def test_the_command_line_lists_and_shows_branches(
    engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from desktop_app.app import main

    chat = engine.new_chat()
    first = answered(chat, "Alpha.", "Beta.")
    run(chat, chat.branches.edited(first[2], "Gamma."), beside=first[2].id)
    home = str(tmp_path / "home")
    engine.close()
    assert main(["--home", home, "--demo", "branch", chat.id]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[0].startswith("  1  4 messages · message 3, You: Beta.")
    assert listed[1].startswith("* 2  4 messages · message 3, You: Gamma.")
    assert main(["--home", home, "--demo", "branch", chat.id, "1"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("* 1")
    assert main(["--home", home, "--demo", "branch", chat.id, "3"]) == 2
    reopened = Engine.open(tmp_path / "home", demo=True)
    try:
        assert [m.id for m in reopened.find(chat.id).messages()] == [m.id for m in first]
    finally:
        reopened.close()


def test_a_database_from_before_branches_opens_as_one_line(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = database_at(path, 9)
    db.execute(
        "INSERT INTO chats (id, title, model, created_at, updated_at) VALUES ('c', 't', 'm', 0, 0)"
    )
    db.execute("INSERT INTO context_state (chat_id) VALUES ('c')")
    for n, (mid, role) in enumerate([("m1", "user"), ("m2", "assistant"), ("m3", "user")]):
        db.execute(
            "INSERT INTO messages (id, chat_id, position, role, status, created_at) "
            "VALUES (?, 'c', ?, ?, 'complete', 0)",
            (mid, n, role),
        )
        db.execute(
            "INSERT INTO blocks (message_id, position, type, raw) VALUES (?, 0, 'text', ?)",
            (mid, json.dumps({"type": "text", "text": mid})),
        )
    db.close()
    from desktop_app.storage.store import ChatStore

    store = ChatStore.open(path)
    try:
        assert [m.text for m in store.messages("c")] == ["m1", "m2", "m3"]
        assert not store.tree("c").branched
        parents = dict(store.db.execute("SELECT id, parent_id FROM messages").fetchall())
        assert parents == {"m1": None, "m2": "m1", "m3": "m2"}
    finally:
        store.close()
