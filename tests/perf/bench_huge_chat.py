"""A 100,000-message chat against a 100-message one (issue "Flat as it grows"), in a
process of its own so that its memory is its own:

    .venv/bin/python tests/perf/bench_huge_chat.py [--json FILE]

Targets: appending costs ≤ 1.5× appending to a 100-message chat; open to first paint
≤ 1.5× the small chat's (medians, interleaved); resident memory after opening and
planning it ≤ 300 MB — in a process that started as a user's does, over the data folder
the chat is in (`memory_after_opening`: not this one, which made 200,000 messages to measure
appending and the chat itself, and keeps what the allocator kept of them); scrolling
toward the top without a repaint over 33 ms; a search within it; a Send in it without
a pause of the window over 100 ms; the plan after a turn
and the ledger's insert of its request at ≈9,300 and ≈93,000 messages ≤ 1.5× at ≈93;
exporting it to a file
and importing that file back (`contextdesk export`, `contextdesk import`, each in a fresh
process: `peak_of.py`) with a peak of ≤ 300 MB — the file is ~90 MB, written and read
message by message. The first plan's time is reported (no target yet: every message's
tokens are counted then).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop_app.chats import Engine
from desktop_app.core.blocks import TextBlock
from desktop_app.core.messages import Message, user_text
from desktop_app.core.transcript import Snapshots
from desktop_app.demo_chat import create_demo_chat
from desktop_app.storage.ledger import RequestRecorder
from desktop_app.storage.store import ChatStore
from desktop_app.ui.conversation.session import ChatSession
from desktop_app.ui.gui import make_app
from desktop_app.ui.main_window import MainWindow
from tests.perf.bench_gui import Heartbeat, open_long_chat, resident_mb, spin, wait_for
from tests.perf.bench_storage import append_cost
from tests.perf.report import Row, report

HUGE_TURNS = 40_000  # ≈93,000 messages: a demo turn is a question, a tool step and a reply
MID_TURNS = 4_000  # ≈9,300 messages
SMALL_TURNS = 40  # ≈100 messages
SCROLL_STEPS = 60
SETTLE_S = 5.0


def scroll_up(window: MainWindow) -> float:
    """Page up SCROLL_STEPS times from the newest messages; the slowest repaint, s."""
    bar = window.pane.messages.verticalScrollBar()
    viewport = window.pane.messages.viewport()
    slowest = 0.0
    for _ in range(SCROLL_STEPS):
        started = time.perf_counter()
        bar.setValue(bar.value() - bar.pageStep())
        viewport.repaint()
        slowest = max(slowest, time.perf_counter() - started)
        spin(0.01)  # older messages load between steps, as they do under a user's wheel
    return slowest


# The fresh process of `memory_after_opening`: it loads Qt as the app does first
# (`load_qt`, as `python -m desktop_app` does). Else PySide's import hook stays, the source
# of every module imported later — the SDK's ~3,600 — is read into `linecache`, and ~20 MB
# of it stayed whenever the first plan's clean-up had run before the SDK had loaded.
OPEN_AND_PLAN = """
import sys
sys.path.insert(0, sys.argv[1])
from desktop_app.ui.qt_loading import load_qt
load_qt()
from tests.perf.bench_huge_chat import open_and_plan
open_and_plan(sys.argv[2], sys.argv[3])
"""


def memory_after_opening(home: str, chat_id: str) -> float:
    """A fresh process's resident memory, MB, once its window has opened and planned the
    chat `chat_id` of the data folder `home` (and the SDK and the highlighting loaded)."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run(
        [sys.executable, "-c", OPEN_AND_PLAN, root, home, chat_id],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        check=True,
    )
    return float(done.stdout.split()[-1])


