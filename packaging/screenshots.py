"""Render the README's screenshots from the offline demo (offscreen; no display, no key):

    .venv/bin/python packaging/screenshots.py [OUT_DIR]     (default: packaging/screenshots)

Every picture is the real window over a temporary home: the visual language's
swatches, the first run, a demo chat with its block chips, the context panel before and
after a compaction, the compaction preview, pinned facts, the next request and a new
chat; then one conversation — a tool step, code, a table, an edited question with its
‹1/2› — in light and dark, at 900, 1,600 and 2,560 px, with Context view off and on.
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

from desktop_app.chats import Chat, Engine  # noqa: E402
from desktop_app.context.facts import Fact, FactSource  # noqa: E402
from desktop_app.core.blocks import TextBlock, ToolResultBlock, ToolUseBlock  # noqa: E402
from desktop_app.core.messages import Message  # noqa: E402
from desktop_app.ui import theme  # noqa: E402
from desktop_app.ui.conversation.session import ChatSession  # noqa: E402
from desktop_app.ui.dialogs.compaction_dialog import CompactionDialog  # noqa: E402
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


class Swatches(QWidget):
    """The visual language on one page (docs/visual-language.md): the tones, the colour of
    each part of a request and of each context state, and the type scale, light and dark."""

    def paintEvent(self, event: object) -> None:
        from PySide6.QtCore import QRectF
        from PySide6.QtGui import QColor, QPainter

        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        half = self.width() / 2
        for dark in (False, True):
            left = half * dark
            painter.fillRect(QRectF(left, 0, half, self.height()), theme.tone("page", dark))
            text = theme.tone("text", dark)
            y = 20.0
            rows = (
                ("Tones", [(name, QColor(pair[dark])) for name, pair in theme.TONES.items()]),
                (
                    "Parts of a request",
                    [(name, QColor(pair[dark])) for name, pair in theme.SECTION_COLOURS.items()],
                ),
                (
                    "Context states",
                    [(name or "not counted", theme.state_colour(name, dark)) for name in STATES],
                ),
            )
            for heading, swatches in rows:
                painter.setFont(theme.font(self.font(), "heading"))
                painter.setPen(text)
                painter.drawText(QRectF(left + 20, y, half - 40, 24), heading)
                y += 28
                painter.setFont(theme.font(self.font(), "meta"))
                for n, (name, colour) in enumerate(swatches):
                    x = left + 20 + (n % 5) * (half - 40) / 5
                    top = y + (n // 5) * 64
                    painter.setPen(theme.tone("border", dark))
                    painter.setBrush(colour)
                    painter.drawRoundedRect(QRectF(x, top, 40, 32), 6, 6)
                    painter.setPen(theme.tone("muted", dark))
                    painter.drawText(QRectF(x, top + 34, (half - 40) / 5, 28), name)
                y += ((len(swatches) + 4) // 5) * 64 + 8
            painter.setPen(text)
            for role in theme.TYPE_SCALE:
                painter.setFont(theme.font(self.font(), role))
                size = theme.TYPE_SCALE[role] * self.font().pointSizeF()
                painter.drawText(QRectF(left + 20, y, half - 40, 30), f"{role} — {size:.1f} pt")
                y += 30
        painter.end()


STATES = ("in context", "summarized", "trimmed", "excluded", "cleared", "not sent", "")


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "packaging" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    make_app()
    swatches = Swatches()
    swatches.resize(1200, 720)
    save(swatches, out, "visual-language")
    with tempfile.TemporaryDirectory() as home:
        engine = Engine.open(Path(home) / "first-run")
        window = MainWindow.over(engine)
        window.resize(*SIZE)
        window.show()
        settle(until=lambda: window.connection.key_known)
        save(window, out, "first-run")
        window.close()
        engine.close()

        engine = Engine.open(Path(home) / "demo", demo=True)
        chat = engine.create_demo_chat(40)
        chat.setup.set_settings(replace(chat.settings, context_window=16_000, keep_recent_turns=4))
        suggestion = Fact("Customer id C-77 (from the CRM)", source=FactSource.MODEL, pending=True)
        engine.store.save_context_state(chat.id, chat.state.pin(suggestion))  # as Claude would
        chat.reload()
        window, session = window_on(engine, chat.id, SIZE[0])
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
        window.menus.new_action.trigger()
        settle(until=lambda: window.current is not None and window.current.plan is not None)
        settle(1.0)
        save(window, out, "new-chat")
        window.close()
        usage_view(engine, out)
        conversation_gallery(engine, out)
        web_search(engine, out)
        project_page(engine, out)
        settings_view(engine, out)
        engine.close()
    return 0


def window_on(engine: Engine, chat_id: str, width: int) -> tuple[MainWindow, ChatSession]:
    """The window, `width` px wide, showing a chat once it is planned."""
    window = MainWindow.over(engine)
    window.resize(width, SIZE[1])
    window.show()
    session = window.open_chat(chat_id)
    assert session is not None
    settle(until=lambda: session.plan is not None)
    return window, session


def usage_view(engine: Engine, out: Path) -> None:
    """View → Usage over a month of requests to two priced models."""
    from desktop_app.ui.dialogs.usage_dialog import UsageDialog
    from tests.perf.bench_usage import fill_ledger

    titles = ("Refund policy", "Invoice #88213", "Shipping to Norway", "Quarterly report")
    fill_ledger(engine, 420, 30, titles, ("claude-sonnet-5-5", "claude-opus-5-5"))
    engine.change_settings({"monthly_spend_cap": "40", "monthly_cap": "soft"})
    dialog = UsageDialog(engine)
    dialog.period.setCurrentText("Last 30 days")
    dialog.show()
    settle()
    save(dialog, out, "usage")
    dialog.close()


LOG = (
    "order,promised,shipped\n4471-B,2026-11-24,2026-11-27\n"
    "4480-A,2026-11-25,2026-11-25\n4492-C,2026-11-26,2026-11-29"
)
ANSWER = """Two orders shipped late last week:

