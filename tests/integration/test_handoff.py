"""Continue in a new chat (issue 34, item 1), through the command line against the strict
stand-in: the new chat's first request holds the pinned facts verbatim, the summary and
the last turns verbatim — and nothing else of the old chat; both chats name each other."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from desktop_app.api.simulator import SimulatorServer
from desktop_app.api.simulator.script import Reply
from desktop_app.chats import Engine
from desktop_app.chats.handoff import preview_handoff
from desktop_app.core.errors import ContextDeskError


def long_chat(cli: Any, turns: int) -> str:
    chat = str(cli("chat", "new").strip())
    cli("pin", chat, "Order #88213: refund 847.20 EUR")
    cli("pin", chat, "The customer prefers e-mail.")
    for n in range(1, turns + 1):
        cli("send", chat, f"Question {n}: what about step {n}?")
    return chat


def test_a_handoff_starts_the_new_chat_with_exactly_what_it_carries(
    cli: Any, sim: SimulatorServer
) -> None:
    chat = long_chat(cli, 30)
    sim.queue(Reply.text("The refund was agreed; steps 1 to 28 are done."))
    out = json.loads(cli("handoff", chat, "--keep-turns", "2", "--json"))
    new = out["id"]
    assert out["summary_by"] == "model"
    assert out["kept_messages"] == 4  # the last two turns
    assert [f["choice"] for f in out["facts"]] == ["copy", "copy"]
    assert out["first_request"]["tokens"] < out["old_next_request"]["tokens"]

    cli("send", new, "Go on with step 31.")
    first = sim.message_requests()[-1].body
    system = json.dumps(first["system"], ensure_ascii=False)
    assert "Order #88213: refund 847.20 EUR" in system  # both pins, verbatim
    assert "The customer prefers e-mail." in system
    assert "The refund was agreed; steps 1 to 28 are done." in system  # the summary
    said = [
        block["text"]
        for message in first["messages"]
        for block in message["content"]
        if block["type"] == "text"
    ]
    asked = [t for t in said if t.startswith("Question")]
    assert asked == ["Question 29: what about step 29?", "Question 30: what about step 30?"]
    everything = json.dumps(first, ensure_ascii=False)
    assert [n for n in range(1, 29) if f"Question {n}:" in everything] == []  # nothing else
    assert sim.refused() == []

    old = json.loads(cli("chat", "show", chat, "--json"))
    shown = json.loads(cli("chat", "show", new, "--json"))
    assert old["continued_in"] == [{"id": new, "title": shown["title"]}]
    assert shown["continued_from"] == {"id": chat, "title": old["title"]}
    assert f"Continued in “{shown['title']}” ({new})" in cli("chat", "show", chat)
    exported = json.loads(cli("export", new))
    assert exported["continued_from"] == {"id": chat, "title": old["title"]}
    schema = Path(__file__).resolve().parents[2] / "resources" / "contextdesk.chat.schema.json"
    jsonschema.validate(json.loads(cli("export", chat)), json.loads(schema.read_text()))


def test_a_handoff_without_the_model_moves_and_drops_facts_and_says_what_it_left(
    cli: Any, sim: SimulatorServer
) -> None:
    chat = long_chat(cli, 6)
    facts = json.loads(cli("facts", chat, "--json"))
    before = len(sim.message_requests())
    dry = cli("handoff", chat, "--no-model", "--dry-run")
    assert "(dry run: nothing was made)" in dry
    assert "summary, a digest (no request):" in dry
    assert len(sim.message_requests()) == before  # no summary request
    out = json.loads(
        cli("handoff", chat, "--no-model", "--move-facts", "--drop-fact", facts[1]["id"], "--json")
    )
    assert len(sim.message_requests()) == before
    assert out["summary_by"] == "digest"
    assert "Your latest questions:" in out["summary"]
    assert out["dropped"] == ["The customer prefers e-mail."]
    left = json.loads(cli("facts", chat, "--json"))
    assert [f["text"] for f in left] == ["The customer prefers e-mail."]  # the other moved
    carried = json.loads(cli("facts", out["id"], "--json"))
    assert [f["text"] for f in carried] == ["Order #88213: refund 847.20 EUR"]


def test_a_handoff_whose_older_turns_one_summary_cannot_carry_says_so(tmp_path: Path) -> None:
    engine = Engine.open(tmp_path / "home", demo=True)
    try:
        chat = engine.create_demo_chat(turns=60)  # thousands of tokens before the kept turns
        chat.setup.set_settings(replace(chat.settings, context_window=1_000, max_tokens=200))
        with pytest.raises(ContextDeskError) as raised:
            preview_handoff(chat, 2, use_model=True)
        assert raised.value.title == "Too long to summarize at once"
        assert "keep more turns" in raised.value.message
        digested = preview_handoff(chat, 2, use_model=False)  # the way on it names
        assert not digested.by_model
        assert digested.summary
    finally:
        engine.close()
