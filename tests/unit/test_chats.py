"""The application layer itself: every action a user takes on a chat, once, through
`Engine` and `Chat` — over a real SQLite file, the real token counter, and (for turns and
compaction) the offline demo's simulator on a loopback socket through the anthropic SDK."""

from __future__ import annotations

import functools
import json
import sqlite3
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from desktop_app.api.backend import AnthropicBackend
from desktop_app.api.simulator import Reply, SimulatorServer
from desktop_app.api.simulator.script import Fault, FaultKind
from desktop_app.chats import NEW_CHAT_TITLE, Chat, Engine
from desktop_app.chats.changes import Changes
from desktop_app.chats.instance import InstanceLock
from desktop_app.chats.slow import run_here
from desktop_app.config.errors import BadSetting
from desktop_app.config.settings import load
from desktop_app.context.facts import Fact, FactSource
from desktop_app.context.plan import BlockState
from desktop_app.core.blocks import TextBlock, ToolResultBlock
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import ContextDeskError, ErrorKind
from desktop_app.core.events import TurnFinished
from desktop_app.core.messages import Message, MessageStatus, Usage, user_text
from desktop_app.core.ports import ApprovalDecision
from desktop_app.core.protocol import validate
from tests.fakes.tools import ScriptedApprover
from tests.unit.builders import a, call, result, think, u

PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    opened = Engine.open(tmp_path / "home", demo=True)
    yield opened
    opened.close()


@pytest.fixture
def simulator(engine: Engine) -> SimulatorServer:
    engine.connection.backend()
    assert engine.connection.simulator is not None
    engine.connection.simulator.state.recording = True  # (the app's keeps nothing)
    return engine.connection.simulator


def demo(engine: Engine, turns: int = 6) -> Chat:
    return engine.create_demo_chat(turns)


def system_text(chat: Chat) -> str:
    return "\n".join(part.text for part in chat.plans.plan().request.system)


# -- chats and their settings ----------------------------------------------------------------


