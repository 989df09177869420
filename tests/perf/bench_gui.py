"""Desktop app benchmarks (on demand), offscreen:

    .venv/bin/python tests/perf/bench_gui.py [--json FILE] [--runs 5]

Targets (the chat window issue):
- process start to the first painted window ≤ 1.0 s (median of 5 runs);
- opening a 10,000-message chat to its first paint ≤ 300 ms (median), resident memory
  after ≤ 400 MB;
- a chat list of 5,000 chats (the window issue): filled ≤ 100 ms, the slowest scroll
  step with its repaint ≤ 33 ms (two frames, as the streaming lag's p99);
- streaming 1,000 tokens/s of a reply with highlighted code blocks and a table into a
  5,000-message chat through the real SDK and simulator (issue "Flat as it grows"): the
  GUI event loop's lag, measured by a 16 ms heartbeat timer, p99 ≤ 8 ms and max ≤ 100 ms;
  and Stop, pressed mid-stream, ends the turn within 20 ms.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from PySide6.QtCore import QElapsedTimer, QEvent, QEventLoop, QObject, QTimer

from desktop_app.chats import Engine
from desktop_app.context.chat_settings import ContextSettings
from desktop_app.core.blocks import TextBlock
from desktop_app.core.messages import Message
from desktop_app.demo_chat import create_demo_chat
from desktop_app.ui.conversation.session import ChatSession
from desktop_app.ui.gui import make_app
from desktop_app.ui.main_window import MainWindow
from tests.perf.bench_startup import to_first_paint
from tests.perf.report import Row, report

HERE = Path(__file__).resolve().parent
HEARTBEAT_MS = 16
TOKENS_PER_S = 1000
STREAM_SECONDS = 8.0


def start_to_first_paint(runs: int) -> list[float]:
    """The real entry point (`python -m desktop_app`) over an empty folder, as the
    start-up benchmark measures it."""
    with tempfile.TemporaryDirectory() as home:
        return [
            to_first_paint([sys.executable, "-m", "desktop_app"], Path(home)) for _ in range(runs)
        ]


def spin(seconds: float) -> None:
    """Run the event loop for `seconds` as the app runs it: asleep between events (a
    loop of processEvents() would keep the GIL busy, slowing the threads that stream)."""
    make_app()
    loop = QEventLoop()
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    loop.exec()


def wait_for(condition: object, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > end:
            raise TimeoutError("condition not met")
        spin(0.002)


class PaintSpy(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.painted = False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.painted = True
        return False


def open_long_chat(window: MainWindow, chat_id: str) -> float:
    """Open a chat afresh — its pane, if it had one, closed first (the caller shows
    another chat) — and time it to its first paint (which comes after open_chat returns,
    from the event loop: the pane's view is watched from then)."""
    window.panes.close(chat_id)
    spy = PaintSpy()
    started = time.perf_counter()
    window.open_chat(chat_id)
    viewport = window.pane.messages.viewport()
    viewport.installEventFilter(spy)
    wait_for(lambda: spy.painted)
    elapsed = time.perf_counter() - started
    viewport.removeEventFilter(spy)
    return elapsed


def huge_replies_chat(engine: Engine) -> str:
    """A chat whose replies once froze the window while laid out (seconds each)."""
    table = "| # | item |\n|---|---|\n" + "".join(f"| {i} | row {i} |\n" for i in range(2000))
    chat = engine.new_chat("Huge replies")
    engine.store.append_messages(
        chat.id,
        [
            Message("user", (TextBlock("A table?"),)),
            Message("assistant", (TextBlock(table),)),
            Message("user", (TextBlock("A line?"),)),
            Message("assistant", (TextBlock("x" * 1_000_000),)),
        ],
    )
    return chat.id


def resident_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Heartbeat(QObject):
    """A 16 ms timer; how late each tick comes is how long the event loop was busy."""

    def __init__(self) -> None:
        super().__init__()
        self.lags: list[float] = []
        self.clock = QElapsedTimer()
        self.timer = QTimer(self)
        self.timer.setInterval(HEARTBEAT_MS)
        self.timer.timeout.connect(self._on_timer_timeout)

    def start(self) -> None:
        self.lags.clear()
        self.clock.start()
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()

    def _on_timer_timeout(self) -> None:
        elapsed = self.clock.restart()
        self.lags.append(max(0.0, elapsed - HEARTBEAT_MS))


# A reply as Claude writes them: prose, a highlighted code block, a table; again and again.
SECTION = (
    "Here is the next step of the refund flow, with the query it runs.\n\n"
    "```python\n"
    "def refund(order: Order, amount: Decimal) -> Receipt:\n"
    "    if amount > order.paid:\n"
    "        raise ValueError(f'{amount} is more than {order.paid}')\n"
    "    return gateway.refund(order.id, amount, reason='customer request')\n"
    "```\n\n"
    "| Order | Paid | Refunded | State |\n|---|---:|---:|---|\n"
    "| #88213 | 847.20 | 847.20 | done |\n| #88214 | 12.00 | 0.00 | open |\n"
    "| #88215 | 99.95 | 50.00 | partial |\n\n"
)


def stream_into(window: MainWindow, session: ChatSession) -> tuple[list[float], float]:
    """Send, measure the loop's lag while the reply streams in, then press Stop."""
    heartbeat = Heartbeat()
    session.send((TextBlock("Stream a long answer, please."),))
    wait_for(
        lambda: session.messages[-1].role == "assistant" and len(session.messages[-1].text) > 200
    )
    heartbeat.start()
    spin(STREAM_SECONDS)
    heartbeat.stop()
    ended: list[float] = []  # when the session says the turn is over (the Send button back)
    session.busy_changed.connect(lambda busy: None if busy else ended.append(time.perf_counter()))
    pressed = time.perf_counter()
    session.stop()
    wait_for(lambda: bool(ended), timeout=10)
    return heartbeat.lags, ended[0] - pressed


@contextlib.contextmanager
def streaming_server(folder: Path) -> Iterator[str]:
    """The simulator in a process of its own (`simulator_process.py`), streaming a reply
    of code and tables at TOKENS_PER_S: the app's threads, not the server's, share the
    GIL with the window, as with Anthropic's API. Yields its base URL."""
    sections = int(TOKENS_PER_S * (STREAM_SECONDS + 30) * 4.4 / len(SECTION)) + 1
    reply = folder / "reply.md"
    reply.write_text(SECTION * sections)
    server = subprocess.Popen(
        [
            sys.executable,
            str(HERE / "simulator_process.py"),
            "--tokens-per-s",
            str(TOKENS_PER_S),
            "--reply",
            str(reply),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        yield server.stdout.readline().strip()
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)


def chat_list_of(count: int) -> tuple[float, float]:
    """Seconds to fill a chat list with `count` chats, and the slowest of 200 scroll
    steps through it (each repainted)."""
    from desktop_app.storage.chat_info import ChatInfo
    from desktop_app.ui.chat_list.panel import ChatListPanel

    now = time.time()
    chats = [
        ChatInfo(
            f"chat_{i:05d}",
            f"Chat number {i}",
            "m",
            "",
            ContextSettings(),
            now - i * 3600,
            now - i * 3600,
            None,
            10,
            None,
            now if i < 5 else None,
        )
        for i in range(count)
    ]
    panel = ChatListPanel()
    panel.resize(280, 800)
    panel.show()
    spin(0.1)
    started = time.perf_counter()
    panel.set_chats(chats)
    QEventLoop().processEvents()
    filled = time.perf_counter() - started
    spin(1.0)  # the batched layout finishes
    bar = panel.list.verticalScrollBar()
    worst = 0.0
    for value in range(0, bar.maximum(), max(1, bar.maximum() // 200)):
        started = time.perf_counter()
        bar.setValue(value)
        panel.list.viewport().repaint()
        worst = max(worst, time.perf_counter() - started)
    panel.close()
    return filled, worst


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    starts = start_to_first_paint(args.runs)
    rows = [
        Row(
            "start to first painted window",
            statistics.median(starts),
            "s",
            1.0,
            f"median of {len(starts)}; best {min(starts):.2f} s, worst {max(starts):.2f} s",
        )
    ]
    make_app()
    filled, scroll = chat_list_of(5000)
    rows.append(Row("fill a chat list of 5,000 chats", filled * 1000, "ms", 100))
    rows.append(Row("scroll it: the slowest step, repainted", scroll * 1000, "ms", 33))
    with tempfile.TemporaryDirectory() as home:
        engine = Engine.open(home, demo=True)
        big = create_demo_chat(engine.store, 4000)  # 10,000+ messages
        mid = create_demo_chat(engine.store, 2000)  # ~5,000 messages, ~620,000 tokens
        # in a window that holds them (Sonnet 5.5's): the send streams its reply — under
        # 200k it compacts first, and the summary's request took the streamed reply
        engine.store.update_chat(mid.id, settings=ContextSettings(context_window=1_000_000))
        small = create_demo_chat(engine.store, 2)
        window = MainWindow.over(engine)
        window.resize(1280, 820)
        window.show()
        window.open_chat(small.id)
        wait_for(lambda: window.current is not None and window.current.plan is not None)
        engine.connection.backend()  # start the simulator, import the SDK: not what is measured
        opens = []
        for _ in range(args.runs):
            window.open_chat(small.id)  # (the big one is opened afresh each time)
            opens.append(open_long_chat(window, big.id))
        big_session = window.current
        assert big_session is not None
        wait_for(lambda: big_session.plan is not None)
        rows.append(
            Row(
                f"open a {big.message_count:,}-message chat to first paint",
                statistics.median(opens) * 1000,
                "ms",
                300,
                f"median of {len(opens)}; best {min(opens) * 1000:.0f} ms",
            )
        )
        rows.append(
            Row("resident memory after opening it (and planning it)", resident_mb(), "MB", 400)
        )
        huge = huge_replies_chat(engine)
        opened = open_long_chat(window, huge)
        rows.append(
            Row(
                "open a chat of a 2,000-row table and a 1 MB line to first paint",
                opened * 1000,
                "ms",
                300,
                "each shows its first part (Show all opens the rest)",
            )
        )
        window.close()
        engine.close()
        # Streaming: as a user's app against a server elsewhere (a key, a base URL)
        with streaming_server(Path(home)) as base_url:
            os.environ.update(ANTHROPIC_API_KEY="sk-ant-benchmark", ANTHROPIC_BASE_URL=base_url)
            engine = Engine.open(home)
            window = MainWindow.over(engine)
            window.resize(1280, 820)
            window.show()
            session = window.open_chat(mid.id)
            assert session is not None
            wait_for(lambda: session.plan is not None)
            lags, stop_s = stream_into(window, session)
        lags.sort()
        p99 = lags[int(len(lags) * 0.99) - 1] if lags else float("nan")
        note = f"{len(lags)} heartbeats over {STREAM_SECONDS:.0f} s into {mid.message_count:,} messages"
        rows.append(
            Row(
                f"event-loop lag streaming {TOKENS_PER_S:,} tokens/s of code and tables, p99",
                p99,
                "ms",
                8,
                note,
            )
        )
        rows.append(Row("event-loop lag while streaming, max", max(lags), "ms", 100, note))
        rows.append(Row("Stop pressed mid-stream to the turn's end", stop_s * 1000, "ms", 20))
        window.close()
        engine.close()
    return report("Desktop app", rows, args.json)


if __name__ == "__main__":
    sys.exit(main())
