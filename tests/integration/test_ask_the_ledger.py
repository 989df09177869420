"""Ask the ledger (issue 34, item 2): for any text, the requests that carried it, the last
one, and — once the next request no longer carries it — what stopped it; across chats
too. Driven through the command line against the strict stand-in."""

from __future__ import annotations

import json
from typing import Any

from desktop_app.api.simulator import SimulatorServer
from desktop_app.api.simulator.script import Reply


def chat_with_an_order(cli: Any, sim: SimulatorServer, summary: str) -> str:
    """Four turns, the second naming order 88213; then compaction #1 (its summary as
    given) of the turns between the first (always sent) and the last, and one more turn."""
    chat = str(cli("chat", "new", "--keep-recent", "1").strip())
    cli("send", chat, "Hello, I need help with an order.")
    cli("send", chat, "Order 88213 arrived broken.")
    cli("send", chat, "What are my options?")
    cli("send", chat, "And the deadline?")
    sim.queue(Reply.text(summary))
    cli("compact", chat)
    cli("send", chat, "Thanks.")
    return chat


def test_a_text_a_compaction_summarized_away_is_traced_to_it(
    cli: Any, sim: SimulatorServer
) -> None:
    chat = chat_with_an_order(cli, sim, "The user's order arrived broken; options were given.")
    found = json.loads(cli("requests", chat, "--find", "88213", "--json"))
    assert found["requests"] == [2, 3, 4]  # the summary request (#5) is not a turn's
    assert (found["last"], found["in_next_request"]) == (4, False)
    assert found["stopped_by"] == "compaction #1"
    assert found["held_by"] == "message #4 (Claude)"  # (its reply quoted it: the newest)
    said = cli("requests", chat, "--find", "88213")
    assert "was in 3 of 6 requests: #2–#4 (last sent in request #4," in said
    assert (
        "Not in the next request: Compaction #1 summarized message #4 (Claude), and its summary "
        "does not quote it." in said
    )
    assert sim.refused() == []


def test_a_text_the_summary_quotes_is_still_sent_inside_it(cli: Any, sim: SimulatorServer) -> None:
    chat = chat_with_an_order(cli, sim, "Order 88213 arrived broken; options were given.")
    found = json.loads(cli("requests", chat, "--find", "88213", "--json"))
    assert found["requests"] == [2, 3, 4, 6]  # the turn after the compaction: in the summary
    assert (found["in_next_request"], found["stopped_by"]) == (True, None)
    assert found["why"] == "Compaction #1 summarized message #4 (Claude); still sent, inside it."


def test_a_pinned_fact_and_a_text_never_sent_and_every_chat(cli: Any, sim: SimulatorServer) -> None:
    chat = str(cli("chat", "new").strip())
    cli("pin", chat, "Refunds take 30 days.")
    cli("send", chat, "Hello")
    found = json.loads(cli("requests", chat, "--find", "30 days", "--json"))
    assert (found["requests"], found["held_by"]) == ([1], "a pinned fact")
    never = json.loads(cli("requests", chat, "--find", "77777", "--json"))
    assert (never["requests"], never["in_next_request"]) == ([], False)
    assert "No request of the 1 this chat sent carried “77777”." in cli(
        "requests", chat, "--find", "77777"
    )
    other = chat_with_an_order(cli, sim, "A broken order.")
    everywhere = json.loads(cli("requests", "--find", "88213", "--json"))
    assert [(e["chat"], e["requests"]) for e in everywhere] == [(other, [2, 3, 4])]
    assert other in cli("requests", "--find", "88213")
    assert "No request of any chat carried" in cli("requests", "--find", "nowhere", status=1)