| Order | Promised | Shipped | Late by |
|---|---|---|---|
| 4471-B | 24 Nov | 27 Nov | 3 days |
| 4492-C | 26 Nov | 29 Nov | 3 days |

A check you can run on the log:

```python
import csv
from datetime import date

def late(path: str) -> list[str]:
    with open(path, newline="") as f:
        return [
            row["order"]
            for row in csv.DictReader(f)
            if date.fromisoformat(row["shipped"]) > date.fromisoformat(row["promised"])
        ]
```

It prints `['4471-B', '4492-C']` for this log."""


def gallery_chat(engine: Engine) -> Chat:
    """A question answered with a tool step, a table and code; then the question edited
    (its second version answered too), with the first version shown: ‹1/2›."""
    chat = engine.new_chat("Late orders last week")
    question = Message(
        "user", (TextBlock("Which orders shipped late last week? Show a check too."),)
    )
    engine.store.append_messages(
        chat.id,
        [
            question,
            Message(
                "assistant",
                (
                    TextBlock("I'll read the shipping log first."),
                    ToolUseBlock("toolu_log", "read_file", {"path": "logs/shipping-2026-11.csv"}),
                ),
            ),
            Message("user", (ToolResultBlock("toolu_log", LOG),)),
            Message("assistant", (TextBlock(ANSWER),)),
        ],
    )
    edited = Message("user", (TextBlock("Which orders shipped late this week?"),))
    engine.store.append_message(chat.id, edited, beside=question.id)
    reply = Message(
        "assistant", (TextBlock("None so far this week: every order shipped on time."),)
    )
    engine.store.append_message(chat.id, reply)
    chat = engine.chat(chat.id)
    chat.branches.show(question.id)
    return chat


def conversation_gallery(engine: Engine, out: Path) -> None:
    """The conversation as the issue asks to see it, in light and dark, narrow and wide."""
    chat = gallery_chat(engine)
    app = make_app()
    for appearance, width, context_view, text_size, name in (
        ("light", 1600, False, 0, "conversation-light-1600"),
        ("light", 1600, True, 0, "conversation-context-view"),
        ("dark", 1600, False, 0, "conversation-dark-1600"),
        ("light", 900, False, 0, "conversation-light-900"),
        ("dark", 900, False, 0, "conversation-dark-900"),
        ("light", 2560, False, 0, "conversation-light-2560"),
        ("light", 1280, False, 15, "conversation-light-1280-text-15"),
        ("dark", 900, False, 15, "conversation-dark-900-text-15"),
    ):
        # as Settings saves them
        engine.settings = replace(engine.settings, appearance=appearance, text_size=text_size)
        window, session = window_on(engine, chat.id, width)
        window.menus.context_view_action.setChecked(context_view)
        results = session.model.index(2)  # the tool step's result, opened
        window.pane.messages.delegate.toggle(results, 0)
        if window.placement.narrow:  # the panel, opened over the conversation
            window.placement.toggle()
        settle(1.0)
        save(window, out, name)
        window.close()
    engine.settings = replace(engine.settings, appearance="system", text_size=0)
    theme.choose(app, "system", 0)


def web_search(engine: Engine, out: Path) -> None:
    """A chat that searched the web and read a page: the steps inside Claude's reply, the
    answer with its footnote marks and sources (the demo's simulator plays the API)."""
    chat = engine.create_demo_chat(1)
    chat.setup.set_settings(replace(chat.settings, web_search=True, web_fetch=True))
    window, session = window_on(engine, chat.id, SIZE[0])
    for question in (
        "Search the web for the latest Example release",
        "Now read https://docs.example.org/release-notes",
    ):
        session.send((TextBlock(question),))
        settle(until=lambda: not session.busy)
    settle(1.0)
    save(window, out, "web-search")
    window.close()


def project_page(engine: Engine, out: Path) -> None:
    """A project as a page (chosen in the chat list's filter), in light and dark."""
    project = engine.projects.new(
        "Acme support",
        instructions="Answer as Acme's support team: two sentences, friendly, in the "
        "customer's language.",
    )
    engine.projects.pin(project.id, "Refund window: 30 days from delivery.")
    engine.projects.pin(project.id, "Escalate orders over 500 EUR to Dana.")
    engine.projects.add_text(project.id, "returns.md", RETURNS)
    for title in ("Refund for order #88213", "Late delivery to Lyon", "Warranty question"):
        engine.projects.new_chat(project.id, title)
    app = make_app()
    for appearance, width, name in (
        ("light", 1600, "project-page"),
        ("dark", 1280, "project-page-dark"),
    ):
        engine.settings = replace(engine.settings, appearance=appearance)
        window = MainWindow.over(engine)
        window.resize(width, 900)
        window.show()
        settle(0.6)
        choice = window.chat_list.project_filter
        choice.setCurrentIndex(choice.findText("Project: Acme support"))
        choice.activated.emit(choice.currentIndex())  # as choosing it does
        settle(1.0)
        save(window, out, name)
        window.close()
    engine.settings = replace(engine.settings, appearance="system")
    theme.choose(app, "system", 0)


def settings_view(engine: Engine, out: Path) -> None:
    """Settings, as File → Settings… opens it."""
    from desktop_app.ui.dialogs.settings_dialog import SettingsDialog

    dialog = SettingsDialog(engine.settings, engine.secrets, "keyring", list(engine.known_models()))
    dialog.show()
    dialog.resize(dialog.width(), 1000)  # every section in view (a small screen scrolls)
    settle(0.6)
    save(dialog, out, "settings")
    dialog.close()


RETURNS = "# Returns\nItems may be returned within 30 days of delivery, in their box.\n" * 12


if __name__ == "__main__":
    sys.exit(main())
