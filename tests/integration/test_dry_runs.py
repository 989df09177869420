"""The window's remaining actions on the command line — `edit`, `regenerate`, `retry`,
`exclude`, `include` — each checked as test_next_request.py checks `context --request`:
the body `--dry-run` prints is exactly the body the command then sends, as the simulator
received it, and the dry run changes nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from desktop_app.api.simulator import Reply, SimulatorServer
from desktop_app.api.simulator.script import Fault, FaultKind
from desktop_app.chats.names import ONE_WORD

pytestmark = pytest.mark.timeout(120)

Cli = Callable[..., str]


def sent_as_dry_run(cli: Cli, sim: SimulatorServer, *command: str) -> dict[str, Any]:
    """Run `command --dry-run`, check it changed nothing, run `command`, and check the
    first request it sent is the body the dry run printed; returns that body."""
    chat = command[1]
    before = (cli("chat", "show", chat, "--json"), cli("branch", chat, "--json"))
    sent_before = len(sim.message_requests())
    shown: dict[str, Any] = json.loads(cli(*command, "--dry-run"))
    assert (cli("chat", "show", chat, "--json"), cli("branch", chat, "--json")) == before
    assert len(sim.message_requests()) == sent_before  # a dry run sends nothing
    cli(*command)
    first: dict[str, Any] = sim.message_requests()[sent_before].body
    assert {k: v for k, v in first.items() if k != "stream"} == shown
    return shown


def texts(body: dict[str, Any]) -> list[str]:
    return [
        block.get("text", block["type"])
        for message in body["messages"]
        for block in message["content"]
    ]


def new_chat(cli: Cli) -> str:
    chat: str = cli("chat", "new", "--model", "claude-haiku-4-5").strip()
    cli("pin", chat, "The order number is #88213.")
    cli("send", chat, "What was my order number?")
    cli("send", chat, "And when did it ship?")
    return chat


def shown_roles(cli: Cli, chat: str) -> list[tuple[str, str]]:
    messages = json.loads(cli("chat", "show", chat, "--json"))["messages"]
    return [(m["role"], m["content"][0].get("text", "")) for m in messages]


def test_edit_sends_the_dry_run_s_body_on_a_new_branch(cli: Cli, sim: SimulatorServer) -> None:
    chat = new_chat(cli)
    assert "#3 user (text):\nAnd when did it ship?" in cli("chat", "show", chat)  # N is shown

    shown = sent_as_dry_run(cli, sim, "edit", chat, "3", "And where did it ship from?")
    assert texts(shown)[-1] == "And where did it ship from?"
    assert "And when did it ship?" not in json.dumps(shown)  # the old version is not sent
    assert "#88213" in json.dumps(shown["system"])  # the pinned fact, as `send` sends it
    branches = json.loads(cli("branch", chat, "--json"))
    assert [(b["shown"], b["differs_at"]) for b in branches] == [(False, 3), (True, 3)]
    assert shown_roles(cli, chat)[2] == ("user", "And where did it ship from?")

    shown = sent_as_dry_run(cli, sim, "edit", chat, "1", "What is my order number?")
    assert texts(shown) == ["What is my order number?"]  # a first message: nothing before it


def test_edit_takes_only_a_message_of_yours_and_some_text(cli: Cli, sim: SimulatorServer) -> None:
    chat = new_chat(cli)
    sent = len(sim.message_requests())
    assert "Not your message" in cli("edit", chat, "2", "words", status=2)
    assert "Nothing to send" in cli("edit", chat, "1", "   ", "--dry-run", status=2)
    assert "No such message" in cli("edit", chat, "9", "words", status=2)
    assert len(sim.message_requests()) == sent
    assert len(json.loads(cli("branch", chat, "--json"))) == 1


def test_regenerate_sends_the_dry_run_s_body_beside_the_reply(
    cli: Cli, sim: SimulatorServer
) -> None:
    chat = new_chat(cli)
    sim.queue(Reply.text("Shipped on Monday."))
    shown = sent_as_dry_run(cli, sim, "regenerate", chat)  # the last reply
    assert texts(shown)[-1] == "And when did it ship?"
    assert shown_roles(cli, chat)[-1] == ("assistant", "Shipped on Monday.")

    sim.queue(Reply.text("It is #88213."))
    shown = sent_as_dry_run(cli, sim, "regenerate", chat, "2")  # reply 2: the first question's
    assert texts(shown) == ["What was my order number?"]
    assert shown_roles(cli, chat) == [
        ("user", "What was my order number?"),
        ("assistant", "It is #88213."),
    ]
    assert len(json.loads(cli("branch", chat, "--json"))) == 3

    assert "Not a reply" in cli("regenerate", chat, "1", status=2)


def test_retry_sends_the_dry_run_s_body_after_a_failed_reply(
    cli: Cli, sim: SimulatorServer
) -> None:
    chat = new_chat(cli)
    broken = Reply.text("It shipped on a day that this sentence never gets to say")
    sim.queue(Fault(FaultKind.MID_STREAM_ERROR, after_events=4, reply=broken))
    cli("send", chat, "Which carrier?", status=1)
    assert json.loads(cli("chat", "show", chat, "--json"))["messages"][-1]["status"] == "error"

    sim.queue(Reply.text("The carrier is DHL."))
    shown = sent_as_dry_run(cli, sim, "retry", chat)
    assert texts(shown)[-1] == "Which carrier?"  # the failed reply is not sent
    assert shown_roles(cli, chat)[-2:] == [
        ("user", "Which carrier?"),
        ("assistant", "The carrier is DHL."),
    ]
    # The new answer is a version of the failed one (as the window's Retry makes it)
    assert len(json.loads(cli("branch", chat, "--json"))) == 2

    # A send refused before any reply: the question is answered as it stands
    sim.queue(Fault(FaultKind.SERVER_ERROR, should_retry=False))
    cli("send", chat, "And the tracking number?", status=1)
    shown = sent_as_dry_run(cli, sim, "retry", chat)
    assert texts(shown)[-1] == "And the tracking number?"


def test_retry_with_nothing_to_retry_says_so_and_sends_nothing(
    cli: Cli, sim: SimulatorServer
) -> None:
    chat = new_chat(cli)
    sent = len(sim.message_requests())
    for dry_run in ((), ("--dry-run",)):
        assert "Nothing to retry" in cli("retry", chat, *dry_run, status=1)
    assert len(sim.message_requests()) == sent
    assert len(shown_roles(cli, chat)) == 4


def test_exclude_and_include_change_the_next_request_as_the_dry_run_shows(
    cli: Cli, sim: SimulatorServer
) -> None:
    chat = new_chat(cli)
    answer = shown_roles(cli, chat)[1][1]

    def next_send_as_dry_run(command: str) -> dict[str, Any]:
        context = cli("context", chat, "--json")
        shown: dict[str, Any] = json.loads(cli(command, chat, "2", "--dry-run"))
        assert cli("context", chat, "--json") == context  # a dry run changes nothing
        assert "Message 2 is" in cli(command, chat, "2")
        before = len(sim.message_requests())
        cli("send", chat, ONE_WORD)  # the word the next request is shown with
        first = sim.message_requests()[before].body
        assert {k: v for k, v in first.items() if k != "stream"} == shown
        return shown

    excluded = next_send_as_dry_run("exclude")
    assert answer not in texts(excluded)
    state = json.loads(cli("context", chat, "--json"))["messages"][1]["blocks"][0]["state"]
    assert state == "excluded"
    included = next_send_as_dry_run("include")
    assert answer in texts(included)
    assert "No such message" in cli("exclude", chat, "99", status=2)


def summarized_chat(cli: Cli) -> str:
    """Four turns, the first three of them summarized."""
    chat: str = cli("chat", "new", "--model", "claude-haiku-4-5", "--keep-recent", "1").strip()
    for n in range(4):
        cli("send", chat, f"Question {n + 1}?")
    cli("compact", chat)
    assert json.loads(cli("export", chat))["summaries"]
    return chat


def test_after_a_summary_the_dry_runs_still_show_what_is_sent(
    cli: Cli, sim: SimulatorServer
) -> None:
    """A new branch from inside the summarized turns does not take the summary along
    (it stands for messages the branch does not have)."""
    chat = summarized_chat(cli)
    summary = "[Summary"
    shown = sent_as_dry_run(cli, sim, "regenerate", chat)  # the last reply: after the summary
    assert any(summary in text for text in texts(shown))
    sent_as_dry_run(cli, sim, "edit", chat, "7", "Question 4, again?")
    shown = sent_as_dry_run(cli, sim, "regenerate", chat, "2")  # inside the summary
    assert texts(shown) == ["Question 1?"]

    shown = sent_as_dry_run(cli, sim, "edit", summarized_chat(cli), "3", "Question 2, again?")
    assert texts(shown)[-1] == "Question 2, again?"
    assert not any(summary in text for text in texts(shown))
