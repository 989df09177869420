"""A few `kill -9`s mid-stream in the suite; tests/perf/kill_send.py runs 200."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from desktop_app.api.simulator import Reply, SimulatorServer
from desktop_app.core.messages import MessageStatus
from desktop_app.storage.store import ChatStore
from tests import crash


@pytest.mark.timeout(180)
def test_kill_minus_nine_while_streaming_loses_nothing(tmp_path: Path) -> None:
    rounds = crash.run(tmp_path / "home", rounds=3)
    assert len(rounds) == 3
    assert all(r.messages_after >= r.messages_before + 1 for r in rounds)
    assert sum(r.interrupted for r in rounds) >= 1  # at least one reply was really cut


@pytest.mark.timeout(120)
def test_ctrl_c_while_streaming_keeps_the_reply_as_interrupted(tmp_path: Path) -> None:
    home = tmp_path / "home"
    chat_id = crash.new_chat(home)
    with SimulatorServer() as sim:
        sim.state.frame_delay_s = 0.05
        sim.queue(Reply.text("Once upon a time " * 400))
        process = crash.send_process(home, chat_id, "Tell me a long story", sim, pipe=True)
        assert process.stdout is not None
        first = process.stdout.read(40)  # words are arriving
        assert first
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    assert process.returncode == 130
    assert b"Traceback" not in err
    assert b"Stopped" in err
    store = ChatStore.open(home / "data" / "contextdesk.sqlite3")
    try:
        reply = store.messages(chat_id)[-1]
    finally:
        store.close()
    assert reply.role == "assistant"
    assert reply.status is MessageStatus.INTERRUPTED
    assert reply.text.startswith("Once upon a time")
