"""A real MCP server for the tests, written with the `mcp` SDK's MCPServer (FastMCP's
name in mcp 2): run it over stdio or Streamable HTTP.

    python -m tests.fakes.mcp_server [--http PORT] [--many N] [--slow-start S]
                                     [--die-on-start] [--cancelled-marker FILE]

Tools: echo, add (structured content), picture (an image), notes (an embedded resource),
fail (is_error), crash (the process dies mid-call), hang (never answers; with
--cancelled-marker, writes the file when the client cancels it). --many N adds N more.
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

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.types import EmbeddedResource, ImageContent, TextResourceContents


def png(width: int = 4, height: int = 3) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    raw = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def build(many: int, cancelled_marker: str) -> MCPServer:
    server = MCPServer("contextdesk-test")

    @server.tool()
    def echo(text: str) -> str:
        """Say the text back."""
        return text

    @server.tool()
    def add(a: int, b: int) -> dict[str, int]:
        """Add two numbers; the sum comes back as structured content."""
        return {"sum": a + b}

    @server.tool()
    def picture() -> ImageContent:
        """A small red PNG."""
        return ImageContent(
            type="image", data=base64.b64encode(png()).decode(), mime_type="image/png"
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

    for n in range(many):
        server.add_tool(
            _numbered(n), name=f"tool_{n:03d}", description=f"Tool number {n}: does very little."
        )
    return server


def _numbered(n: int):  # type: ignore[no-untyped-def]
    def tool(value: str = "") -> str:
        return f"tool {n} got {value!r}"

    return tool


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=0)
    parser.add_argument("--many", type=int, default=0)
    parser.add_argument("--slow-start", type=float, default=0.0)
    parser.add_argument("--die-on-start", action="store_true")
    parser.add_argument("--cancelled-marker", default="")
    parser.add_argument("--started-fifo", default="", help="say 'started' there, first thing")
    args = parser.parse_args()
    if args.started_fifo:  # blocks until the test listens: a signal, not a poll
        Path(args.started_fifo).write_text("started", encoding="utf-8")
    if args.die_on_start:
        print("fatal: no configuration found at /nowhere/config.toml", file=sys.stderr, flush=True)
        raise SystemExit(2)
    if args.slow_start:
        time.sleep(args.slow_start)
    print("test server up", file=sys.stderr, flush=True)
    server = build(args.many, args.cancelled_marker)
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
