"""An MCP server's resources and prompts — what Claude desktop lists beside its tools —
read with the `mcp` SDK's client (every page), and a resource's contents as the blocks a
message can carry: its text with its URI, or an image."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from desktop_app.core.blocks import Block, ImageBlock, TextBlock

if TYPE_CHECKING:
    from mcp import Client

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")  # what the API takes
PAGES = 100  # a server whose pages never end cannot hang the listing


@dataclass(frozen=True, slots=True)
class McpResource:
    server: str
    uri: str
    name: str
    description: str
    mime_type: str


@dataclass(frozen=True, slots=True)
class McpPrompt:
    server: str
    name: str
    description: str
    arguments: tuple[tuple[str, str, bool], ...]  # (name, description, required)


async def list_resources(client: Client, server: str) -> tuple[McpResource, ...]:
    found: list[McpResource] = []
    cursor: str | None = None
    for _ in range(PAGES):
        page = await client.list_resources(cursor=cursor, cache_mode="refresh")
        found += [
            McpResource(server, str(r.uri), r.name, r.description or "", r.mime_type or "")
            for r in page.resources
        ]
        cursor = page.next_cursor
        if not cursor:
            break
    return tuple(found)


async def list_prompts(client: Client, server: str) -> tuple[McpPrompt, ...]:
    found: list[McpPrompt] = []
    cursor: str | None = None
    for _ in range(PAGES):
        page = await client.list_prompts(cursor=cursor, cache_mode="refresh")
        found += [
            McpPrompt(
                server,
                p.name,
                p.description or "",
                tuple((a.name, a.description or "", bool(a.required)) for a in p.arguments or []),
            )
            for p in page.prompts
        ]
        cursor = page.next_cursor
        if not cursor:
            break
    return tuple(found)


def resource_blocks(server: str, uri: str, contents: list[Any]) -> list[Block]:
    """A resource read (`ReadResourceResult.contents`) as a message's blocks: each text
    under a line naming its URI and server; an image the API takes as an image; anything
    else named, not sent (its bytes mean nothing to the model as text)."""
    blocks: list[Block] = []
    for item in contents:
        where = f"[Resource {getattr(item, 'uri', uri)} from {server}]"
        mime = getattr(item, "mime_type", None) or ""
        text = getattr(item, "text", None)
        blob = getattr(item, "blob", None)
        if isinstance(text, str):
            blocks.append(TextBlock(f"{where}\n{text}"))
        elif isinstance(blob, str) and mime in IMAGE_TYPES:
            blocks += [TextBlock(where), ImageBlock(mime, blob)]
        else:
            kind = mime or "binary"
            blocks.append(TextBlock(f"{where}\n({kind} content, not attached: not text)"))
    return blocks


def prompt_text(messages: list[Any]) -> str:
    """A prompt's messages (`GetPromptResult.messages`) as the text of one draft."""
    parts = []
    for message in messages:
        content = getattr(message, "content", None)
        text = getattr(content, "text", None)
        if isinstance(text, str):
            parts.append(text)
    return "\n\n".join(parts)