def test_a_new_chat_takes_every_default_from_settings(engine: Engine, tmp_path: Path) -> None:
    engine.change_settings(
        {
            "model": "claude-haiku-4-5",
            "max_tokens": "9000",
            "thinking": "2048",
            "system": "Be brief.",
        }
    )
    chat = engine.new_chat()
    assert chat.title == NEW_CHAT_TITLE
    assert (chat.info.model, chat.info.system_prompt) == ("claude-haiku-4-5", "Be brief.")
    assert (chat.settings.max_tokens, chat.settings.thinking_budget) == (9000, 2048)
    request = chat.plans.plan("hello").request.body()
    assert request["max_tokens"] == 9000
    assert request["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert request["system"][0]["text"].startswith("Be brief.")
    assert chat.settings.context_window == 200_000  # the model's own window
    overridden = engine.new_chat("Mine", model="claude-opus-5-5", keep_recent_turns=3)
    assert (overridden.info.model, overridden.settings.keep_recent_turns) == ("claude-opus-5-5", 3)
    assert overridden.settings.max_tokens == 9000
    assert overridden.settings.context_window == 1_000_000


def test_a_model_no_list_knows_gets_the_window_settings_give_it(engine: Engine) -> None:
    engine.change_settings({"model": "qwen3:8b", "context_window": "32768"})
    chat = engine.new_chat()
    assert chat.settings.context_window == 32_768
    assert chat.plans.plan("hi").context_window == 32_768  # the meter and compaction use it
    assert engine.new_chat(model="mystery-model").settings.context_window == 200_000
    with pytest.raises(
        BadSetting, match=r"context_window: 0 \(as the model list says\) or between"
    ):
        engine.change_settings({"context_window": "12"})


def test_settings_are_checked_saved_and_typed(engine: Engine) -> None:
    with pytest.raises(BadSetting, match="thinking_budget: must be below the max output tokens"):
        engine.change_settings({"thinking": "8192"})  # max_tokens is 4096
    with pytest.raises(BadSetting, match="tools: say on or off"):
        engine.change_settings({"tools": "perhaps"})
    with pytest.raises(BadSetting, match="no such setting"):
        engine.change_settings({"colour": "blue"})
    engine.change_settings({"run_command": "off", "server": "http://localhost:11434"})
    saved = load(engine.paths.settings_file, type(engine.settings))
    assert saved.base_url == "http://localhost:11434"
    assert saved.run_command_enabled is False
    assert engine.settings == saved


def test_a_chat_is_renamed_changed_and_checked(engine: Engine) -> None:
    chat = engine.new_chat()
    chat.rename("  Refund   case ")
    assert engine.store.chat(chat.id).title == "Refund case"
    chat.setup.change({"keep_recent": "4", "auto_compact": "off", "model": "claude-haiku-4-5"})
    assert (chat.settings.keep_recent_turns, chat.settings.auto_compact) == (4, False)
    assert engine.store.chat(chat.id).model == "claude-haiku-4-5"
    for bad, why in (
        ({"threshold": "nan"}, "a number is needed"),
        ({"threshold": "7"}, "threshold must be between"),
        ({"max_tokens": "abc"}, "a whole number is needed"),
        ({"max_tokens": "1,000,000"}, "below the context window"),
        ({"auto_compact": "maybe"}, "say on or off"),
        ({"colour": "blue"}, "KEY one of"),
    ):
        with pytest.raises(ContextDeskError, match=why) as raised:
            chat.setup.change(bad)
        assert raised.value.kind is ErrorKind.USAGE
    assert engine.store.chat(chat.id).settings == chat.settings  # nothing half-applied
    chat.setup.set_system_prompt("You are a careful support agent.")
    assert system_text(chat).startswith("You are a careful support agent.")
    with pytest.raises(ContextDeskError, match="needs a name"):
        chat.rename("   ")


def test_switched_off_tools_and_layers_are_lists_of_names_everywhere(engine: Engine) -> None:
    """Typed on the command line as comma-separated names, stored and exported as a
    list; a row or an export written as comma-separated text (earlier versions) reads."""
    chat = engine.new_chat("Tools")
    chat.setup.change({"tools_off": "git.git_log, time,git.git_log", "project_layers_off": "facts"})
    assert chat.settings.tools_off == ("git.git_log", "time")
    assert chat.settings.project_layers_off == ("facts",)
    stored = engine.store.db.execute("SELECT settings FROM chats WHERE id = ?", (chat.id,))
    row = json.loads(stored.fetchone()[0])
    assert row["tools_off"] == ["git.git_log", "time"]  # a list, not "git.git_log,time"
    exported = json.loads(chat.export())
    assert exported["chat"]["settings"]["tools_off"] == ["git.git_log", "time"]

    row["tools_off"], row["project_layers_off"] = "time,git", "knowledge"  # as written before
    engine.store.db.execute(
        "UPDATE chats SET settings = ? WHERE id = ?", (json.dumps(row), chat.id)
    )
    assert engine.store.chat(chat.id).settings.tools_off == ("git", "time")
    assert engine.store.chat(chat.id).settings.project_layers_off == ("knowledge",)
    exported["chat"]["settings"]["tools_off"] = "time,git"  # an export from before
    imported = engine.import_bytes(json.dumps(exported).encode(), "Again").chat
    assert imported.settings.tools_off == ("git", "time")
    exported["chat"]["settings"]["tools_off"] = [1, 2]
    with pytest.raises(ContextDeskError, match="a list of names"):
        engine.import_bytes(json.dumps(exported).encode(), "Broken")


def test_a_turn_that_changes_no_context_writes_none_when_it_ends(engine: Engine) -> None:
    """The context state is written at a turn's end only when the turn changed it (a
    write waits for the disk: Stop's path); an edit queued during the turn is saved."""
    chat = demo(engine, 2)
    said: list[str] = []
    engine.store.db.set_trace_callback(said.append)
    chat.turns.send("One more?", ScriptedApprover())
    assert not any(sql.startswith("DELETE FROM facts") for sql in said)
    turn = chat.turns.start(user_text("And another?"), ScriptedApprover())
    chat.memory.pin("Order 4471-B ships on 2026-05-02")  # during the turn: it waits
    said.clear()
    run_here(turn)
    engine.store.db.set_trace_callback(None)
    assert any(sql.startswith("DELETE FROM facts") for sql in said)
    facts = [f.text for f in engine.store.context_state(chat.id).facts]
    assert facts[-1] == "Order 4471-B ships on 2026-05-02"


def test_a_reply_calibrates_the_estimate_by_the_engine_s_close_at_the_latest(
    tmp_path: Path,
) -> None:
    """A reply's count is learned by the next estimate (off the window's thread); a
    command sends and closes, planning nothing after: the close learns it, and it is kept."""
    home = tmp_path / "home"
    engine = Engine.open(home, demo=True)
    chat = demo(engine, 2)
    chat.turns.send("One more?", ScriptedApprover())
    assert engine.store.load_calibration() == {}  # waiting for the next estimate
    engine.close()
    again = Engine.open(home, demo=True)
    try:
        assert again.store.load_calibration()  # learned at the close, and kept
    finally:
        again.close()


def test_a_calibration_that_cannot_be_saved_at_the_close_still_closes_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    engine = Engine.open(tmp_path / "home", demo=True)
    chat = demo(engine, 2)
    chat.turns.send("One more?", ScriptedApprover())

    def full_disk() -> None:
        raise ContextDeskError("Disk full", "No room to save.", kind=ErrorKind.DISK_FULL)

    monkeypatch.setattr(engine.counter, "take_lessons", full_disk)
    engine.close()  # said, not raised: the next reply teaches it again
    assert "calibration was not saved" in caplog.text
    with pytest.raises(sqlite3.ProgrammingError):
        engine.store.db.execute("SELECT 1")  # closed


def test_engine_hands_out_one_chat_object_per_chat(engine: Engine) -> None:
    chat = engine.new_chat("One")
    assert engine.chat(chat.id) is chat
    assert engine.find(chat.id[:10]) is chat
    with pytest.raises(ContextDeskError) as raised:
        engine.find("chat_nope")
    assert raised.value.kind is ErrorKind.NOT_FOUND


def test_trash_and_restore(engine: Engine) -> None:
    chat = engine.new_chat("Gone for a while")
    chat.delete()
    assert chat.id not in [c.id for c in engine.list_chats()]
    engine.restore_chat(chat.id)
    assert chat.id in [c.id for c in engine.list_chats()]


# -- reading and planning -----------------------------------------------------------------------


def test_the_history_is_repaired_for_the_api_and_the_transcript_kept(engine: Engine) -> None:
    chat = engine.new_chat()
    broken = [u("read it"), a(call("toolu_1")), u("and?"), a("done ")]  # no result, trailing space
    engine.store.append_messages(chat.id, broken)
    assert validate(chat.messages())  # stored as it was said
    history = chat.history()
    assert not validate(history)
    assert [m.text for m in chat.messages()] == [m.text for m in broken]


def test_the_plan_ends_with_the_draft(engine: Engine) -> None:
    chat = demo(engine, 2)
    body = chat.plans.plan("What is the refund?").request.body()
    assert body["messages"][-1]["content"][-1]["text"] == "What is the refund?"
    assert (
        chat.plans.plan("   ").request.body()["messages"]
        == chat.plans.plan().request.body()["messages"]
    )


# -- facts -------------------------------------------------------------------------------------


def pinned(chat: Chat, text: str) -> Fact:
    """Pin `text`; the fact it made (what the action says it changed)."""
    changes = chat.memory.pin(text)
    assert changes.fact is not None
    assert changes.state is not None
    assert changes.fact in changes.state.facts
    assert changes.replan
    return changes.fact


def test_facts_are_pinned_edited_moved_deleted_and_restored(engine: Engine) -> None:
    chat = demo(engine, 2)
    first, second = chat.state.facts
    fact = pinned(chat, "  Ticket 5521 is escalated  ")
    assert fact.text == "Ticket 5521 is escalated"
    assert "Ticket 5521 is escalated" in system_text(chat)
    chat.memory.edit_fact(fact, "Ticket 5521 is escalated to tier 2")
    chat.memory.move_fact(chat.memory.fact(fact.id), 0)
    assert chat.state.facts[0].text == "Ticket 5521 is escalated to tier 2"
    chat.memory.unpin(first)
    assert first.id not in [f.id for f in chat.state.facts]
    chat.memory.restore_fact(first, 1)
    assert [f.id for f in chat.state.facts] == [fact.id, first.id, second.id]
    assert engine.store.context_state(chat.id) == chat.state  # every change is saved
    with pytest.raises(ContextDeskError, match="Nothing to pin"):
        chat.memory.pin("  ")
    with pytest.raises(ContextDeskError, match="no fact has this id"):
        chat.memory.fact("fact_nope")


def test_suggested_facts_are_sent_only_once_accepted(engine: Engine) -> None:
    chat = demo(engine, 2)
    state = chat.state
    for text in ("Customer id C-77", "Prefers French"):
        state = state.pin(Fact(text, source=FactSource.MODEL, pending=True))
    engine.store.save_context_state(chat.id, state)  # as Claude's pin_fact tool suggests
    chat.reload()
    assert "C-77" not in system_text(chat)
    suggested, rejected = (f for f in chat.state.facts if f.pending)
    chat.memory.accept_fact(suggested, "Customer id C-77 (CRM)")
    chat.memory.unpin(rejected)
    assert "Customer id C-77 (CRM)" in system_text(chat)
    assert "Prefers French" not in system_text(chat)


# -- what is sent --------------------------------------------------------------------------------


def test_excluding_a_message_and_clearing_old_results_change_the_request(engine: Engine) -> None:
    chat = demo(engine, 12)
    messages = chat.messages()
    before = chat.plans.plan(history=messages)
    chat.memory.set_excluded(messages[1], True)
    assert chat.memory.is_excluded(messages[1])
    excluded = chat.plans.plan(history=messages)
    assert excluded.estimated_input < before.estimated_input
    chat.memory.set_excluded(messages[1], False)
    ids = chat.memory.old_tool_results(messages)
    assert ids
    preview = chat.plans.plan_if(messages, state=chat.state.clear_results(ids))
    chat.memory.clear_tool_results(ids)
    cleared = chat.plans.plan(history=messages)
    assert cleared.estimated_input == preview.estimated_input < before.estimated_input


# -- compaction -------------------------------------------------------------------------------


def test_compaction_preview_apply_and_undo(engine: Engine, simulator: SimulatorServer) -> None:
    chat = demo(engine, 12)
    chat.setup.set_settings(replace(chat.settings, keep_recent_turns=3))
    original = json.dumps(chat.plans.plan().request.body(), sort_keys=True)
    preview = chat.memory.preview_compaction("keep every amount")
    assert preview.text.startswith("[Simulated summary")
    assert chat.state.summaries == ()  # nothing changes until it is applied
    chat.memory.apply_compaction(preview, "Edited: amounts 100.00–110.10 EUR were promised.")
    body = json.dumps(chat.plans.plan().request.body(), ensure_ascii=False)
    assert "Edited: amounts 100.00–110.10 EUR were promised." in body
    assert engine.store.context_state(chat.id).active_summary is not None
    chat.memory.undo_compaction()
    assert json.dumps(chat.plans.plan().request.body(), sort_keys=True) == original
    assert simulator.message_requests()[-1].headers.get("x-contextdesk-purpose") == "compaction"


def test_every_slow_action_finishes_however_it_ends(
    engine: Engine, simulator: SimulatorServer
) -> None:
    """A preview that fails, a turn and a count run through the same steps (chats/slow.py):
    each is recorded and finished — the failed summary request is in the ledger too."""
    chat = demo(engine, 12)
    chat.setup.set_settings(replace(chat.settings, keep_recent_turns=3))
    simulator.queue(Fault(FaultKind.SERVER_ERROR, should_retry=False))
    with pytest.raises(ContextDeskError):
        chat.memory.preview_compaction()
    assert [(r.purpose, r.status) for r in chat.costs.sent_requests()] == [("compaction", "error")]
    chat.turns.send("One more question?", ScriptedApprover())
    assert [r.purpose for r in chat.costs.sent_requests()] == ["compaction", "chat"]
    plan = chat.plans.plan("And another?")  # (a request to count ends with the user's words)
    counting = chat.plans.counting(plan)
    assert counting is not None
    assert run_here(counting) == Changes()
    assert counting.counted is not None
    assert counting.counted.exact_input is not None
    assert counting.counted.exact_input.exact


def test_auto_compaction_paused_by_the_breaker_is_resumed(engine: Engine) -> None:
    chat = demo(engine, 2)
    failed = chat.state.compaction_failed("a").compaction_failed("b").compaction_failed("c")
    engine.store.save_context_state(chat.id, failed)
    chat.reload()
    assert chat.state.breaker.paused
    chat.memory.resume_auto_compaction()
    assert not engine.store.context_state(chat.id).breaker.paused


# -- forks -------------------------------------------------------------------------------------


def test_a_fork_leaves_the_original(engine: Engine) -> None:
    chat = demo(engine, 3)
    messages = chat.messages()
    fork = engine.fork(chat, messages[1])
    assert fork.title == f"{chat.title} (fork)"
    assert [m.text for m in fork.messages()] == [m.text for m in messages[:2]]
    assert [f.text for f in fork.state.facts] == [f.text for f in chat.state.facts]
    assert [m.id for m in chat.messages()] == [m.id for m in messages]


# -- turns -------------------------------------------------------------------------------------


def test_a_sent_message_is_answered_stored_and_names_the_chat(
    engine: Engine, simulator: SimulatorServer
) -> None:
    chat = engine.new_chat()
    finished = chat.turns.send("My order #88213 cost 847.20.", ScriptedApprover())
    assert finished.error is None
    stored = chat.messages()
    assert [m.role for m in stored] == ["user", "assistant"]
    assert stored[-1].text.startswith("[Simulated reply")
    assert chat.title == "My order #88213 cost 847.20."
    assert engine.store.chat(chat.id).title == chat.title
    assert not chat.busy


def test_the_demo_s_simulator_keeps_no_request_it_answered(engine: Engine) -> None:
    """Each request's parsed body was held for as long as the app ran (megabytes each
    in a long demo chat); only tests read them, and they ask for them."""
    chat = engine.new_chat()
    assert chat.turns.send("hello", ScriptedApprover()).error is None
    assert chat.turns.send("hello again", ScriptedApprover()).error is None
    assert engine.connection.simulator is not None
    assert engine.connection.simulator.received == []


def test_retry_leaves_a_failed_reply_out_and_nothing_to_retry_says_so(
    engine: Engine, simulator: SimulatorServer
) -> None:
    chat = engine.new_chat()
    simulator.queue(Fault(FaultKind.CUT_OFF, after_events=4, reply=Reply.text("Half an answer")))
    finished = chat.turns.send("hello", ScriptedApprover())
    assert finished.error is not None
    cut = chat.messages()[-1]
    assert cut.status is MessageStatus.ERROR  # kept, with what arrived
    turn = chat.turns.start(None, ScriptedApprover())
    for event in turn.events(CancelToken()):
        turn.record(event)
    turn.finish()
    turn.release_thread()
    assert chat.memory.is_excluded(cut)
    assert chat.messages()[-1].status is MessageStatus.COMPLETE
    with pytest.raises(ContextDeskError) as raised:
        chat.turns.start(None, ScriptedApprover())
    assert raised.value.kind is ErrorKind.NOTHING_TO_RETRY
    assert engine.store.answering_pid(chat.id) is None  # no turn began: no mark is left


def test_edits_made_during_a_turn_apply_when_it_ends(
    engine: Engine, simulator: SimulatorServer
) -> None:
    chat = demo(engine, 2)
    turn = chat.turns.start(user_text("go on"), ScriptedApprover())
    assert chat.busy
    with pytest.raises(ContextDeskError, match="still answering"):
        chat.turns.start(user_text("and more"), ScriptedApprover())
    chat.memory.pin("Pinned mid-reply")
    assert "Pinned mid-reply" not in [f.text for f in chat.state.facts]  # queued
    for event in turn.events(CancelToken()):
        turn.record(event)
        if isinstance(event, TurnFinished):
            assert event.error is None
    turn.finish()
    turn.release_thread()
    assert not chat.busy
    assert "Pinned mid-reply" in [f.text for f in engine.store.context_state(chat.id).facts]


def test_a_tool_call_asks_and_its_result_is_stored(
    engine: Engine, simulator: SimulatorServer, tmp_path: Path
) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "notes.md").write_text("Invoice #88213: refund 847.20 EUR.")
    engine.change_settings({"workspace": str(folder)})
    chat = engine.new_chat()
    simulator.queue(
        Reply.tools(("toolu_1", "read_file", {"path": "notes.md"})), Reply.text("It says 847.20.")
    )
    approver = ScriptedApprover([ApprovalDecision.ALLOW_ONCE])
    finished = chat.turns.send("What do my notes say?", approver)
    assert finished.error is None
    results = [b for m in chat.messages() for b in m.blocks if isinstance(b, ToolResultBlock)]
    assert results
    assert "847.20" in str(results[0].content)


