"""A real MCP server for the tests, written with the `mcp` SDK's MCPServer (FastMCP's
name in mcp 2): run it over stdio or Streamable HTTP.

    python -m tests.fakes.mcp_server [--http PORT] [--many N] [--slow-start S]
                                     [--die-on-start] [--cancelled-marker FILE]
                                     [--legacy] [--no-ping] [--garbage]
                                     [--leak-secret] [--huge-description CHARS]

By default it speaks what the installed SDK negotiates (2026-07-28: no `initialize`, no
`ping`). --legacy serves only the `initialize` handshake (2025-11-25 and before), as a
server built on mcp 1.x does; --no-ping makes such a server answer `ping` with "Method
not found" (-32601). --garbage prints a line that is not JSON-RPC on stdout first.
--leak-secret prints the TEST_SECRET it was given on stderr (with --die-on-start: its
last words), as a careless server does. --huge-description adds a tool, `huge`, whose
description is that many characters.

Tools: echo, add (structured content), picture (an image), notes (an embedded resource),
fail (is_error), crash (the process dies mid-call), hang (never answers; with
--cancelled-marker, writes the file when the client cancels it), grow (adds a tool and
says the list changed), meet (waits for another server's `meet`: a barrier across
processes), screenshot (a large image in both content and structured content),
picture_as (an image that is broken in a chosen way). --many N adds N more. Resources:
notes://today (text), images://dot (a PNG); a prompt: review(topic).
"""

from __future__ import annotations

import argparse
import base64
import os
import struct
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import anyio
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)
from mcp_types import METHOD_NOT_FOUND


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_header(width: int, height: int) -> bytes:
    """A PNG's signature and IHDR: what says its size (33 bytes)."""
    return b"\x89PNG\r\n\x1a\n" + _chunk(
        b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    )


def png(width: int = 4, height: int = 3, *, noise: bool = False) -> bytes:
    def row(y: int) -> bytes:
        if noise:  # incompressible: the file is about as large as its pixels
            return b"\x00" + os.urandom(width * 3)
        return b"\x00" + b"\xff\x00\x00" * width

    raw = b"".join(row(y) for y in range(height))
    return png_header(width, height) + _chunk(b"IDAT", zlib.compress(raw)) + _chunk(b"IEND", b"")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def broken_picture(kind: str) -> ImageContent:
    """An image as a careless server sends it."""
    if kind == "not-base64":
        return ImageContent(type="image", data="%%% this is not base64 %%%", mime_type="image/png")
    if kind == "mislabelled":  # PNG bytes said to be JPEG
        return ImageContent(type="image", data=b64(png()), mime_type="image/jpeg")
    if kind == "huge":  # 9,000 px wide: more than the API takes on one side
        return ImageContent(type="image", data=b64(png(9000, 20)), mime_type="image/png")
    if kind == "unscalable":  # a PNG header saying 30,000 × 30,000 over bytes that are not
        header = png_header(30000, 30000)  # (made whole, 900 MP took half a minute)
        return ImageContent(type="image", data=b64(header + b"\x00" * 64), mime_type="image/png")
    raise ValueError(f"no such kind: {kind}")


