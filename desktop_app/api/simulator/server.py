"""The simulator's HTTP server (standard library only: it must start in milliseconds).

Frames are exactly what the SDK expects: `event: <type>` then `data: <one-line JSON>`
then a blank line; a missing `event:` line would make the SDK drop the frame silently.
Streams are close-delimited, so a cut-off or a hang looks to the client just like a
dropped connection or a silent server.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from desktop_app.api.simulator import demo, web
from desktop_app.api.simulator.caching import CacheUsage, SimulatedCache
from desktop_app.api.simulator.documents import document_reply, pdf_pages_in
from desktop_app.api.simulator.script import Fault, FaultKind, Reply, Script
from desktop_app.api.simulator.thinking import thinking_problem, with_thinking
from desktop_app.core.model_facts import BUILTIN, DEMO, EFFORTS, ModelFacts
from desktop_app.core.request_rules import body_problems


def _listed(facts: ModelFacts, display_name: str) -> dict[str, Any]:
    """A model as the Models API lists it (SDK `types/model_info.py`: limits, lifecycle
    and the capabilities ContextDesk reads — thinking types and effort levels)."""
    efforts = {level: {"supported": level in facts.efforts} for level in EFFORTS}
    types = ("adaptive", "enabled", "disabled", "between_tools")
    return {
        "id": facts.id,
        "display_name": display_name,
        "max_input_tokens": facts.context_window,
        "max_tokens": facts.max_output,
        "lifecycle": facts.lifecycle,
        "capabilities": {
            "thinking": {
                "supported": facts.can_think,
                "types": {t: {"supported": t in facts.thinking_types} for t in types},
            },
            "effort": {"supported": bool(facts.efforts), **efforts},
            "server_tools": {
                "supported": facts.web_search,
                "web_search": {"supported": facts.web_search},
                "code_execution": {"supported": True},
            },
        },
    }


MODELS = [
    _listed(DEMO, DEMO.display_name),
    *(_listed(f, f"{f.display_name} (simulated)") for f in BUILTIN if f.lifecycle == "active"),
]
HANG_LIMIT_S = 60.0


@dataclass
class Received:
    """One request the simulator received, for tests to inspect."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    status: int = 0  # the status it was answered with (0: not answered yet)
    answer: str = ""  # an error's message


@dataclass
class SimulatorState:
    script: Script = field(default_factory=Script)
    received: list[Received] = field(default_factory=list)
    # Tests read every request; the app's demo keeps none (each a parsed body, held for
    # as long as the app runs: a long demo chat's requests were megabytes each).
    recording: bool = True
    count_tokens_available: bool = True
    required_key: str | None = None  # None: any non-empty key is accepted
    frame_delay_s: float = 0.0  # pause between stream frames (a slow model, for crash tests)
    stopping: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    clock: Callable[[], float] = time.time  # what the prompt cache's lifetimes run on
    cache_file: Path | None = None  # where the prompt cache is kept between runs (the demo)
    cache: SimulatedCache = field(init=False)

    def __post_init__(self) -> None:
        self.cache = SimulatedCache(lambda: self.clock(), self.cache_file)


class SimulatorServer:
    """`with SimulatorServer() as sim: sim.base_url …` — a server on an ephemeral port."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        cache_file: Path | None = None,
        recording: bool = True,
    ) -> None:
        self.state = SimulatorState(cache_file=cache_file, recording=recording)
        handler = type("Handler", (_Handler,), {"sim": self.state})
        self._server = ThreadingHTTPServer((host, port), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="simulator", daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> SimulatorServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop at once: the serving loop looks for the request to stop between waits of
        half a second, and a connection ends its wait (half of the two slowest test
        files was that wait)."""
        self.state.stopping.set()  # releases hanging streams
        if self._thread.is_alive():
            stopper = threading.Thread(target=self._server.shutdown, name="simulator-stop")
            stopper.start()
            while stopper.is_alive():
                host, port = self._server.server_address[:2]
                with contextlib.suppress(OSError):
                    socket.create_connection((str(host), port), 0.2).close()
                stopper.join(0.02)
        self._server.server_close()

    def __enter__(self) -> SimulatorServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def queue(self, *items: Reply | Fault) -> None:
        with self.state.lock:
            self.state.script.items.extend(items)

    @property
    def received(self) -> list[Received]:
        return list(self.state.received)

    def message_requests(self) -> list[Received]:
        return [r for r in self.state.received if r.path == "/v1/messages"]

    def refused(self) -> list[Received]:
        """Requests answered 400 (a request the API would refuse)."""
        return [r for r in self.state.received if r.status == 400]