# -- files -------------------------------------------------------------------------------------


def test_export_and_import_round_trip(engine: Engine, tmp_path: Path) -> None:
    chat = demo(engine, 2)
    target = tmp_path / "out" / "chat.json"
    chat.export_to(target)
    doc = json.loads(target.read_text())
    assert doc["format"] == "contextdesk.chat"
    assert doc["request"] == chat.plans.planning("", chat.messages())().request.body()
    assert chat.export("md").startswith("# ")
    imported = engine.import_file(target)
    assert [m.text for m in imported.chat.messages()] == [m.text for m in chat.messages()]
    with pytest.raises(ContextDeskError) as raised:
        chat.export_to(Path("/proc/not-writable/chat.json"))
    assert raised.value.kind is ErrorKind.IO
    with pytest.raises(ContextDeskError) as raised:
        engine.import_file(tmp_path / "missing.json")
    assert raised.value.kind is ErrorKind.IO


# -- another program, the same data folder ------------------------------------------------------


def test_a_write_by_another_program_is_noticed_once(engine: Engine) -> None:
    chat = engine.new_chat()
    assert not engine.changed_elsewhere()
    chat.memory.pin("our own write")
    assert not engine.changed_elsewhere()  # this connection's writes do not count
    other = Engine.open(engine.paths.data.parent)
    try:
        other.chat(chat.id).memory.pin("written by the command line")
    finally:
        other.close()
    assert engine.changed_elsewhere()
    assert not engine.changed_elsewhere()
    chat.reload()
    assert "written by the command line" in [f.text for f in chat.state.facts]


