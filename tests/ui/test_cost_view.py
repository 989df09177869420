"""What the window says about cost before a send: the prompt cache counting down in the
chat bar and the context panel, warm → cold at its TTL (on a test's clock), and how long
it is kept chosen from the bar's menu."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMenu
from pytestqt.qtbot import QtBot

from desktop_app.api.simulator import SimulatorServer
from desktop_app.chats import Engine
from desktop_app.config.prices import format_amount
from desktop_app.core.blocks import TextBlock
from desktop_app.ui.main_window import MainWindow
from tests.fakes.clock import Clock
from tests.ui.conftest import TURN_TIMEOUT_MS, open_demo, when_shown

SYSTEM = "You answer questions about the refund policy, precisely and briefly. " * 60


def choose_from_menu(qtbot: QtBot, text: str) -> None:
    """When the next menu pops up, click its item that starts with `text`."""

    def choose(menu: QMenu) -> None:
        action = next(a for a in menu.actions() if a.text().startswith(text))
        menu.setActiveAction(action)
        qtbot.keyClick(menu, Qt.Key.Key_Return)

    when_shown(QMenu, choose)


def test_the_cache_counts_down_in_the_bar_and_the_panel_then_goes_cold(
    engine: Engine,
    simulator: SimulatorServer,
    open_window: Callable[[Engine], MainWindow],
    qtbot: QtBot,
) -> None:
    clock = Clock()
    engine.clock = clock
    simulator.state.clock = clock
    engine.set_price("contextdesk-demo", {"input": 2.0, "output": 10.0})
    window = open_window(engine)
    session = open_demo(window, engine, qtbot, turns=2)
    session.chat.setup.change({"system": SYSTEM})
    pane = window.pane
    bar = pane.header.cache
    assert not bar.isVisible()  # nothing cached yet: the panel says so

    qtbot.keyClicks(pane.composer.edit, "What is the refund window?")
    qtbot.mouseClick(pane.composer.send_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not session.busy, timeout=TURN_TIMEOUT_MS)
    qtbot.waitUntil(lambda: bar.text().startswith("Cache "), timeout=5000)
    assert bar.isVisible()
    assert bar.text() in ("Cache 5:00", "Cache 4:59")
    assert bar.width() >= bar.sizeHint().width()  # whole: the title gives way first
    assert "once cold" in bar.toolTip()
    panel = window.context
    assert panel.cache.text().startswith("Prompt cache warm for ")
    assert "once cold" in panel.cache.text()
    # what would break it, with its cost, before the user does it
    assert "Switching the model" in pane.header.model.toolTip()
    assert "instead of ≈$" in pane.header.thinking.toolTip()
    assert "starts the prompt cache over" in panel.cache.text()

    clock.now += 100
    qtbot.waitUntil(lambda: bar.text() in ("Cache 3:20", "Cache 3:19"), timeout=3000)
    clock.now += 201  # past five minutes from the request's start
    qtbot.waitUntil(lambda: bar.text() == "Cache cold", timeout=3000)
    assert panel.cache.text().startswith("Prompt cache cold")
    assert "Switching the model" not in pane.header.model.toolTip()  # nothing left to lose

    choose_from_menu(qtbot, "Keep it 1 hour")
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: session.chat.settings.cache_ttl == "1h", timeout=3000)


def click_in_message_box(qtbot: QtBot, button: str, seen: list[str]) -> None:
    """When the next message box opens, keep its text in `seen` and click `button`."""
    from PySide6.QtWidgets import QMessageBox

    def answer(box: QMessageBox) -> None:
        seen.append(box.text())
        chosen = next(b for b in box.buttons() if b.text().replace("&", "") == button)
        qtbot.mouseClick(chosen, Qt.MouseButton.LeftButton)

    when_shown(QMessageBox, answer)


def test_a_hard_cap_asks_before_a_send_goes_over_and_cancel_sends_nothing(
    engine: Engine,
    simulator: SimulatorServer,
    open_window: Callable[[Engine], MainWindow],
    qtbot: QtBot,
) -> None:
    engine.set_price("contextdesk-demo", {"input": 200.0, "output": 1000.0})
    window = open_window(engine)
    session = open_demo(window, engine, qtbot, turns=1)
    session.chat.setup.change({"system": SYSTEM})
    pane = window.pane

    def send(text: str) -> None:
        pane.composer.edit.setPlainText("")
        qtbot.keyClicks(pane.composer.edit, text)
        qtbot.mouseClick(pane.composer.send_button, Qt.MouseButton.LeftButton)

    send("What is the refund window?")
    qtbot.waitUntil(lambda: not session.busy, timeout=TURN_TIMEOUT_MS)
    sent = len(simulator.message_requests())
    spent = session.chat.costs.spend().cost
    # A cap a cent or less above what is spent: the next send's input crosses it, even
    # read from the cache. Typed into the panel's Budget row, as a person sets it.
    cap = math.ceil(spent * 100) / 100
    spin = window.context.spend_cap
    spin.selectAll()
    qtbot.keyClicks(spin, f"{cap:.2f}")
    qtbot.keyClick(spin, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: session.chat.settings.spend_cap == cap, timeout=3000)

    asked: list[str] = []
    click_in_message_box(qtbot, "Cancel", asked)
    send("And for opened items?")
    qtbot.waitUntil(lambda: bool(asked), timeout=3000)
    assert "this chat: $" in asked[0]
    assert f"of {format_amount(cap)}" in asked[0]
    assert "its input alone is ≈$" in asked[0]
    assert len(simulator.message_requests()) == sent  # nothing sent
    assert pane.composer.edit.toPlainText() == "And for opened items?"  # nothing lost

    click_in_message_box(qtbot, "Send anyway, this once", asked)
    qtbot.mouseClick(pane.composer.send_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not session.busy and len(asked) == 2, timeout=TURN_TIMEOUT_MS)
    qtbot.waitUntil(lambda: len(simulator.message_requests()) == sent + 1, timeout=5000)
    assert pane.composer.edit.toPlainText() == ""
    qtbot.waitUntil(lambda: "Budget, this chat:" in window.context.status.text(), timeout=5000)


def test_the_usage_view_charts_the_ledger_and_its_totals_are_spend_s(
    engine: Engine,
    simulator: SimulatorServer,
    open_window: Callable[[Engine], MainWindow],
    qtbot: QtBot,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from desktop_app.config.prices import format_money
    from desktop_app.ui.dialogs.usage_dialog import UsageDialog

    engine.set_price("contextdesk-demo", {"input": 2.0, "output": 10.0})
    engine.change_settings({"monthly_spend_cap": "0.01", "monthly_cap": "soft"})
    window = open_window(engine)
    session = open_demo(window, engine, qtbot, turns=1)
    session.chat.setup.change({"system": SYSTEM})
    for question in ("What is the refund window?", "And for opened items?"):
        assert session.send((TextBlock(question),))
        qtbot.waitUntil(lambda: not session.busy, timeout=TURN_TIMEOUT_MS)
    spent = engine.spend()
    csv_file = tmp_path / "usage.csv"
    monkeypatch.setattr(
        "desktop_app.ui.dialogs.usage_dialog.QFileDialog.getSaveFileName",
        lambda *_args, **_kw: (str(csv_file), "CSV (*.csv)"),
    )
    seen: dict[str, object] = {}

    def look(dialog: UsageDialog) -> None:
        seen["headline"] = dialog.headline.text()
        chart = dialog.chart
        today = len(chart.labels) - 1
        seen["today"] = chart.total(today)
        seen["tooltip"] = chart.tooltip(today)
        seen["bar"] = chart.bar_rect(today).height()
        rows = (dialog.chats.topLevelItem(i) for i in range(dialog.chats.topLevelItemCount()))
        seen["chats"] = [row.text(0) for row in rows if row is not None]
        seen["budget"] = [
            w.text()
            for w in dialog.findChildren(QLabel)
            if w.text().startswith("$") and "soft" in w.text()
        ]
        qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
        dialog.split.setCurrentIndex(1)  # by model: one series, the demo model
        seen["models"] = [s.name for s in chart.series]
        dialog.reject()

    when_shown(UsageDialog, look)
    view = next(a for a in window.menuBar().actions() if a.text() == "&View").menu()
    assert isinstance(view, QMenu)
    next(a for a in view.actions() if a.text() == "&Usage…").trigger()
    assert format_money(spent.cost, spent.currency) in str(seen["headline"])
    assert f"{spent.requests:,} requests" in str(seen["headline"])
    assert seen["today"] == pytest.approx(spent.cost)
    assert float(str(seen["bar"])) > 0
    assert "Cache read:" in str(seen["tooltip"])
    assert session.chat.title in list(seen["chats"])  # type: ignore[call-overload]
    assert seen["budget"]  # the month's, over its $0.01
    assert seen["models"] == ["contextdesk-demo"]
    lines = csv_file.read_text().splitlines()
    assert lines[0].startswith("day,label,requests,input_tokens")
    assert lines[-1].startswith("total,")
    assert float(lines[-1].split(",")[-1]) == pytest.approx(spent.cost, abs=1e-6)


def test_the_draft_s_price_is_what_the_ledger_then_records_for_its_request(
    engine: Engine,
    simulator: SimulatorServer,
    open_window: Callable[[Engine], MainWindow],
    qtbot: QtBot,
) -> None:
    engine.set_price("contextdesk-demo", {"input": 2.0, "output": 10.0})
    window = open_window(engine)
    session = open_demo(window, engine, qtbot, turns=1)
    session.chat.setup.change({"system": SYSTEM})
    pane = window.pane
    assert session.send((TextBlock("What is the refund window?"),))  # the cache is warm
    qtbot.waitUntil(lambda: not session.busy, timeout=TURN_TIMEOUT_MS)

    qtbot.keyClicks(pane.composer.edit, "And for opened items, which the customer kept a week?")
    label = pane.composer.estimate
    qtbot.waitUntil(lambda: "(exact count)" in label.text(), timeout=10_000)  # count_tokens
    shown = float(label.text().split("Send: $")[1].split(" ")[0])
    assert "+ up to $" in label.text()  # the reply's range: max output at the output price
    qtbot.mouseClick(pane.composer.send_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not session.busy, timeout=TURN_TIMEOUT_MS)
    last = session.chat.costs.sent_requests()[-1]
    parts = engine.prices().cost_parts("contextdesk-demo", last.usage)
    assert parts is not None
    assert last.usage is not None
    assert last.usage.cache_read_input_tokens > 0
    recorded_input = parts["input"] + parts["cache_write"] + parts["cache_read"]
    assert shown == pytest.approx(recorded_input, abs=max(parts["output"], 0.0001))


def test_usage_opens_on_tokens_when_nothing_it_counts_has_a_price(
    engine: Engine, qtbot: QtBot, open_window: Callable[[Engine], MainWindow]
) -> None:
    """A large "$0.00" said nothing of requests that had no price (a new user's report):
    with none priced, the view opens on tokens; money is one choice away."""
    from desktop_app.ui.dialogs.usage_dialog import UsageDialog

    window = open_window(engine)
    session = open_demo(window, engine, qtbot, turns=1)
    assert session.send((TextBlock("What is the refund window?"),))
    qtbot.waitUntil(lambda: not session.busy, timeout=TURN_TIMEOUT_MS)
    dialog = UsageDialog(engine, window)
    qtbot.addWidget(dialog)
    assert dialog.measure.currentText() == "Tokens"
    assert " tokens" in dialog.headline.text()
    dialog.measure.setCurrentText("Money")
    assert "$0.00" in dialog.headline.text()