class _Handler(BaseHTTPRequestHandler):
    sim: SimulatorState
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: tests read `received`, not stderr

    # -- routing ------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._record(None)
        if not self._authorized():
            return
        if self.path.rstrip("/") == "/v1/models":
            data = [_model(m) for m in MODELS]
            self._json(
                200,
                {
                    "data": data,
                    "has_more": False,
                    "first_id": data[0]["id"],
                    "last_id": data[-1]["id"],
                },
            )
        elif match := re.fullmatch(r"/v1/models/([\w.:-]+)", self.path):
            model = next((m for m in MODELS if m["id"] == match.group(1)), None)
            if model:
                self._json(200, _model(model))
            else:
                self._error(404, "not_found_error", f"model: {match.group(1)}")
        else:
            self._error(404, "not_found_error", f"Not found: {self.path}")

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            self._record(raw.decode("utf-8", "replace"))
            self._error(
                400, "invalid_request_error", f"The request body is not valid JSON: {exc!s}"
            )
            return
        self._record(body)
        if not self._authorized():
            return
        path = self.path.split("?")[0]
        if path == "/v1/messages/count_tokens":
            self._count_tokens(body)
        elif path == "/v1/messages":
            self._messages(body)
        else:
            self._error(404, "not_found_error", f"Not found: {self.path}")

    # -- endpoints -----------------------------------------------------------------------

    def _count_tokens(self, body: Any) -> None:
        if not self.sim.count_tokens_available:
            self._error(404, "not_found_error", "Not found: /v1/messages/count_tokens")
            return
        problem = _check_request(body, needs_max_tokens=False)
        if not problem and web.offers_server_tools(body):
            problem = "tools: count_tokens does not support server tools (web search, web fetch)"
        if problem:
            self._error(400, "invalid_request_error", problem)
            return
        self._json(200, {"input_tokens": _estimate(body)})

    def _messages(self, body: Any) -> None:
        problem = (
            _check_request(body, needs_max_tokens=True)
            or thinking_problem(body)
            or web.tools_problem(body)
        )
        if problem:
            self._error(400, "invalid_request_error", problem)
            return
        with self.sim.lock:
            item = self.sim.script.next()
        purpose = self.headers.get("x-contextdesk-purpose", "chat")
        if isinstance(item, Fault) and item.kind in (
            FaultKind.RATE_LIMITED,
            FaultKind.OVERLOADED,
            FaultKind.SERVER_ERROR,
        ):
            status, kind, text = {
                FaultKind.RATE_LIMITED: (
                    429,
                    "rate_limit_error",
                    "Number of request tokens has exceeded your per-minute rate limit",
                ),
                FaultKind.OVERLOADED: (529, "overloaded_error", "Overloaded"),
                FaultKind.SERVER_ERROR: (500, "api_error", "Internal server error"),
            }[item.kind]
            self._error(
                status,
                kind,
                text,
                retry_after_ms=item.retry_after_ms,
                should_retry=item.should_retry,
            )
            return
        fault = item if isinstance(item, Fault) else None
        if fault is not None and fault.kind is FaultKind.SILENT:
            self.close_connection = True
            self.sim.stopping.wait(HANG_LIMIT_S)  # not even the status line
            return
        reply = (
            item if isinstance(item, Reply) else (fault.reply if fault and fault.reply else None)
        )
        if reply is None:
            cited = None
            if purpose == "chat":
                cited = web.web_reply(body, demo.LABEL) or document_reply(body, demo.LABEL)
            reply = cited or demo.answer(body, purpose)
        reply = Reply(tuple(with_thinking(body, list(reply.content))), reply.stop_reason)
        message = _message(body, reply, self.sim.cache.use(body))
        if body.get("stream"):
            self._stream(message, fault)
        else:
            self._json(200, message)

    def _stream(self, message: dict[str, Any], fault: Fault | None) -> None:
        self._received.status = 200
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", _request_id())
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        limit = fault.after_events if fault else -1
        for n, (event, data) in enumerate(_events(message, fault)):
            if n == limit and fault is not None:
                if fault.kind is FaultKind.HANG:
                    self.sim.stopping.wait(HANG_LIMIT_S)
                    return
                if fault.kind is FaultKind.PINGS:
                    self._ping_until_stopped()
                    return
                if fault.kind is FaultKind.MALFORMED_SSE:
                    self.wfile.write(b"event: content_block_delta\ndata: {not json\n\n")
                    self.wfile.flush()
                    return
                if fault.kind is FaultKind.CUT_OFF:
                    return
                if fault.kind is FaultKind.MID_STREAM_ERROR:
                    self._frame(
                        "error",
                        {
                            "type": "error",
                            "error": {"type": "overloaded_error", "message": "Overloaded"},
                        },
                    )
                    return
            try:
                self._frame(event, data)
            except (BrokenPipeError, ConnectionResetError):
                return  # the client went away (cancel)
            if self.sim.frame_delay_s and self.sim.stopping.wait(self.sim.frame_delay_s):
                return
        if fault is not None and fault.kind is FaultKind.HANG and limit < 0:
            self.sim.stopping.wait(HANG_LIMIT_S)

    def _ping_until_stopped(self) -> None:
        deadline = time.monotonic() + HANG_LIMIT_S
        while time.monotonic() < deadline and not self.sim.stopping.wait(0.1):
            try:
                self._frame("ping", {"type": "ping"})
            except (BrokenPipeError, ConnectionResetError):
                return

    # -- plumbing -------------------------------------------------------------------------

    def _record(self, body: Any) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        self._received = Received(self.command, self.path.split("?")[0], headers, body)
        if self.sim.recording:
            self.sim.received.append(self._received)

    def _authorized(self) -> bool:
        key = (
            self.headers.get("x-api-key")
            or self.headers.get("authorization", "").removeprefix("Bearer ").strip()
        )
        if key and self.sim.required_key in (None, key):
            return True
        self._error(
            401,
            "authentication_error",
            "invalid x-api-key" if key else "x-api-key header is required",
        )
        return False

    def _frame(self, event: str, data: dict[str, Any]) -> None:
        self.wfile.write(
            f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()
        )
        self.wfile.flush()

    def _json(
        self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        received = getattr(self, "_received", None)
        if received is not None:
            received.status = status
            error = payload.get("error") if isinstance(payload, dict) else None
            received.answer = str(error.get("message", "")) if isinstance(error, dict) else ""
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", _request_id())
        self.send_header("connection", "close")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def _error(
        self,
        status: int,
        kind: str,
        message: str,
        *,
        retry_after_ms: int = 0,
        should_retry: bool = False,
    ) -> None:
        headers = {"x-should-retry": "true" if should_retry else "false"}
        if retry_after_ms:
            headers["retry-after-ms"] = str(retry_after_ms)
            headers["retry-after"] = str(max(1, retry_after_ms // 1000))
        body = {
            "type": "error",
            "error": {"type": kind, "message": message},
            "request_id": _request_id(),
        }
        self._json(status, body, headers)


def _check_request(body: Any, *, needs_max_tokens: bool) -> str:
    """The API's 400 message for this body, or "" when it would be accepted."""
    if not isinstance(body, dict):
        return "Input should be a valid dictionary"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: Field required"
    if needs_max_tokens and not (
        isinstance(body.get("max_tokens"), int) and body["max_tokens"] >= 1
    ):
        return "max_tokens: Field required"
    problems = body_problems(body)
    if problems:
        return str(problems[0])
    model = next((m for m in MODELS if m["id"] == body["model"]), None)
    window = int(str(model["max_input_tokens"])) if model else 200_000
    pages, most = pdf_pages_in(body), 600 if window >= 1_000_000 else 100
    if pages > most:  # (pdf-support page: 600 a request, 100 under a 1M window)
        return f"A maximum of {most} PDF pages may be provided; this request has {pages}"
    tokens = _estimate(body)
    if tokens > window:
        return f"prompt is too long: {tokens} tokens > {window} maximum"
    if needs_max_tokens and tokens + body["max_tokens"] > window:
        limit = body["max_tokens"]
        return f"input length and `max_tokens` exceed context limit: {tokens} + {limit} > {window}"
    return ""


def _estimate(body: dict[str, Any]) -> int:
    """The simulator's token count: about 4 bytes of JSON per token — but a PDF document
    as the API counts one, by its pages (each an image and its text), not its base64."""
    relevant = {k: body.get(k) for k in ("system", "messages", "tools")}
    if '"document"' not in json.dumps(relevant.get("messages")):
        return max(1, len(json.dumps(relevant, ensure_ascii=False).encode()) // 4)
    from desktop_app.tokens.documents import document_tokens

    relevant = json.loads(json.dumps(relevant))  # (a copy: the body is the log's)
    pages = 0
    for message in relevant.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "document":
                pages += document_tokens(block, lambda text: len(text.encode()) // 4) or 0
                if isinstance(block.get("source"), dict):
                    block["source"].pop("data", None)  # (counted by its pages instead)
    return max(1, len(json.dumps(relevant, ensure_ascii=False).encode()) // 4 + pages)


def _message(body: dict[str, Any], reply: Reply, cache: CacheUsage) -> dict[str, Any]:
    # A thinking block's text may be omitted, but its tokens were written (and billed).
    thinking = sum(
        max(40, len(b.get("thinking", "")) // 4) for b in reply.content if b["type"] == "thinking"
    )
    output = reply.output_tokens or sum(
        len(json.dumps(b)) // 4 for b in reply.content if b["type"] != "thinking"
    )
    output += thinking
    content = list(reply.content)
    return {
        "id": "msg_sim_" + uuid.uuid4().hex[:20],
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": content,
        "stop_reason": reply.stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": max(0, _estimate(body) - cache.read - cache.written),
            "output_tokens": output,
            "cache_creation_input_tokens": cache.written,
            "cache_read_input_tokens": cache.read,
            "cache_creation": {
                "ephemeral_5m_input_tokens": cache.written_5m,
                "ephemeral_1h_input_tokens": cache.written_1h,
            },
            "output_tokens_details": {"thinking_tokens": thinking},
            **({"server_tool_use": ran} if (ran := web.server_tool_usage(content)) else {}),
        },
    }


def _events(message: dict[str, Any], fault: Fault | None) -> Iterator[tuple[str, dict[str, Any]]]:
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    yield "message_start", {"type": "message_start", "message": start}
    yield "ping", {"type": "ping"}
    for index, block in enumerate(message["content"]):
        kind = block["type"]
        empty: dict[str, Any] = {
            "text": {"type": "text", "text": ""},
            "thinking": {"type": "thinking", "thinking": "", "signature": ""},
        }.get(kind, block)
        if kind.endswith("tool_use"):  # a call's input streams, a server's call's too
            empty = {**block, "input": {}}
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": empty},
        )
        for delta in _deltas(block, fault):
            yield (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _deltas(block: dict[str, Any], fault: Fault | None) -> Iterator[dict[str, Any]]:
    kind = block["type"]
    if kind == "text":
        for citation in block.get("citations") or ():  # before the words they stand for
            yield {"type": "citations_delta", "citation": citation}
        for piece in _pieces(block["text"]):
            yield {"type": "text_delta", "text": piece}
    elif kind == "thinking":
        for piece in _pieces(block["thinking"]):
            yield {"type": "thinking_delta", "thinking": piece}
        yield {"type": "signature_delta", "signature": block["signature"]}
    elif kind.endswith("tool_use"):
        raw = json.dumps(block["input"])
        if fault is not None and fault.kind is FaultKind.MALFORMED_TOOL_JSON:
            raw = raw[:-1] + ', "oops": '
        for piece in _pieces(raw, size=12):
            yield {"type": "input_json_delta", "partial_json": piece}


def _pieces(text: str, size: int = 24) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


def _model(model: dict[str, Any]) -> dict[str, Any]:
    return {"type": "model", "created_at": "2026-01-01T00:00:00Z", **model}


def _request_id() -> str:
    return "req_sim_" + hashlib.sha256(uuid.uuid4().bytes).hexdigest()[:24]