def per_turn_costs(engine: Engine, chat_id: str, turns: int = 5) -> tuple[float, float]:
    """Medians over `turns` turns, s, as a window that has planned the chat pays them:
    the plan after a turn (the next request, with the turn's question and answer, and
    the chat's size for the list) and the ledger's insert of that request (prepared,
    then written, after the request before it)."""
    chat = engine.chat(chat_id)
    # (each turn's transcript a snapshot of the rows, as the window's are: `Snapshots`)
    rows, snapshots = list(engine.reader(chat_id)()), Snapshots()
    history = snapshots.of(rows)
    plans, recorder = chat.plans, RequestRecorder()
    plan = plans.plan(history=history)
    plans.transcript_tokens(history)
    recorder.record(engine.store.db, chat_id, plan.request, server="bench")
    planning, recording = [], []
    for n in range(turns):
        answer = Message("assistant", (TextBlock(f"Answer {n}."),))
        rows += (user_text(f"Question {n}?"), answer)
        history = snapshots.of(rows)
        started = time.perf_counter()
        plan = plans.plan(history=history)
        plans.transcript_tokens(history)
        planning.append(time.perf_counter() - started)
        started = time.perf_counter()
        recorder.prepare(plan.request)
        recorder.record(engine.store.db, chat_id, plan.request, server="bench")
        recording.append(time.perf_counter() - started)
    return statistics.median(planning), statistics.median(recording)


def send_in(session: ChatSession, question: str) -> tuple[float, float]:
    """Send `question` in the chat the window shows, as a user presses Send: the window's
    longest pause (the event loop's lag, ms) from Send to the plan after the reply, and
    that time, s."""
    heartbeat = Heartbeat()
    heartbeat.start()
    before = session.plan
    started = time.perf_counter()
    session.send((TextBlock(question),))
    wait_for(lambda: not session.busy and session.plan not in (before, None), timeout=600)
    took = time.perf_counter() - started
    heartbeat.stop()
    return max(heartbeat.lags, default=0.0), took