def test_with_a_window_open_the_command_line_leaves_its_turn_alone(tmp_path: Path) -> None:
    home = tmp_path / "home"
    window = Engine.open(home)
    chat = window.new_chat()
    window.store.append_messages(chat.id, [u("read it"), a(call("toolu_1"))])  # awaiting approval
    other = subprocess.Popen(["sleep", "30"])  # stands for the window's process
    window.store.turn_started(chat.id, other.pid)  # as its turn marks the chat
    lock = InstanceLock(window.paths.data)
    assert lock.acquire()
    try:
        cli = Engine.open(home)  # does not "recover" the window's open tool call
        try:
            assert cli.window_open
            for act in (
                lambda: cli.chat(chat.id).turns.send("me too", ScriptedApprover()),
                lambda: cli.chat(chat.id).memory.pin("a fact the turn's end would overwrite"),
            ):
                with pytest.raises(ContextDeskError, match="answering elsewhere") as raised:
                    act()
                assert raised.value.kind is ErrorKind.ALREADY_RUNNING
                assert f"process {other.pid}" in raised.value.message
            assert len(cli.chat(chat.id).messages()) == 2
            assert cli.chat(chat.id).state.facts == ()
        finally:
            cli.close()
    finally:
        lock.release()
        other.kill()
        other.wait()
    # That process has ended without clearing its mark (a crash): the chat is usable.
    window.store.append_message(chat.id, u(result("toolu_1")))
    window.chat(chat.id).memory.pin("after the crash")
    window.close()
    reopened = Engine.open(home)  # no window now: a start-up repair would have run
    assert not reopened.window_open
    assert len(reopened.chat(chat.id).messages()) == 3
    reopened.close()


