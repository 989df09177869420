"""Render the README's screenshots from the offline demo (offscreen; no display, no key):

    .venv/bin/python packaging/screenshots.py [OUT_DIR]     (default: packaging/screenshots)

Every picture is the real window over a temporary home: the first run, a demo chat with
its block chips, the context panel before and after a compaction, the compaction
preview, pinned facts, and the next request.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QEventLoop  # noqa: E402
from PySide6.QtWidgets import QWidget  # noqa: E402

from desktop_app.chats import Engine  # noqa: E402
from desktop_app.context.facts import Fact, FactSource  # noqa: E402
from desktop_app.ui.compaction_dialog import CompactionDialog  # noqa: E402
from desktop_app.ui.gui import make_app  # noqa: E402
from desktop_app.ui.main_window import MainWindow  # noqa: E402

SIZE = (1440, 900)


def settle(seconds: float = 0.6, until: Callable[[], bool] = lambda: True) -> None:
    """Let the window paint and the background plans land."""
    app = make_app()
    end = time.monotonic() + 60
    while not until() and time.monotonic() < end:
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)


def save(widget: QWidget, out: Path, name: str) -> None:
    path = out / f"{name}.png"
    widget.grab().save(str(path))
    print(f"wrote {path}")


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "packaging" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    make_app()
    with tempfile.TemporaryDirectory() as home:
        engine = Engine.open(Path(home) / "first-run")
        window = MainWindow(engine)
        window.resize(*SIZE)
        window.show()
        settle(until=lambda: window.connection.key_known)
        save(window, out, "first-run")
        window.close()
        engine.close()

        engine = Engine.open(Path(home) / "demo", demo=True)
        chat = engine.create_demo_chat(40)
        chat.set_settings(replace(chat.settings, context_window=16_000, keep_recent_turns=4))
        suggestion = Fact("Customer id C-77 (from the CRM)", source=FactSource.MODEL, pending=True)
        engine.store.save_context_state(chat.id, chat.state.pin(suggestion))  # as Claude would
        chat.reload()
        window = MainWindow(engine)
        window.resize(*SIZE)
        window.show()
        session = window.open_chat(chat.id)
        assert session is not None
        settle(until=lambda: session.plan is not None)
        settle(1.0)
        save(window, out, "conversation")
        dialog = CompactionDialog(session, window)
        dialog.show()
        dialog.instructions.setText("keep every amount and date")
        dialog.preview_button.click()
        settle(until=dialog.apply_button.isEnabled)
        save(dialog, out, "compaction-preview")
        dialog.apply_button.click()
        settle(1.0)
        save(window, out, "context-panel")
        window.context.tabs.setCurrentWidget(window.context.facts)
        settle()
        save(window, out, "facts")
        window.context.tabs.setCurrentWidget(window.context.request)
        settle()
        save(window, out, "next-request")
        window.close()
        engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
