"""Recorded responses of the real API (tests/data/recorded/README.md), replayed byte for
byte from a local socket through the real SDK, ContextDesk's backend and its loop: what
the simulator cannot tell us (it is our own reading of the docs) these can."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from desktop_app.chats import Engine
from desktop_app.core.blocks import OpaqueBlock, TextBlock, ThinkingBlock
from desktop_app.core.events import TransitionReason
from tests.fakes.tools import ScriptedApprover
from tests.integration.conftest import TEST_KEY

RECORDED = Path(__file__).parent.parent / "data" / "recorded" / "anthropic-sdk-python"


class Replay:
    """Answers each POST /v1/messages with the next recorded stream, as it was sent; keeps
    every request body."""

    def __init__(self, *streams: str) -> None:
        self.streams = [(RECORDED / name).read_bytes() for name in streams]
        self.bodies: list[dict[str, Any]] = []
        replay = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                replay.bodies.append(json.loads(self.rfile.read(length)))
                data = replay.streams.pop(0)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                self.wfile.write(data)
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"


@pytest.fixture
def replayed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    made: list[Replay] = []
    engines: list[Engine] = []

    def start(*streams: str) -> tuple[Replay, Engine]:
        replay = Replay(*streams)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", replay.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
        engine = Engine.open(tmp_path / "home")
        made.append(replay)
        engines.append(engine)
        return replay, engine

    yield start
    for engine in engines:
        engine.close()
    for replay in made:
        replay.server.shutdown()
        replay.server.server_close()


def test_a_fable_5_reply_with_thinking_and_a_refusal_is_kept_and_sent_back_unchanged(
    replayed: Any,
) -> None:
    replay, engine = replayed("stream-a-refusal.sse", "stream-b-fallback.sse")
    chat = engine.new_chat(model="claude-fable-5")
    finished = chat.turns.send("What is a solar eclipse, claudius?", ScriptedApprover())
    assert finished.reason is TransitionReason.REFUSAL  # a refusal is a 200, said as such
    reply = chat.messages()[-1]
    thinking, text = reply.blocks
    assert isinstance(thinking, ThinkingBlock)
    assert thinking.thinking.startswith("Simple educational question")
    assert thinking.signature.startswith("c3ludGhldGljLXNpZ25hdHVyZS1maXh0dXJl")
    assert isinstance(text, TextBlock)
    assert text.text == "Hi"
    assert reply.model == "claude-fable-5"
    usage = reply.usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.thinking_tokens) == (28, 106, 67)
    assert chat.costs.spend().cost > 0  # Fable 5 has a price

    chat.setup.change({"drop_old_thinking": "off"})  # earlier thinking goes back, as received
    chat.turns.send("And a lunar one?", ScriptedApprover())
    sent_back = replay.bodies[1]["messages"][1]["content"][0]
    assert sent_back == {
        "type": "thinking",
        "thinking": thinking.thinking,
        "signature": thinking.signature,
    }


def test_server_tool_blocks_from_a_recorded_stream_survive_the_next_request(
    replayed: Any,
) -> None:
    replay, engine = replayed("stream-a-toolrefusal.sse", "stream-b-fallback.sse")
    chat = engine.new_chat(model="claude-fable-5")
    chat.turns.send("Any solar eclipses this year? Is watching safe?", ScriptedApprover())
    reply = chat.messages()[-1]
    kinds = [type(b).__name__ for b in reply.blocks]
    assert kinds == ["OpaqueBlock", "OpaqueBlock", "TextBlock"]
    call, result = reply.blocks[0], reply.blocks[1]
    assert isinstance(call, OpaqueBlock)
    assert isinstance(result, OpaqueBlock)
    assert call.raw["input"] == {"query": "solar eclipse viewing safety news 2026"}
    assert result.raw["content"][0]["title"].startswith("How to Watch a Solar Eclipse")
    chat.turns.send("Thanks.", ScriptedApprover())
    again = replay.bodies[1]["messages"][1]["content"]
    recorded = [
        e for e in _events("stream-a-toolrefusal.sse") if e["type"] == "content_block_start"
    ]
    assert again[1] == recorded[1]["content_block"]  # the search result, byte for byte
    assert again[0]["id"] == "srvtoolu_fixture_a_0001"
    assert again[0]["input"] == {"query": "solar eclipse viewing safety news 2026"}


def test_the_usage_the_api_reports_is_read_whole() -> None:
    """A real (non-streaming) response's usage: cache fields by TTL, the service tier and
    the inference region do not upset the reader, and the counts are exact."""
    from desktop_app.core.wire import usage_from_api

    pairs = json.loads((RECORDED / "sonnet-4-5-tool-runner.json").read_text())
    usage = usage_from_api(pairs[0]["response"]["body"]["usage"])
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.cache_write_1h_tokens) == (617, 995, 0)


def _events(name: str) -> list[dict[str, Any]]:
    lines = (RECORDED / name).read_text().splitlines()
    return [json.loads(line[len("data: ") :]) for line in lines if line.startswith("data: ")]
