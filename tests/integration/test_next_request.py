"""What `contextdesk context CHAT --request --draft TEXT` prints is exactly the body that
`contextdesk send CHAT TEXT` then sends — checked against what the server received, turn
after turn, with pinned facts, a tool loop, an exclusion and a summary in play."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from desktop_app.api.backend import PURPOSE_HEADER
from desktop_app.api.simulator import Reply, SimulatorServer
from desktop_app.app import main
from desktop_app.chats import Engine
from tests.integration.conftest import TEST_KEY
from tests.unit.builders import a, u


def test_the_shown_next_request_is_the_one_sent(
    sim: SimulatorServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", sim.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    home = tmp_path / "home"

    def cli(*args: str) -> str:
        code = main(["--home", str(home), *args])
        out, err = capsys.readouterr()
        assert code == 0, err
        return out

    def sent_as_shown(text: str, requests: int = 1) -> None:
        shown = json.loads(cli("context", chat, "--request", "--draft", text))
        assert "The order number is #88213." in json.dumps(shown["system"])  # pinned, verbatim
        assert shown["messages"][-1]["content"][-1]["text"] == text
        assert shown["tools"]
        before = len(sim.message_requests())
        cli("send", chat, text)
        received = sim.message_requests()
        assert len(received) == before + requests
        first = received[before].body
        assert {k: v for k, v in first.items() if k != "stream"} == shown

    chat = cli("chat", "new", "--keep-recent", "1", "--model", "claude-haiku-4-5").strip()
    cli("pin", chat, "The order number is #88213.")
    sent_as_shown("What was my order number?")
    sim.queue(Reply.tools(("toolu_t1", "current_time", {}), text="Checking the time."))
    sent_as_shown("What time is it?", requests=2)  # the tool loop's first request
    sent_as_shown("Thanks. And a third question?")

    engine = Engine.open(home)  # exclude the first answer, as the window would
    try:
        opened = engine.find(chat)
        opened.memory.set_excluded(opened.messages()[1], True)
    finally:
        engine.close()
    sent_as_shown("A fourth one, with an answer left out.")

    cli("compact", chat)
    exported: dict[str, Any] = json.loads(cli("export", chat))
    assert exported["summaries"], "the compaction wrote a summary"
    sent_as_shown("After the summary: still the same body?")

    # The ledger holds every request as the server received it — the tool loop's second,
    # and the summary request compaction sent, too (its cost is the chat's) — in order.
    listed = json.loads(cli("requests", chat, "--json"))
    received = sim.message_requests()
    assert [r["number"] for r in listed] == list(range(1, len(received) + 1))
    for entry, request in zip(listed, received, strict=True):
        assert json.loads(cli("requests", chat, str(entry["number"]))) == request.body
        assert entry["purpose"] == request.headers.get(PURPOSE_HEADER)
        assert entry["usage"]["input_tokens"] > 0
    assert [r["purpose"] for r in listed].count("compaction") == 1
    turns = [r["number"] for r in listed if r["purpose"] == "chat"]
    # What they cost is their usage times the price table (Haiku 4.5: $1 in, $5 out,
    # $1.25 cache write, $0.10 cache read per million), by hand.
    by_hand = sum(
        (
            r["usage"]["input_tokens"] * 1
            + r["usage"]["output_tokens"] * 5
            + r["usage"]["cache_creation_input_tokens"] * 1.25
            + r["usage"]["cache_read_input_tokens"] * 0.10
        )
        / 1_000_000
        for r in listed
    )
    shown_cost = json.loads(cli("chat", "show", chat, "--json"))["cost"]
    assert shown_cost["amount"] == pytest.approx(by_hand, abs=1e-6)
    assert shown_cost["requests"] == len(listed)  # the summary request's cost included
    assert json.loads(cli("spend", "today", "--json"))["amount"] == pytest.approx(by_hand, abs=1e-6)

    exported = json.loads(cli("export", chat, "--with-requests"))
    assert [r["body"] for r in exported["requests"]] == [r.body for r in received]
    assert "requests" not in json.loads(cli("export", chat))  # only when asked: it is big
    diff = cli("requests", chat, "--diff", "1", "2")
    assert diff.startswith("The earlier request is a prefix of the later one: the cache holds.")
    # after the summary: the cache breaks where it went in
    diff = cli("requests", chat, "--diff", str(turns[-2]), str(turns[-1]))
    # (the summary goes in right after the first message, which it merges into: same role)
    assert diff.startswith("The cache breaks at messages.0: the summary changed.")


def chat_due_for_compaction(
    home: Path, capsys: pytest.CaptureFixture[str], *, window: int, model: str = ""
) -> str:
    """A chat of three long turns in a small window: its next send compacts first."""
    new = ["chat", "new", "--threshold", "0.1", "--keep-recent", "1"]
    assert main(["--home", str(home), *new, *(["--model", model] if model else [])]) == 0
    chat = capsys.readouterr().out.strip()
    engine = Engine.open(home)
    try:
        small = engine.find(chat)
        small.setup.set_settings(replace(small.settings, context_window=window, max_tokens=100))
        turns = [u(f"question {n} " + "words " * 40) for n in range(3)]
        engine.store.append_messages(
            chat, [m for q in turns for m in (q, a("an answer " + "more " * 40))]
        )
    finally:
        engine.close()
    return chat


def test_when_the_send_would_compact_first_the_request_is_not_guessed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    chat = chat_due_for_compaction(home, capsys, window=1000)
    context = ["--home", str(home), "context", chat, "--request", "--draft"]
    assert main([*context, "and now?"]) == 1
    assert "compacts older turns first" in capsys.readouterr().err
    assert main(["--home", str(home), "chat", "set", chat, "auto_compact=off"]) == 0
    assert main([*context, "and now?"]) == 0  # then it trims instead: the body is known


def test_auto_compaction_s_request_is_in_the_ledger_before_the_turn_s(
    sim: SimulatorServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", sim.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    home = tmp_path / "home"
    chat = chat_due_for_compaction(home, capsys, window=2000, model="claude-haiku-4-5")
    assert main(["--home", str(home), "send", chat, "and now?"]) == 0
    capsys.readouterr()
    assert main(["--home", str(home), "requests", chat, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    received = sim.message_requests()
    assert [r["purpose"] for r in listed] == ["compaction", "chat"]
    assert [r.headers.get(PURPOSE_HEADER) for r in received] == ["compaction", "chat"]
    for entry, request in zip(listed, received, strict=True):
        assert main(["--home", str(home), "requests", chat, str(entry["number"])]) == 0
        assert json.loads(capsys.readouterr().out) == request.body
