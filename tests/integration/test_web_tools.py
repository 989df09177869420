"""Web search and web fetch (issue 36, item 1), on the strict stand-in: the request
carries the API's own tools in the versions the model takes; the reply's
`server_tool_use` / result blocks and its citations go back in the next request
unmodified; the ledger prices the searches; a paused turn goes on as the docs say; and
what the API refuses (both domain lists, count_tokens with server tools) is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import pytest

from desktop_app.api.simulator import SimulatorServer
from desktop_app.api.simulator.script import Reply
from tests.integration.conftest import TEST_KEY


def server_tools(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in body.get("tools", []) if "type" in t}


def test_web_search_goes_back_unmodified_and_its_searches_are_priced(
    cli: Any, sim: SimulatorServer
) -> None:
    cli("settings", "server_tools=on")  # (the stand-in is not api.anthropic.com)
    chat = cli("chat", "new").strip()
    cli("send", chat, "Search the web for the latest Example release")
    assert server_tools(sim.message_requests()[-1].body) == {}  # off by default

    cli(
        "chat",
        "set",
        chat,
        "web_search=on",
        "web_max_uses=3",
        "web_domains=example.org,example.com",
    )
    out = cli("send", chat, "Search the web for the latest Example release")
    first = sim.message_requests()[-1].body
    tool = server_tools(first)["web_search"]
    assert tool == {
        "type": "web_search_20260318",  # Sonnet 5.5: the newest, called directly
        "name": "web_search",
        "max_uses": 3,
        "allowed_callers": ["direct"],
        "allowed_domains": ["example.com", "example.org"],
    }
    assert "[1] Release notes | Example Docs https://docs.example.org/release-notes" in out
    assert "example.net" not in out  # outside the allowed domains: not a result

    cli("send", chat, "Thanks. Which one is newest?")
    second = sim.message_requests()[-1].body
    sent_back = next(
        m["content"]
        for m in second["messages"]
        if m["role"] == "assistant" and '"server_tool_use"' in json.dumps(m["content"])
    )
    kinds = [b["type"] for b in sent_back]
    assert "server_tool_use" in kinds
    assert "web_search_tool_result" in kinds
    cited = [b for b in sent_back if b.get("citations")]
    assert cited
    assert cited[0]["citations"][0]["type"] == "web_search_result_location"
    assert cited[0]["citations"][0]["encrypted_index"]  # opaque fields as they came
    assert sim.refused() == []

    # The ledger: one search, at $10 per 1,000, on top of the tokens.
    listed = json.loads(cli("requests", chat, "--json"))
    searched = [r for r in listed if (r.get("usage") or {}).get("server_tool_use")]
    assert [r["usage"]["server_tool_use"]["web_search_requests"] for r in searched] == [1]
    report = json.loads(cli("spend", "all", "--by", "chat", "--json"))
    total = report["total"]
    assert total["web_searches"] == 1
    assert total["cost_by_kind"]["web_search"] == pytest.approx(0.01)
    tokens = sum(v for k, v in total["cost_by_kind"].items() if k != "web_search")
    assert total["cost"] == pytest.approx(tokens + 0.01)


def test_a_project_s_new_chats_start_with_its_web_choice(cli: Any, sim: SimulatorServer) -> None:
    cli("settings", "server_tools=on")
    project = cli("project", "new", "Research").strip()
    cli("project", "set", project, "web_search=on", "web_blocked_domains=example.net")
    chat = cli("chat", "new", "--project", project).strip()
    cli("send", chat, "Search for the latest Example release")
    tool = server_tools(sim.message_requests()[-1].body)["web_search"]
    assert tool["blocked_domains"] == ["example.net"]
    assert "web_fetch" not in server_tools(sim.message_requests()[-1].body)


def test_a_paused_turn_goes_on_with_the_reply_sent_back_as_it_is(
    cli: Any, sim: SimulatorServer
) -> None:
    cli("settings", "server_tools=on")
    chat = cli("chat", "new").strip()
    cli("chat", "set", chat, "web_search=on")
    paused = (
        {
            "type": "server_tool_use",
            "id": "srvtoolu_p1",
            "name": "web_search",
            "input": {"query": "q"},
        },
        {
            "type": "web_search_tool_result",
            "tool_use_id": "srvtoolu_p1",
            "content": [
                {
                    "type": "web_search_result",
                    "url": "https://docs.example.org/a",
                    "title": "A",
                    "encrypted_content": "ZW5j",
                }
            ],
        },
    )
    sim.queue(Reply(paused, "pause_turn"), Reply.text("Done researching."))
    out = cli("send", chat, "Research this for a while")
    assert "Done researching." in out
    again = sim.message_requests()[-1].body["messages"]
    assert again[-1]["role"] == "assistant"  # the paused reply, last and unchanged
    assert [b for b in again[-1]["content"] if b["type"] != "thinking"] == list(paused)
    assert sim.refused() == []


def test_web_fetch_cites_the_page_and_counts_it(cli: Any, sim: SimulatorServer) -> None:
    cli("settings", "server_tools=on")
    chat = cli("chat", "new", "--model", "claude-haiku-4-5").strip()
    cli("chat", "set", chat, "web_fetch=on", "tool_result_cap=2000")
    out = cli("send", chat, "Read https://docs.example.org/release-notes please")
    tool = server_tools(sim.message_requests()[-1].body)["web_fetch"]
    # Haiku 4.5 is older than Claude 4.6: the first version, without allowed_callers.
    assert tool["type"] == "web_fetch_20250910"
    assert "allowed_callers" not in tool
    assert tool["citations"] == {"enabled": True}
    assert tool["max_content_tokens"] == 2000
    assert "[1] Release notes | Example Docs" in out
    shown = json.loads(cli("chat", "show", chat, "--json"))
    reply = shown["messages"][-1]
    assert any(b["type"] == "web_fetch_tool_result" for b in reply["content"])


def test_what_the_api_refuses_is_refused_before_sending(cli: Any, sim: SimulatorServer) -> None:
    chat = cli("chat", "new").strip()
    refused = cli("chat", "set", chat, "web_domains=a.com", "web_blocked_domains=b.com", status=2)
    assert "cannot both be set" in refused
    assert "must be between 1 and 50" in cli("chat", "set", chat, "web_max_uses=0", status=2)
    typed = cli("chat", "set", chat, "web_domains=https://example.org/docs", status=2)
    assert "web_domains must be domains such as example.com (no https://)" in typed


def test_the_stand_in_refuses_as_the_api_does(sim: SimulatorServer) -> None:
    client = anthropic.Anthropic(api_key=TEST_KEY, base_url=sim.base_url, max_retries=0)
    messages: Any = [{"role": "user", "content": "hi"}]
    both: Any = {
        "type": "web_search_20250305",
        "name": "web_search",
        "allowed_domains": ["a.com"],
        "blocked_domains": ["b.com"],
    }
    with pytest.raises(anthropic.BadRequestError, match="both allowed_domains and blocked"):
        client.messages.create(
            model="claude-sonnet-5-5", max_tokens=64, messages=messages, tools=[both]
        )
    newer: Any = {"type": "web_search_20260318", "name": "web_search"}
    with pytest.raises(anthropic.BadRequestError, match="allowed_callers"):
        client.messages.create(
            model="claude-haiku-4-5", max_tokens=64, messages=messages, tools=[newer]
        )
    with pytest.raises(anthropic.BadRequestError, match="server tools"):
        client.messages.count_tokens(model="claude-sonnet-5-5", messages=messages, tools=[newer])


def test_an_imported_request_with_web_search_goes_on(
    cli: Any, sim: SimulatorServer, tmp_path: Path
) -> None:
    """A recorded request (pydantic-ai's cassette) with web search in its tools and its
    history: imported, the chat searches on and the recorded blocks go back as they were."""
    recorded = Path(__file__).parents[1] / "data/api_histories/accepted"
    request = json.loads((recorded / "003-pydantic-ai-web-search-server-tool.json").read_text())
    body = tmp_path / "request.json"
    body.write_text(json.dumps(request["request"]))
    cli("settings", "server_tools=on")
    cli("import", str(body))
    chat = json.loads(cli("chat", "list", "--json"))[0]["id"]
    cli("send", chat, "And tomorrow?")
    sent = sim.message_requests()[-1].body
    assert "web_search" in server_tools(sent)
    recorded_blocks = [
        b
        for m in request["request"]["messages"]
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if b.get("type") in ("server_tool_use", "web_search_tool_result")
    ]
    assert recorded_blocks
    went = [
        b
        for m in sent["messages"]
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if b.get("type") in ("server_tool_use", "web_search_tool_result")
    ]
    assert went == recorded_blocks  # unmodified, encrypted contents and all
    assert sim.refused() == []