def peak_of_command(*argv: str) -> tuple[float, float]:
    """A fresh process's peak resident memory, MB, and its time, s, running one command
    of the command line (`contextdesk …`: `peak_of.py`)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("peak_of.py")), *argv],
        capture_output=True,
        text=True,
        timeout=900,
        check=True,
    )
    return float(done.stdout.split()[-1]), time.perf_counter() - started


def open_and_plan(home: str, chat_id: str) -> None:
    """(In the fresh process of `memory_after_opening`: `OPEN_AND_PLAN`.)"""
    make_app()
    engine = Engine.open(home, demo=True)
    window = MainWindow.over(engine)
    window.resize(1280, 820)
    window.show()
    engine.connection.backend()  # the simulator and the SDK, as a send would load them
    window.open_chat(chat_id)
    session = window.current
    assert session is not None
    wait_for(lambda: session.plan is not None, timeout=600)
    spin(SETTLE_S)  # its exact count asked, the highlighting warmed up
    print(f"{resident_mb():.1f}")
    window.close()
    engine.close()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:  # the store alone: append's own cost
        store = ChatStore.open(Path(folder) / "append.sqlite3")
        small_append = append_cost(store, 100)
        huge_append = append_cost(store, 100_000)
        store.close()
    make_app()
    with tempfile.TemporaryDirectory() as home:
        engine = Engine.open(home, demo=True)
        huge = create_demo_chat(engine.store, HUGE_TURNS)
        mid = create_demo_chat(engine.store, MID_TURNS)
        small = create_demo_chat(engine.store, SMALL_TURNS)
        tiny = create_demo_chat(engine.store, 2)
        window = MainWindow.over(engine)
        window.resize(1280, 820)
        window.show()
        window.open_chat(tiny.id)
        wait_for(lambda: window.current is not None and window.current.plan is not None)
        engine.connection.backend()  # the simulator and the SDK: not what is measured
        opens: dict[str, list[float]] = {huge.id: [], small.id: []}
        for _ in range(args.runs):
            for chat_id in opens:  # interleaved: a busy moment slows both alike
                window.open_chat(tiny.id)  # (each opened afresh: open_long_chat)
                opens[chat_id].append(open_long_chat(window, chat_id))
        session = window.current
        assert session is not None
        started = time.perf_counter()
        wait_for(lambda: session.plan is not None, timeout=600)
        planned = time.perf_counter() - started
        # At rest, as a reader scrolls: the plan's counts kept and its exact count asked
        # (the demo's simulator, in this process, counts ~190,000 tokens with Python)
        spin(SETTLE_S)
        slowest = scroll_up(window)
        started = time.perf_counter()
        found = engine.search("shipping fee", chat_id=huge.id)
        searched = time.perf_counter() - started
        turn_costs = {c.id: per_turn_costs(engine, c.id) for c in (small, mid, huge)}
        sends = [send_in(session, f"What time is it now ({n})?") for n in range(3)]
        window.close()
        engine.close()
        memory = memory_after_opening(home, huge.id)
        file = str(Path(home) / "huge.json")
        exporting = peak_of_command("--home", home, "export", huge.id, "-o", file)
        size_mb = Path(file).stat().st_size / 1e6
        with tempfile.TemporaryDirectory() as other:
            importing = peak_of_command("--home", other, "import", file)
    big, little = statistics.median(opens[huge.id]), statistics.median(opens[small.id])
    per_turn = [
        Row(
            f"{what} after a turn: {chat.message_count:,}-message chat / "
            f"{small.message_count}-message chat",
            turn_costs[chat.id][k] / turn_costs[small.id][k],
            "×",
            1.5,
            f"medians of 5 turns: {turn_costs[chat.id][k] * 1000:.1f} ms / "
            f"{turn_costs[small.id][k] * 1000:.1f} ms",
        )
        for k, what in enumerate(("the plan", "the ledger's insert"))
        for chat in (mid, huge)
    ]
    return report(
        "A 100,000-message chat",
        [
            Row(
                "append: 100,000-message chat / 100-message chat",
                huge_append / small_append,
                "×",
                1.5,
                f"medians: {huge_append:.2f} ms / {small_append:.2f} ms",
            ),
            Row(
                f"open {huge.message_count:,} messages / {small.message_count} messages, "
                "to first paint",
                big / little,
                "×",
                1.5,
                f"medians of {args.runs}, interleaved: {big * 1000:.0f} ms / "
                f"{little * 1000:.0f} ms",
            ),
            Row("its first plan (after the first paint, off the GUI thread)", planned, "s", None),
            *per_turn,
            Row(
                "Send, in it: the window's longest pause, to the plan after the reply",
                max(pause for pause, _took in sends),
                "ms",
                100,
                f"{len(sends)} turns; replies stored and planned after in "
                + ", ".join(f"{took * 1000:.0f}" for _pause, took in sends)
                + " ms",
            ),
            Row(
                "resident memory after opening and planning it",
                memory,
                "MB",
                300,
                "a fresh process over its data folder, its SDK loaded",
            ),
            Row(
                "export it to a file (`contextdesk export`): peak memory",
                exporting[0],
                "MB",
                300,
                f"a fresh process; {size_mb:.0f} MB written in {exporting[1]:.1f} s",
            ),
            Row(
                "import that file (`contextdesk import`): peak memory",
                importing[0],
                "MB",
                300,
                f"a fresh process, in {importing[1]:.1f} s (its first plan too)",
            ),
            Row(
                "page up from the newest: the slowest repaint",
                slowest * 1000,
                "ms",
                33,
                f"{SCROLL_STEPS} steps, {SETTLE_S:.0f} s after the first plan",
            ),
            Row(
                "search within it",
                searched * 1000,
                "ms",
                100,
                f"{len(found)} hits (at most 200 read)",
            ),
        ],
        args.json,
    )


if __name__ == "__main__":
    sys.exit(main())