def test_an_edit_made_elsewhere_is_kept_when_this_one_saves(engine: Engine) -> None:
    chat = engine.new_chat()
    chat.memory.pin("ours")
    other = Engine.open(engine.paths.data.parent)  # the command line, beside the window
    try:
        other.chat(chat.id).memory.pin("theirs")
    finally:
        other.close()
    chat.memory.pin("ours again")  # without reloading first
    assert [f.text for f in engine.store.context_state(chat.id).facts] == [
        "ours",
        "theirs",
        "ours again",
    ]


def test_a_second_lock_on_the_folder_is_refused(tmp_path: Path) -> None:
    first, second = InstanceLock(tmp_path), InstanceLock(tmp_path)
    assert first.acquire()
    assert not second.acquire()
    assert second.held_elsewhere()
    assert second.owner() is not None
    first.release()
    assert second.acquire()
    second.release()


def test_the_database_is_shared_safely_with_the_wal_reader(engine: Engine) -> None:
    chat = demo(engine, 3)
    read = engine.reader(chat.id)
    assert [m.id for m in read()] == [m.id for m in chat.messages()]
    with sqlite3.connect(engine.paths.database) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_chats_token_counts_are_kept_and_its_next_first_plan_reads_them(
    tmp_path: Path,
) -> None:
    """A first plan counts every message (8 s at 100,000 messages); the counts are kept
    with the blocks, and the next start's first plan reads them instead, to the same
    figures. A block written again (a reply saved as it streams) is counted afresh."""
    home = tmp_path / "home"
    first = Engine.open(home, demo=True)
    chat = demo(first, 5)
    history = first.reader(chat.id)()
    planned = first.chat(chat.id).plans.plan(history=history)
    first.changed_elsewhere()
    assert first.keep_counts(history) == len(history)
    assert first.keep_counts(history) == 0  # kept once
    assert not first.changed_elsewhere()  # its own worker's write: no reason to reload
    other = Engine.open(home, demo=True)  # another program
    other.store.set_pinned(chat.id, True)
    other.close()
    assert first.changed_elsewhere()
    assert set(first.store.block_counts(chat.id)) == {m.id for m in history}
    first.close()

    again = Engine.open(home, demo=True)  # a new start: a new counter
    history = again.reader(chat.id)()
    replanned = again.chat(chat.id).plans.plan(history=history)
    assert again.counter.to_store(history) == {}  # none of the history was counted again
    assert replanned.estimated_input == planned.estimated_input
    assert [replanned.block_status(m, j).tokens for m in history for j in range(len(m.blocks))] == [
        planned.block_status(m, j).tokens for m in history for j in range(len(m.blocks))
    ]
    last = history[-1]
    again.store.checkpoint(chat.id, replace(last, blocks=(TextBlock("Rewritten."),)))
    assert last.id not in again.store.block_counts(chat.id)
    again.close()


