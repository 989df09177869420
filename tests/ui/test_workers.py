"""The worker threads: results come back in order, stale plans are dropped, Stop wakes a
waiting approval, and PySide6 survives thousands of cross-thread signals."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QObject
from pytestqt.qtbot import QtBot
from shiboken6 import Shiboken

from desktop_app.core.blocks import ToolUseBlock
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import Cancelled, ErrorInfo
from desktop_app.core.ports import ApprovalDecision, ApprovalRequest
from desktop_app.ui.conversation.approval_card import PendingApproval, WindowApprover
from desktop_app.ui.workers import BackgroundWorker

STORM = """
    import os
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtCore import QCoreApplication, QEventLoop, QObject, QThread, Signal, Slot
    from desktop_app.ui.workers import BackgroundWorker
    app = QCoreApplication([])
    worker = BackgroundWorker()
    results = []
    for i in range(6000):
        worker.submit(f"job{i}", lambda i=i: None if i % 2 else i, results.append)
    while len(results) < 6000:
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
    worker.stop()
    print("survived", len(results))
"""


def test_thousands_of_cross_thread_results_do_not_crash_the_interpreter() -> None:
    """PySide6 6.12.0 aborts Python 3.11 here (a reference-count bug on queued signals);
    this is why pyproject.toml keeps PySide6 below 6.12."""
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(STORM)], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "survived 6000" in run.stdout


def test_background_jobs_come_back_on_the_gui_thread_newest_per_key(qtbot: QtBot) -> None:
    worker = BackgroundWorker()
    gate = threading.Event()
    seen: list[tuple[str, object, bool]] = []
    gui_thread = threading.current_thread()

    def record(name: str) -> Callable[[object], None]:
        return lambda value: seen.append((name, value, threading.current_thread() is gui_thread))

    worker.submit("block", lambda: gate.wait(5), record("block"))
    for n in range(5):  # typing: only the last draft's plan matters
        worker.submit("plan", functools.partial(int, n), record("plan"))
    gate.set()
    qtbot.waitUntil(lambda: len(seen) == 2, timeout=5000)
    assert seen == [("block", True, True), ("plan", 4, True)]
    errors: list[ErrorInfo] = []
    worker.submit("bad", lambda: 1 / 0, record("bad"), errors.append)
    qtbot.waitUntil(lambda: bool(errors), timeout=5000)
    assert errors[0].title == "Something went wrong"
    assert "ZeroDivisionError" in errors[0].message
    assert "Traceback" in errors[0].details
    worker.stop()


class _Listener(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.heard: list[object] = []

    def on_done(self, value: object) -> None:
        self.heard.append(value)


def test_an_answer_for_an_object_deleted_meanwhile_is_dropped(qtbot: QtBot) -> None:
    """A chat's pane closed while its plan ran: the plan's answer finds its session gone
    and is dropped (it raised "Internal C++ object already deleted" in the window)."""
    worker = BackgroundWorker()
    gate = threading.Event()
    gone, kept = _Listener(), _Listener()
    worker.submit("gone", lambda: gate.wait(5), gone.on_done)
    worker.submit("gone too", lambda: "late", functools.partial(gone.on_done))
    worker.submit("kept", lambda: "answer", kept.on_done)
    Shiboken.delete(gone)  # (as deleteLater does, once the loop turns)
    gate.set()
    qtbot.waitUntil(lambda: bool(kept.heard), timeout=5000)
    assert kept.heard == ["answer"]
    assert gone.heard == []
    worker.stop()


def test_stop_wakes_an_approval_that_is_waiting(qtbot: QtBot) -> None:
    approver = WindowApprover()
    asked: list[PendingApproval] = []
    approver.approval_requested.connect(asked.append)
    cancel = CancelToken()
    outcome: list[object] = []

    def ask() -> None:
        request = ApprovalRequest(ToolUseBlock("t1", "write_file", {"path": "x"}), "write /x")
        try:
            outcome.append(approver.approve(request, cancel))
        except Cancelled:
            outcome.append("cancelled")

    thread = threading.Thread(target=ask)
    thread.start()
    qtbot.waitUntil(lambda: bool(asked), timeout=5000)
    pressed = time.monotonic()
    cancel.cancel()
    thread.join(5)
    assert outcome == ["cancelled"]
    assert time.monotonic() - pressed < 1.0


@pytest.mark.parametrize("decision", list(ApprovalDecision))
def test_the_users_answer_reaches_the_loop(qtbot: QtBot, decision: ApprovalDecision) -> None:
    approver = WindowApprover()
    approver.approval_requested.connect(lambda pending: pending.answer(decision))
    outcome: list[ApprovalDecision] = []
    request = ApprovalRequest(ToolUseBlock("t1", "run_command", {"command": "ls"}), "run ls")
    thread = threading.Thread(
        target=lambda: outcome.append(approver.approve(request, CancelToken()))
    )
    thread.start()
    qtbot.waitUntil(lambda: bool(outcome), timeout=5000)
    thread.join(5)
    assert outcome == [decision]


def test_the_smoke_test_runs_the_whole_app_and_exits_cleanly(tmp_path: Path) -> None:
    """What packaging/build.sh runs against the built app, run here against the source."""
    run = subprocess.run(
        [sys.executable, "-m", "desktop_app", "--home", str(tmp_path), "demo", "--smoke-test"],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **os.environ,
            "QT_QPA_PLATFORM": "offscreen",
            "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",  # never the real one
        },
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "smoke test passed" in run.stdout
