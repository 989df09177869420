"""`contextdesk demo --smoke-test`: the whole app, checked in one question. A build passes
when its window paints, the demo model (the bundled SDK over a local socket) answers a
question with a tool call, the answer is stored, tokens are counted with the bundled
encoding, and the app closes cleanly."""

from __future__ import annotations

import sys
import time

from PySide6.QtCore import QObject, QTimer, Slot
from PySide6.QtWidgets import QApplication

from desktop_app.core.blocks import TextBlock, ToolUseBlock
from desktop_app.ui.main_window import MainWindow

TIMEOUT_S = 90.0
QUESTION = "What time is it?"  # the demo model answers it with its current_time tool


class SmokeTest(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.started = time.monotonic()
        self.sent = False
        self.timer = QTimer(self)
        self.timer.setInterval(100)
        self.timer.timeout.connect(self._on_timer_timeout)

    def start(self) -> None:
        self.timer.start()

    @Slot()
    def _on_timer_timeout(self) -> None:
        session = self.window.current
        if time.monotonic() - self.started > TIMEOUT_S:
            self._finish(False, f"no answer within {TIMEOUT_S:.0f} s")
            return
        if session is None or session.plan is None:
            return  # the demo chat is still opening
        if not self.sent:
            self.sent = session.send((TextBlock(QUESTION),))
            return
        if session.busy:
            return
        if session.error is not None:
            self._finish(False, f"{session.error.title}: {session.error.message}")
            return
        messages = list(session.messages)
        called = any(isinstance(b, ToolUseBlock) for m in messages[-3:] for b in m.blocks)
        stored = session.chat.messages()
        answered = bool(stored) and stored[-1].role == "assistant" and bool(stored[-1].text)
        if not session.engine.counter.encoder.exact_tokenizer:
            self._finish(False, "token counts fell back to the heuristic: the encoding is missing")
            return
        ok = called and answered and stored[-1].id == messages[-1].id
        self._finish(ok, "the demo model called a tool and answered" if ok else "no stored answer")

    def _finish(self, ok: bool, detail: str) -> None:
        self.timer.stop()
        print(
            f"smoke test {'passed' if ok else 'FAILED'}: {detail}",
            file=sys.stdout if ok else sys.stderr,
            flush=True,
        )
        self.window.close()
        QApplication.exit(0 if ok else 1)