def test_a_reply_whose_thinking_is_left_out_is_not_counted_and_stored_again_each_plan(
    engine: Engine,
) -> None:
    """The request's version of the reply (its thinking left out) is counted as sent; the
    reply's own counts, stored once, stay as they were."""
    chat = engine.new_chat()
    # mid-turn (a tool's result last), so its thinking would go with it; but it was
    # written by a model this one cannot read the thinking of
    step = replace(a(think("weighing it up"), call("t1")), model="claude-from-elsewhere")
    engine.store.append_messages(chat.id, [u("Why?"), step, u(result("t1"))])
    history = engine.reader(chat.id)()
    plans = engine.chat(chat.id).plans
    for kept in (3, 0):  # as the window plans: the next request, then the chat's size
        planned = plans.plan(history=history)
        assert planned.block_status(history[1], 0).state is BlockState.NOT_SENT
        plans.transcript_tokens(history)
        assert engine.keep_counts(history) == kept


def test_an_imported_chat_opens_with_the_counts_its_import_made(
    engine: Engine, tmp_path: Path
) -> None:
    """Importing describes the chat (its size, its next request's price), which counts
    every message; those counts are kept, so that opening it does not count it again."""
    target = tmp_path / "chat.json"
    demo(engine, 3).export_to(target)
    (imported,) = engine.import_path(target).chats
    kept = engine.store.block_counts(imported.chat.id)
    assert set(kept) == {m.id for m in engine.chat(imported.chat.id).messages()}
    again = engine.reader(imported.chat.id)()
    engine.chat(imported.chat.id).plans.plan(history=again)
    assert engine.counter.to_store(again) == {}  # nothing was counted afresh


def test_exporting_an_open_chat_leaves_its_window_s_counts_as_they_were(engine: Engine) -> None:
    """The export reads the chat again (new objects, the same blocks): the window's next
    plan neither counts its history again nor stores its counts again."""
    chat = demo(engine, 3)
    history = engine.reader(chat.id)()  # the window's
    chat.plans.plan(history=history)
    chat.plans.transcript_tokens(history)
    assert engine.keep_counts(history) == len(history)
    chat.export()
    chat.plans.plan(history=history)
    chat.plans.transcript_tokens(history)
    assert engine.keep_counts(history) == 0


