"""Today's models on a strict stand-in: the command line, the real SDK over a socket, and
a simulator that refuses what the API refuses for each model (a thinking budget on the
5.x models, `disabled` on Sonnet 5.5, a forced tool choice, a prefill, an effort a model
does not take, a thinking block bound to another model or conversation) and answers as
the 5.x models do (adaptive thinking, display omitted by default, notes between tool
calls as thinking blocks, signatures bound to the model and the prefix)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from desktop_app.api.simulator import Fault, FaultKind, Reply, SimulatorServer
from desktop_app.app import main
from tests.integration.conftest import TEST_KEY


def _thinking_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in message["content"] if b["type"] == "thinking"]


def test_forty_turns_across_todays_models_are_never_refused(
    cli: Any, sim: SimulatorServer, tmp_path: Path
) -> None:
    turns = 0

    def send(chat: str, text: str, requests: int = 1) -> dict[str, Any]:
        nonlocal turns
        before = len(sim.message_requests())
        cli("send", chat, text)
        turns += 1
        assert len(sim.message_requests()) == before + requests
        body: dict[str, Any] = sim.message_requests()[before].body
        return body

    chat = cli("chat", "new", "--model", "claude-sonnet-5-5").strip()
    cli("chat", "set", chat, "drop_old_thinking=off")  # earlier thinking is sent: bound
    first = send(chat, "Hello, plan a trip with me.")
    assert first["thinking"]["type"] == "adaptive"  # never a budget on Sonnet 5.5
    assert "budget_tokens" not in json.dumps(first["thinking"])
    for n in range(4):
        send(chat, f"Adaptive question {n}")
    cli("chat", "set", chat, "thinking=off")  # Sonnet 5.5's lowest: between_tools
    off = send(chat, "No thinking now, please.")
    assert off["thinking"] == {"type": "between_tools"}
    for effort in ("low", "max", "medium"):  # max with between_tools is refused: capped
        cli("chat", "set", chat, f"effort={effort}")
        body = send(chat, f"At {effort} effort.")
        assert body["output_config"]["effort"] == ("high" if effort == "max" else effort)
    cli("chat", "set", chat, "thinking=adaptive", "effort=max", "thinking_display=omitted")
    body = send(chat, "Think hard about this.")
    assert body["output_config"] == {"effort": "max"}
    assert body["thinking"] == {"type": "adaptive"}  # omitted is Sonnet 5.5's own default
    sim.queue(Reply.tools(("toolu_t1", "current_time", {}), text=""))
    send(chat, "What time is it?", requests=2)  # a tool loop: the note goes back unchanged
    loop = sim.message_requests()[-1].body
    replies = [m for m in loop["messages"] if m["role"] == "assistant"]
    assert _thinking_blocks(replies[-1]), "the progress note before the call went back"
    cli("chat", "set", chat, "thinking_display=summarized")
    cli("pin", chat, "The budget is 900 euros.")  # the system changes: earlier thinking
    send(chat, "And with the budget?")  # bound to the old prefix is left out, not refused
    # A mid-chat switch with thinking in the history, there and back.
    cli("chat", "set", chat, "model=claude-opus-5-5")
    opus = send(chat, "Now as Opus.")
    assert opus["model"] == "claude-opus-5-5"
    send(chat, "Opus again.")
    cli("chat", "set", chat, "model=claude-sonnet-5-5")
    back = send(chat, "Back to Sonnet.")
    for message in back["messages"]:  # Sonnet 5.5 cannot read Opus 5.5's thinking
        for block in _thinking_blocks(message) if message["role"] == "assistant" else []:
            assert '"m": "claude-opus-5-5"' not in _signature_payload(block["signature"])
    cli("chat", "set", chat, "model=claude-haiku-4-5", "thinking=2048")
    haiku = send(chat, "And now as Haiku with a budget.")
    assert haiku["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    for n in range(3):
        send(chat, f"Haiku turn {n}")
    cli("chat", "set", chat, "thinking=off")
    assert "thinking" not in send(chat, "Haiku without thinking.")

    # A second chat: Opus 5.5 from the start, every effort it takes.
    other = cli("chat", "new", "--model", "claude-opus-5-5").strip()
    for effort in ("low", "medium", "high", "xhigh", "max"):
        cli("chat", "set", other, f"effort={effort}")
        send(other, f"Opus at {effort}.")
    cli("chat", "set", other, "thinking=off")  # Opus 5.5 always thinks: its lowest effort
    assert send(other, "As little thinking as it takes.")["output_config"] == {"effort": "low"}
    sim.queue(Reply.tools(("toolu_o1", "current_time", {}), text="Let me look."))
    send(other, "What time is it there?", requests=2)

    # Haiku 5.5: off is `disabled`, taken only up to high effort.
    small = cli("chat", "new", "--model", "claude-haiku-5-5").strip()
    send(small, "Hello, Haiku 5.5.")
    cli("chat", "set", small, "thinking=off", "effort=xhigh")
    for n in range(5):
        body = send(small, f"Quick answer {n}.")
        assert body["thinking"] == {"type": "disabled"}
        assert body["output_config"] == {"effort": "high"}

    # An imported chat that forced a tool and ended with a prefill, on Sonnet 5.5.
    body = {
        "model": "claude-sonnet-5-5",
        "max_tokens": 2048,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "temperature": 0.2,
        "tools": [{"name": "lookup", "description": "Look up", "input_schema": {"type": "object"}}],
        "tool_choice": {"type": "tool", "name": "lookup"},
        "messages": [
            {"role": "user", "content": "Find the order."},
            {"role": "assistant", "content": "The order is"},
        ],
    }
    path = tmp_path / "request.json"
    path.write_text(json.dumps(body))
    report = json.loads(cli("import", str(path), "--json"))
    imported = report["id"]
    said = "\n".join(report["repairs"])
    assert "tool_choice" in said
    assert "not kept" in said
    assert "temperature" in said
    for n in range(8):
        sent = send(imported, f"Imported turn {n}")
        assert "tool_choice" not in sent
        assert "temperature" not in sent
        assert sent["thinking"]["type"] == "adaptive"

    assert turns >= 40
    assert sim.refused() == [], [r.answer for r in sim.refused()]
    for ref in (chat, other, imported):  # every chat on a priced model shows a cost
        shown = json.loads(cli("chat", "show", ref, "--json"))
        assert shown["cost"]["amount"] > 0
        assert shown["cost"]["models_without_a_price"] == []


def _signature_payload(signature: str) -> str:
    import base64

    if not signature.startswith("sim1."):
        return ""
    return base64.b64decode(signature[5:]).decode()


def test_the_stand_in_refuses_what_the_api_refuses(sim: SimulatorServer) -> None:
    """Sent raw, the 2025 way of asking is refused, as the API refuses it."""

    def post(body: dict[str, Any]) -> tuple[int, str]:
        status, answer = _post(
            sim, {"max_tokens": 1024, "messages": [{"role": "user", "content": "hi"}], **body}
        )
        return status, answer.get("error", {}).get("message", "")

    sonnet = {"model": "claude-sonnet-5-5"}
    assert post({**sonnet, "thinking": {"type": "enabled", "budget_tokens": 1024}})[0] == 400
    status, words = post({**sonnet, "thinking": {"type": "disabled"}})
    assert status == 400
    assert "between_tools" in words
    assert post({**sonnet, "temperature": 0.5})[0] == 400
    status, words = post(
        {
            **sonnet,
            "tools": [{"name": "t", "input_schema": {"type": "object"}}],
            "tool_choice": {"type": "any"},
        }
    )
    assert status == 400
    assert "tool_choice" in words
    status, words = post(
        {
            **sonnet,
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "Sure,"},
            ],
        }
    )
    assert status == 400
    assert "prefill" in words
    status, words = post(
        {**sonnet, "thinking": {"type": "between_tools"}, "output_config": {"effort": "max"}}
    )
    assert status == 400
    assert "'max' is not supported when thinking is disabled" in words
    assert post({"model": "claude-haiku-4-5", "output_config": {"effort": "low"}})[0] == 400
    assert post({"model": "claude-haiku-4-5", "thinking": {"type": "adaptive"}})[0] == 400
    assert post({"model": "claude-opus-5-5", "thinking": {"type": "disabled"}})[0] == 400
    # …and takes today's way.
    assert post({**sonnet, "thinking": {"type": "adaptive"}})[0] == 200
    assert post({**sonnet, "output_config": {"effort": "low"}})[0] == 200
    budget = {"type": "enabled", "budget_tokens": 1024}
    assert post({"model": "claude-haiku-4-5", "max_tokens": 2048, "thinking": budget})[0] == 200


def test_a_thinking_block_bound_to_another_prefix_is_refused(sim: SimulatorServer) -> None:
    """What the client must never send: the stand-in checks the binding itself."""

    def post(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return _post(sim, body)

    question: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]
    ask = {
        "model": "claude-sonnet-5-5",
        "max_tokens": 1024,
        "system": "Be brief.",
        "messages": question,
    }
    reply = post(ask)[1]
    thinking = [b for b in reply["content"] if b["type"] == "thinking"]
    assert thinking
    assert thinking[0]["thinking"] == ""
    again = {
        **ask,
        "messages": [
            *question,
            {"role": "assistant", "content": reply["content"]},
            {"role": "user", "content": "more"},
        ],
    }
    assert post(again)[0] == 200  # the same prefix: taken
    status, changed = post({**again, "system": "Be long."})  # the prefix before it changed
    assert status == 400
    assert "bound to a different conversation" in changed["error"]["message"]
    tampered = json.loads(json.dumps(again))
    tampered["messages"][1]["content"][0]["signature"] = thinking[0]["signature"][:-8] + "AAAAAAA="
    assert post(tampered)[0] == 400
    assert post({**again, "model": "claude-opus-5-5"})[0] == 200  # it reads Sonnet 5.5's


def _post(sim: SimulatorServer, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """A raw request, as another client would send it (no SDK, no ContextDesk)."""
    request = urllib.request.Request(
        f"{sim.base_url}/v1/messages",
        data=json.dumps(body).encode(),
        headers={"x-api-key": TEST_KEY, "content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            answer: dict[str, Any] = json.loads(reply.read())
            return reply.status, answer
    except urllib.error.HTTPError as refused:
        error: dict[str, Any] = json.loads(refused.read())
        return refused.code, error


def test_three_failed_compactions_send_three_requests(cli: Any, sim: SimulatorServer) -> None:
    """A 529 whose `x-should-retry` says no is not asked again (it was: three compactions
    made nine requests)."""
    chat = cli("chat", "new", "--model", "claude-haiku-4-5", "--keep-recent", "1").strip()
    for n in range(4):
        cli("send", chat, f"Question number {n} with a few words to summarize later.")
    before = len(sim.message_requests())
    for _ in range(3):
        sim.queue(Fault(FaultKind.OVERLOADED, should_retry=False))
        cli("compact", chat, "--dry-run", status=1)
    assert len(sim.message_requests()) - before == 3
    # Where the server says yes, the refusal is tried again (the test can tell).
    sim.queue(*[Fault(FaultKind.OVERLOADED)] * 3)
    cli("compact", chat, "--dry-run", status=1)
    assert len(sim.message_requests()) - before == 6


def test_model_facts_come_from_the_servers_list_and_are_kept(
    sim: SimulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop_app.chats import Engine

    monkeypatch.setenv("ANTHROPIC_BASE_URL", sim.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    engine = Engine.open(tmp_path / "home")
    try:
        listed = {m.id: m for m in engine.models()}
        sonnet = listed["claude-sonnet-5-5"]
        assert (sonnet.context_window, sonnet.max_output) == (1_000_000, 128_000)
        assert sonnet.thinking_types == frozenset({"adaptive", "between_tools"})
        assert sonnet.efforts == ("low", "medium", "high", "xhigh", "max")
        assert listed["claude-haiku-4-5"].efforts == ()
        assert engine.model_facts("claude-sonnet-5-5").source == "server"
    finally:
        engine.close()
    reopened = Engine.open(tmp_path / "home")  # known at once next time, before asking
    try:
        assert reopened.model_facts("claude-sonnet-5-5").source == "server"
        assert reopened.known_models()[0].source == "server"
    finally:
        reopened.close()


def test_a_switch_brings_the_models_window_and_limits_in_both_faces(cli: Any) -> None:
    chat = cli("chat", "new", "--model", "claude-sonnet-5-5").strip()
    cli("chat", "set", chat, "max_tokens=100000")
    shown = json.loads(cli("chat", "show", chat, "--json"))
    assert shown["settings"]["context_window"] == 1_000_000
    cli("chat", "set", chat, "model=claude-haiku-4-5")
    shown = json.loads(cli("chat", "show", chat, "--json"))
    assert shown["settings"]["context_window"] == 200_000  # not the 1M of the model before
    assert shown["settings"]["max_tokens"] == 64_000  # Haiku 4.5 writes no more


def test_a_chat_with_a_budget_from_before_moves_to_adaptive_and_says_so_once(
    cli: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from desktop_app.chats import Engine

    chat = cli("chat", "new", "--model", "claude-sonnet-5-5").strip()
    engine = Engine.open(cli.home)
    engine.store.db.execute(  # as ContextDesk stored a chat's budget in 2025
        "UPDATE chats SET settings = json_remove(json_set(settings, '$.thinking_budget', "
        "12000, '$.max_tokens', 16000), '$.thinking')"
    )
    engine.close()
    main(["--home", str(cli.home), "chat", "show", chat])
    said = capsys.readouterr().err
    assert "takes no thinking budget" in said
    assert "12,000 tokens" in said
    shown = json.loads(cli("chat", "show", chat, "--json"))
    assert (shown["settings"]["thinking"], shown["settings"]["effort"]) == ("adaptive", "medium")
    main(["--home", str(cli.home), "chat", "show", chat])
    assert "thinking budget" not in capsys.readouterr().err  # said once


def test_a_price_is_entered_for_a_model_the_table_lacks(cli: Any) -> None:
    assert "no price for my-local-model" not in cli("prices")
    cli("prices", "set", "my-local-model", "input=1", "output=4")
    listed = json.loads(cli("prices", "--json"))["models"]["my-local-model"]
    assert (listed["input"], listed["output"], listed["cache_read"]) == (1.0, 4.0, 0.1)
    cli("prices", "set", "my-local-model", "input=abc", status=2)
    cli("prices", "set", "another", "input=1", status=2)  # a new model needs its output too