def build(many: int, cancelled_marker: str, legacy: bool, huge: int = 0) -> MCPServer:
    server = MCPServer("contextdesk-test")

    @server.tool()
    def echo(text: str) -> str:
        """Say the text back."""
        return text

    # Resources and a prompt, as Claude desktop lists them beside the tools.
    @server.resource(
        "notes://today", name="today", description="Today's notes", mime_type="text/plain"
    )
    def today() -> str:
        return "Call the courier about order 88213 before noon."

    @server.resource(
        "images://dot", name="dot", description="A tiny picture", mime_type="image/png"
    )
    def dot() -> bytes:
        return png()

    @server.prompt(description="Ask for a careful review of a topic")
    def review(topic: str) -> str:
        return f"Review {topic} carefully, and list what is missing."

    @server.tool()
    def add(a: int, b: int) -> dict[str, int]:
        """Add two numbers; the sum comes back as structured content."""
        return {"sum": a + b}

    @server.tool()
    def picture() -> ImageContent:
        """A small red PNG."""
        return ImageContent(type="image", data=b64(png()), mime_type="image/png")

    @server.tool()
    def picture_as(kind: str) -> ImageContent:
        """An image broken in one way: not-base64, mislabelled, huge, unscalable."""
        return broken_picture(kind)

    @server.tool()
    def screenshot(width: int, height: int) -> CallToolResult:
        """A noisy PNG, in the content and again in the structured content (as some
        servers send a screenshot)."""
        data = b64(png(width, height, noise=True))
        image: dict[str, Any] = {"type": "image", "data": data, "mimeType": "image/png"}
        return CallToolResult(
            content=[ImageContent(type="image", data=data, mime_type="image/png")],
            structured_content={"image": image, "width": width, "height": height},
        )

    @server.tool()
    def summary_with_rows() -> CallToolResult:
        """A text that does not repeat the structured content."""
        return CallToolResult(
            content=[TextContent(type="text", text="2 rows.")],
            structured_content={"rows": [{"id": 1}, {"id": 2}]},
        )

    @server.tool()
    def notes() -> EmbeddedResource:
        """An embedded text resource."""
        return EmbeddedResource(
            type="resource",
            resource=TextResourceContents(
                uri="memo://notes/1", text="Buy milk.", mime_type="text/plain"
            ),
        )

    @server.tool()
    def secret() -> str:
        """The TEST_SECRET environment variable the client gave this process."""
        return os.environ.get("TEST_SECRET", "(none)")

    @server.tool()
    def fail(why: str) -> str:
        """Always fails, saying why."""
        raise ValueError(why)

    @server.tool()
    def crash() -> str:
        """The process dies in the middle of the call."""
        print("about to crash, as asked", file=sys.stderr, flush=True)
        os._exit(3)

    cancelled = anyio.Event()

    @server.tool()
    async def hang() -> str:
        """Never answers (until cancelled)."""
        try:
            await anyio.sleep(3600)
        finally:
            cancelled.set()
            if cancelled_marker:
                Path(cancelled_marker).write_text("cancelled", encoding="utf-8")
        return "never"

    @server.tool()
    async def was_hang_cancelled() -> str:
        """Answers once a `hang` call has been cancelled by the client."""
        await cancelled.wait()
        return "cancelled"

    grown = 0

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Adds a tool, `grown_N`, and tells the client its tool list changed."""
        nonlocal grown
        grown += 1
        name = f"grown_{grown}"
        server.add_tool(_numbered(1000 + grown), name=name, description="A tool added later.")
        if legacy:  # the handshake era's notification (mcp/server/session.py)
            await ctx.request_context.session.send_tool_list_changed()
        else:  # 2026-07-28: an event on the client's subscriptions/listen stream
            await ctx.notify_tools_changed()
        return name

    @server.tool()
    async def meet(here: str, there: str, seconds: float = 20.0) -> str:
        """Says it is `here` (creates the file), then waits for `there`: "met" when the
        other call came while this one waited, "alone" when it did not within `seconds`."""
        Path(here).write_text("here", encoding="utf-8")
        with anyio.move_on_after(seconds):
            while not Path(there).exists():
                await anyio.sleep(0.01)
            return "met"
        return "alone"

    if huge:
        words = "A tool described at great length. " * (huge // 34 + 1)
        server.add_tool(_numbered(2000), name="huge", description=words[:huge])
    if many:  # one Tool built, the rest copies: same schema, own name, description and fn
        # (built one by one, pydantic took ~2 ms a tool: 6 s of a 3,000-tool server's start)
        template = Tool.from_function(_numbered(0), name="tool_000", description="")
        tools = server._tool_manager._tools  # (where add_tool puts them, in this order)
        for n in range(many):
            name = f"tool_{n:03d}"
            tools[name] = template.model_copy(
                update={
                    "fn": _numbered(n),
                    "name": name,
                    "description": f"Tool number {n}: does very little.",
                }
            )
    return server


def _numbered(n: int):  # type: ignore[no-untyped-def]
    def tool(value: str = "") -> str:
        return f"tool {n} got {value!r}"

    return tool


async def _no_ping(ctx: Any, call_next: Any) -> Any:
    """`ping` as a server that does not serve it answers (JSON-RPC's -32601)."""
    if ctx.method == "ping":
        raise MCPError(METHOD_NOT_FOUND, "Method not found")
    return await call_next(ctx)


async def serve_legacy(server: MCPServer) -> None:
    """Only the `initialize` handshake, over stdio: the SDK's handshake-only loop
    (mcp/server/runner.py `serve_loop`), which refuses `server/discover`, so the client
    falls back to `initialize` (mcp/client/_probe.py)."""
    low = server._lowlevel_server  # (mcp/client/client.py reaches it the same way)
    options = low.create_initialization_options(NotificationOptions(tools_changed=True))
    async with low.lifespan(low) as state, stdio_server() as (read, write):
        await serve_loop(low, read, write, lifespan_state=state, init_options=options)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=0)
    parser.add_argument("--many", type=int, default=0)
    parser.add_argument("--slow-start", type=float, default=0.0)
    parser.add_argument("--die-on-start", action="store_true")
    parser.add_argument("--cancelled-marker", default="")
    parser.add_argument("--started-fifo", default="", help="say 'started' there, first thing")
    parser.add_argument("--legacy", action="store_true", help="the initialize handshake only")
    parser.add_argument("--no-ping", action="store_true", help="answer ping: Method not found")
    parser.add_argument("--garbage", action="store_true", help="a non-JSON line on stdout")
    parser.add_argument("--huge-description", type=int, default=0, metavar="CHARS")
    parser.add_argument("--leak-secret", action="store_true", help="TEST_SECRET on stderr")
    args = parser.parse_args()
    if args.started_fifo:  # blocks until the test listens: a signal, not a poll
        Path(args.started_fifo).write_text("started", encoding="utf-8")
    if args.leak_secret:
        print(f"using token {os.environ.get('TEST_SECRET')}", file=sys.stderr, flush=True)
    if args.die_on_start:
        print("fatal: no configuration found at /nowhere/config.toml", file=sys.stderr, flush=True)
        raise SystemExit(2)
    if args.slow_start:
        time.sleep(args.slow_start)
    print("test server up", file=sys.stderr, flush=True)
    if args.garbage:
        print("Starting the server... (a line that is not JSON-RPC)", flush=True)
    server = build(args.many, args.cancelled_marker, args.legacy, args.huge_description)
    if args.no_ping:
        server.middleware.append(_no_ping)
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    elif args.legacy:
        anyio.run(serve_legacy, server)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