def test_importing_a_long_chat_of_ours_says_how_far_it_is_and_can_be_stopped(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 100,000-message chat's file takes seconds to read: the import says how far it
    is, and Stop leaves nothing of it."""
    from desktop_app.storage.foreign import streaming

    monkeypatch.setattr(streaming, "CHUNK", 512)
    target = tmp_path / "chat.json"
    demo(engine, 4).export_to(target)
    chats = len(engine.list_chats())
    told: list[tuple[str, float]] = []

    def says(words: str, share: float, *, stop_at: float = 2.0) -> bool:
        told.append((words, share))
        return share < stop_at

    stopped = engine.import_path(target, progress=functools.partial(says, stop_at=0.5))
    assert stopped.cancelled
    assert stopped.chats == ()
    assert len(engine.list_chats()) == chats  # nothing of it stored
    told.clear()
    done = engine.import_path(target, progress=says)
    assert not done.cancelled
    reading = [share for words, share in told if words == "Reading chat.json…"]
    assert len(reading) > 3
    assert reading == sorted(reading)
    assert reading[-1] == 1.0
    assert told[-1][0].startswith("Counting the tokens of")
    with pytest.raises(ContextDeskError, match="Cannot read the file"):
        engine.import_path(tmp_path / "missing.json")


def test_a_reader_leaves_a_reply_another_process_is_writing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    sender = Engine.open(home)  # stands for `contextdesk send`, mid-reply
    chat = sender.new_chat()
    sender.store.append_message(chat.id, user_text("Tell me a story"))
    streaming = Message("assistant", (TextBlock("Once upon"),), status=MessageStatus.STREAMING)
    sender.store.checkpoint(chat.id, streaming)
    writer = subprocess.Popen(["sleep", "30"])
    sender.store.turn_started(chat.id, writer.pid)
    try:
        reader = Engine.open(home)  # `contextdesk chat show`, meanwhile
        assert reader.chat(chat.id).messages()[-1].status is MessageStatus.STREAMING
        reader.close()
    finally:
        writer.kill()
        writer.wait()
    after_a_crash = Engine.open(home)  # the writer died: its reply is repaired now
    assert after_a_crash.chat(chat.id).messages()[-1].status is MessageStatus.INTERRUPTED
    after_a_crash.close()
    sender.close()


def test_how_long_a_reply_may_take_is_a_setting_the_connection_uses(engine: Engine) -> None:
    engine.change_settings({"first_word_timeout": "300", "quiet_timeout": "120"})
    backend = engine.connection.backend()
    assert isinstance(backend, AnthropicBackend)
    deadlines = backend.deadlines
    assert (deadlines.first_event_s, deadlines.idle_s) == (300, 120)
    with pytest.raises(BadSetting, match="between 5 and 3,600"):
        engine.change_settings({"quiet_timeout": "0"})


def test_imported_chats_get_titles_of_their_own(engine: Engine, tmp_path: Path) -> None:
    body = {"messages": [{"role": "user", "content": "Plan the Lisbon trip"}]}
    names = []
    for _ in range(3):
        names.append(engine.import_bytes(json.dumps(body).encode()).chat.title)
    assert names == ["Plan the Lisbon trip", "Plan the Lisbon trip (2)", "Plan the Lisbon trip (3)"]
    wordless = tmp_path / "support-ticket-5521.json"
    wordless.write_text(
        json.dumps(
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "image",
                                "source": {
                                    "type": "base64",
                                    "media_type": "image/png",
                                    "data": PNG_1PX,
                                },
                            }
                        ],
                    }
                ]
            }
        )
    )
    assert engine.import_file(wordless).chat.title == "support-ticket-5521"  # from the file name


def test_an_imported_request_goes_on_as_its_author_sent_it(
    engine: Engine, simulator: SimulatorServer
) -> None:
    """Import keeps the request's thinking, max_tokens, client tools, tool_choice and
    metadata; the next turn sends them (and the simulator, as strict as the API, takes it)."""
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 8000,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "tools": [{"name": "lookup", "description": "Find", "input_schema": {"type": "object"}}],
        "tool_choice": {"type": "auto"},
        "metadata": {"user_id": "u-7"},
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello."}],
    }
    chat = engine.import_bytes(json.dumps(body).encode()).chat
    expected = chat.plans.plan("and now?").request.body()
    assert expected["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert expected["max_tokens"] == 8000
    assert expected["tool_choice"] == {"type": "auto"}
    assert expected["metadata"] == {"user_id": "u-7"}
    assert "lookup" in [t["name"] for t in expected["tools"]]
    finished = chat.turns.send("and now?", ScriptedApprover())
    assert finished.error is None
    sent = simulator.message_requests()[-1].body
    assert {k: v for k, v in sent.items() if k != "stream"} == expected


def test_a_facts_last_sent_is_the_last_request_that_carried_it(
    engine: Engine, simulator: SimulatorServer
) -> None:
    chat = engine.new_chat()
    first = pinned(chat, "The order number is #88213.")
    assert chat.costs.facts_last_sent(chat.state.facts) == {}  # pinned, not sent yet
    chat.turns.send("hello", ScriptedApprover())
    second = pinned(chat, "Refunds take 5 days.")
    sent = chat.costs.facts_last_sent(chat.state.facts)
    assert sent[first.id][0] == 1
    assert second.id not in sent  # pinned after the last request: not sent, whatever the turn
    chat.turns.send("and then?", ScriptedApprover())
    sent = chat.costs.facts_last_sent(chat.state.facts)
    assert (sent[first.id][0], sent[second.id][0]) == (2, 2)
    for number, fact in ((1, first), (2, first), (2, second)):  # the ledger's bodies agree
        assert fact.render() in json.dumps(
            chat.costs.sent_body(number)["system"], ensure_ascii=False
        )
    assert second.render() not in json.dumps(chat.costs.sent_body(1), ensure_ascii=False)


def test_a_change_says_what_it_does_to_the_next_turns_cost(tmp_path: Path) -> None:
    """Clearing early tool results breaks the prompt cache where the first one was: the
    tokens after it are written to the cache again (at the write price), the rest read."""
    engine = Engine.open(tmp_path / "priced")  # Anthropic's API: prompt caching on
    try:
        chat = engine.new_chat("Orders", model="claude-haiku-4-5")
        history: list[Message] = []
        for n in range(12):
            history += [
                u(f"Look up order {n}"),
                a(call(f"toolu_{n}", "read_file")),
                u(result(f"toolu_{n}", "order line " * 400)),
                a(f"Order {n} is fine."),
            ]
        engine.store.append_messages(chat.id, history)
        messages = chat.messages()
        before = chat.plans.plan(history=messages)
        after = chat.plans.plan_if(
            messages, state=chat.state.clear_results(chat.memory.old_tool_results(messages))
        )
        change = chat.costs.of_change(before, after)
        assert change is not None
        assert (change.currency, change.prompt_caching, change.estimated) == ("USD", True, True)
        # Haiku 4.5, per million tokens: $0.10 read from the cache, $1.25 written to it.
        assert change.as_is == pytest.approx(before.estimated_input * 0.10 / 1e6)
        rewritten = change.rewritten_tokens
        assert 0 < rewritten < after.estimated_input  # from the first cleared result on
        kept = after.estimated_input - rewritten
        assert change.with_change == pytest.approx((kept * 0.10 + rewritten * 1.25) / 1e6)
        assert engine.new_chat("Local", model="llama3").costs.of_change(before, after) is None
        # Without prompt caching every input token is at the input price ($1), none rewritten.
        uncached = replace(after, request=replace(after.request, prompt_caching=False))
        plain = chat.costs.of_change(before, uncached)
        assert plain is not None
        assert (plain.prompt_caching, plain.rewritten_tokens) == (False, 0)
        assert plain.as_is == pytest.approx(before.estimated_input * 1.0 / 1e6)
        assert plain.with_change == pytest.approx(after.estimated_input * 1.0 / 1e6)
        # Excluding the latest answer rewrites only what follows it: a few tokens.
        late = chat.costs.of_state(messages, chat.state.exclude_message(messages[-1].id, True))
        early = chat.costs.of_state(messages, chat.state.exclude_message(messages[1].id, True))
        assert late is not None
        assert early is not None
        assert late.rewritten_tokens < early.rewritten_tokens
        # The exclusion itself says the same, worked out before it is made (both faces
        # show this value: the window's note, the command line's line).
        made = chat.memory.set_excluded(messages[1], True, history=messages)
        assert made.cost == early
        assert messages[1].id in engine.store.context_state(chat.id).excluded_messages
        assert chat.memory.set_excluded(messages[1], False).cost is None  # (not asked)
    finally:
        engine.close()


def test_a_compaction_preview_says_what_it_does_to_the_next_turns_cost(tmp_path: Path) -> None:
    from desktop_app.context.compaction import CompactionPreview, apply_preview, plan_span

    engine = Engine.open(tmp_path / "priced")
    try:
        chat = engine.new_chat("Long", model="claude-haiku-4-5")
        history = [m for n in range(14) for m in (u(f"Question {n} " * 60), a(f"Answer {n} " * 80))]
        engine.store.append_messages(chat.id, history)
        messages = chat.messages()
        span = plan_span(messages, chat.state, chat.settings)
        preview = CompactionPreview(span, "Questions 0–3 were answered.", "m", "", 5000, 12, ())
        change = chat.costs.of_compaction(preview, messages)
        # The summary replaces the start of the conversation: nearly all is written anew.
        assert change is not None
        assert change.prompt_caching
        after = chat.plans.plan_if(messages, state=apply_preview(chat.state, preview))
        assert 0 < change.rewritten_tokens <= after.estimated_input
        kept = after.estimated_input - change.rewritten_tokens
        assert change.with_change == pytest.approx(
            (kept * 0.10 + change.rewritten_tokens * 1.25) / 1e6
        )
    finally:
        engine.close()


def test_a_replys_cost_is_its_requests_usage_priced_by_the_table(
    engine: Engine, simulator: SimulatorServer
) -> None:
    from desktop_app.storage import ledger

    chat = engine.new_chat()
    chat.turns.send("hello", ScriptedApprover())
    reply = chat.messages()[-1]
    sent = chat.costs.sent_requests()[-1]
    # Its usage as the API reports it with a prompt cache (the simulator's has none): four
    # different counts, so that no one can stand in for another.
    usage = Usage(
        input_tokens=1_200,
        output_tokens=340,
        cache_creation_input_tokens=5_000,
        cache_read_input_tokens=80_000,
    )
    ledger.finish(
        engine.store.db, sent.id, seconds=1.0, usage=usage, status=sent.status, reply_id=reply.id
    )
    cost = chat.costs.reply_cost(reply.id)
    assert cost is not None
    assert (cost.model, cost.currency, cost.cost) == ("contextdesk-demo", "USD", None)  # no price
    assert (
        cost.input_tokens,
        cost.cache_creation_input_tokens,
        cost.cache_read_input_tokens,
        cost.output_tokens,
    ) == (1_200, 5_000, 80_000, 340)
    engine.set_price("contextdesk-demo", {"input": 3, "output": 15})  # cache: 3.75 / 0.30
    priced = chat.costs.reply_cost(reply.id)
    assert priced is not None
    assert priced.cost == pytest.approx((1_200 * 3 + 5_000 * 3.75 + 80_000 * 0.30 + 340 * 15) / 1e6)
    assert chat.costs.reply_cost("no-such-reply") is None  # no record of its request


def test_a_request_refused_before_any_reply_is_in_the_ledger_as_failed(
    engine: Engine, simulator: SimulatorServer
) -> None:
    chat = engine.new_chat()
    simulator.queue(Fault(FaultKind.SERVER_ERROR))  # (the demo backend does not retry)
    finished = chat.turns.send("hello", ScriptedApprover())
    assert finished.error is not None
    (sent,) = chat.costs.sent_requests()
    assert (sent.status, sent.usage) == ("error", None)
    assert sent.seconds is not None
    chat.turns.send("and again", ScriptedApprover())  # it answers now
    assert [r.status for r in chat.costs.sent_requests()] == ["error", "complete"]
