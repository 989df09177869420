"""Past chats as a visible tool (issue 34, item 3): off unless the chat turns it on; when
on, a turn whose server asks search_chats gets other chats' messages — only the
project's, when limited to it — as an ordinary tool step that asked first."""

from __future__ import annotations

import json
from typing import Any

from desktop_app.api.simulator import SimulatorServer
from desktop_app.api.simulator.script import Reply


def offered(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body.get("tools", [])]


def test_search_chats_finds_the_project_s_other_chats_only(cli: Any, sim: SimulatorServer) -> None:
    cli("project", "new", "Acme")
    inside = cli("chat", "new", "--project", "Acme").strip()
    outside = cli("chat", "new").strip()
    here = cli("chat", "new", "--project", "Acme").strip()
    cli("send", inside, "The codename is bluebird, for the Acme launch.")
    cli("send", outside, "My bluebird password is private.")
    cli("send", here, "Hello")
    assert "search_chats" not in offered(sim.message_requests()[-1].body)  # off by default

    cli("chat", "set", here, "search_chats=project")
    sim.queue(
        Reply.tools(("toolu_s1", "search_chats", {"query": "bluebird"}), text="Let me look."),
        Reply.text("The codename is bluebird."),
    )
    cli("send", here, "What was the codename?", "--allow-tools", "search_chats")
    first, second = sim.message_requests()[-2:]
    assert "search_chats" in offered(first.body)
    result = json.dumps(second.body["messages"][-1], ensure_ascii=False)
    assert "The codename is bluebird, for the Acme launch." in result
    assert f"({inside})" in result
    assert "password" not in result  # a chat outside the project is not searched
    assert "Hello" not in result  # nor this chat itself
    assert sim.refused() == []

    exported = json.loads(cli("export", here))
    tool_step = next(m for m in exported["messages"] if '"tool_result"' in json.dumps(m["content"]))
    assert tool_step["token_estimates"][0] > 0  # what it added, counted like any result


def test_search_chats_asks_first_and_skips_the_trash(cli: Any, sim: SimulatorServer) -> None:
    old = cli("chat", "new").strip()
    cli("send", old, "The bluebird plan is off.")
    cli("chat", "delete", old)  # (to the trash)
    kept = cli("chat", "new").strip()
    cli("send", kept, "The bluebird plan is on again.")
    here = cli("chat", "new").strip()
    cli("chat", "set", here, "search_chats=all")

    def searched(*allow: str) -> str:
        sim.queue(
            Reply.tools(("toolu_s" + str(len(allow)), "search_chats", {"query": "bluebird"})),
            Reply.text("Nothing."),
        )
        cli("send", here, "Any bluebird plan?", *allow)
        return json.dumps(sim.message_requests()[-1].body["messages"][-1], ensure_ascii=False)

    refused = searched()  # not allowed: the command line does not run a tool that asks
    assert '"is_error": true' in refused
    assert "bluebird plan is on again" not in refused  # nothing was read
    found = searched("--allow-tools", "search_chats")
    assert "bluebird plan is on again" in found
    assert "bluebird plan is off" not in found  # the trash is never read
