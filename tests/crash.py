"""`kill -9` while `contextdesk send` streams: shared by the suite (a few kills) and
tests/perf/kill_send.py (200).

Each round: start `contextdesk send` as a real process against the simulator, wait until
the simulator has its request (the user's message is stored before that), kill it at a
random moment inside the stream, then check the database: integrity ok, nothing that
was stored is lost, the cut reply is marked interrupted after recovery, and the
history is one the API accepts.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from desktop_app.api.simulator import Reply, SimulatorServer
from desktop_app.core.history import merge_same_role
from desktop_app.core.messages import MessageStatus, user_text
from desktop_app.core.protocol import validate
from desktop_app.storage.store import ChatStore

LONG_REPLY = " ".join(f"word{i}" for i in range(400))  # ~40 frames


@dataclass
class Round:
    killed_after_s: float
    messages_before: int
    messages_after: int
    interrupted: int


def send_process(
    home: Path, chat_id: str, text: str, sim: SimulatorServer, *, pipe: bool = False
) -> subprocess.Popen[bytes]:
    env = {**os.environ, "ANTHROPIC_API_KEY": "crash-test-key", "ANTHROPIC_BASE_URL": sim.base_url}
    output = subprocess.PIPE if pipe else subprocess.DEVNULL
    return subprocess.Popen(
        [sys.executable, "-m", "desktop_app", "--home", str(home), "send", chat_id, text],
        env=env,
        stdout=output,
        stderr=output,
    )


def one_round(home: Path, chat_id: str, sim: SimulatorServer, rng: random.Random, n: int) -> Round:
    store = ChatStore.open(home / "data" / "contextdesk.sqlite3")
    before = store.messages(chat_id)
    store.close()
    sim.queue(Reply.text(f"Reply {n}: {LONG_REPLY}"))
    seen = len(sim.message_requests())
    process = send_process(home, chat_id, f"message {n}", sim)
    deadline = time.monotonic() + 60
    while (
        len(sim.message_requests()) == seen
        and process.poll() is None
        and time.monotonic() < deadline
    ):
        time.sleep(0.01)
    wait = rng.uniform(0, 40 * sim.state.frame_delay_s)
    time.sleep(wait)
    process.send_signal(signal.SIGKILL)
    process.wait()

    store = ChatStore.open(home / "data" / "contextdesk.sqlite3")
    try:
        assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        store.recover()
        after = store.messages(chat_id)
        assert [m.id for m in after][: len(before)] == [m.id for m in before], (
            "a stored message was lost"
        )
        assert not [m for m in after if m.status is MessageStatus.STREAMING]
        assert after[len(before)].text == f"message {n}", "the acknowledged user message is missing"
        assert validate(list(merge_same_role([*after, user_text("next")]))) == []
        interrupted = sum(1 for m in after[len(before) :] if m.status is MessageStatus.INTERRUPTED)
        return Round(wait, len(before), len(after), interrupted)
    finally:
        store.close()


def run(home: Path, rounds: int, seed: int = 7) -> list[Round]:
    rng = random.Random(seed)
    home.mkdir(parents=True, exist_ok=True)
    with SimulatorServer() as sim:
        sim.state.frame_delay_s = 0.02
        chat_id = new_chat(home)
        results = [one_round(home, chat_id, sim, rng, n) for n in range(rounds)]
        sim.state.frame_delay_s = 0.0
        sim.queue(Reply.text("All good."))
        final = send_process(home, chat_id, "are you still there?", sim)
        assert final.wait(60) == 0, "the next send after the kills failed"
    return results


def new_chat(home: Path) -> str:
    store = ChatStore.open(_ensure(home))
    try:
        return store.create_chat("crash test").id
    finally:
        store.close()


def _ensure(home: Path) -> Path:
    (home / "data").mkdir(parents=True, exist_ok=True)
    return home / "data" / "contextdesk.sqlite3"
