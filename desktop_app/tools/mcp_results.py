"""An MCP tool's result (the SDK's `CallToolResult`) as the API's tool_result content.

Text stays text. An image becomes an image block the API takes: scaled into its limits
as the composer's attachments are (long side at most 1,568 px), or a note saying why it
was not sent — data that is not base64, bytes that are not the type they are labelled,
an image too large that cannot be scaled — so a careless server never ends the turn
with a request the API refuses. Embedded text resources become text with their URI;
what the API cannot take (audio, binary blobs) becomes a note saying what was there.

Structured content is sent as JSON only when the content does not already say it: not
when a text in it is the same JSON (the spec asks servers to send both, and FastMCP
wraps a plain value as {"result": …}), not when it holds the content's own images; and
base64 image data in it is never sent as text (one screenshot would be ~600k tokens).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from typing import Any

from desktop_app.core.blocks import ImageBlock, OpaqueBlock, TextBlock
from desktop_app.core.images import MAX_BASE64_BYTES, fit_image, image_facts
from desktop_app.core.ports import ToolOutcome
from desktop_app.tokens.images import API_MAX_EDGE

API_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_SHORTEST_IMAGE = 64  # base64 characters: shorter strings in structured content are not images

Part = TextBlock | ImageBlock | OpaqueBlock


def outcome(result: Any) -> ToolOutcome:
    """An SDK `CallToolResult` as a tool outcome the API accepts."""
    content = list(getattr(result, "content", None) or [])
    parts: list[Part] = [part for item in content for part in _parts(item)]
    structured = structured_text(getattr(result, "structured_content", None), content)
    if structured is not None:
        parts.append(structured)
    is_error = bool(getattr(result, "is_error", False))
    if not parts:
        empty = "The tool reported an error without a message." if is_error else "(no output)"
        parts = [TextBlock(empty)]
    if all(isinstance(p, TextBlock) for p in parts):
        return ToolOutcome("\n\n".join(p.text for p in parts if isinstance(p, TextBlock)), is_error)
    return ToolOutcome(tuple(parts), is_error)


# -- content ----------------------------------------------------------------------------------


def _parts(item: Any) -> Iterable[Part]:
    kind = getattr(item, "type", "")
    if kind == "text":
        yield TextBlock(item.text)
    elif kind == "image":
        yield image_part(item.data, item.mime_type, "image")
    elif kind == "audio":
        yield TextBlock(f"[audio ({item.mime_type}) not sent: the API takes no audio]")
    elif kind == "resource":
        yield from _resource(item.resource)
    elif kind == "resource_link":
        title = getattr(item, "title", None) or item.name
        yield TextBlock(f"Resource link: {title} <{item.uri}>")
    else:
        yield TextBlock(f"[a {kind or 'content'} item the API cannot take was left out]")


def _resource(resource: Any) -> Iterable[Part]:
    mime = getattr(resource, "mime_type", None) or ""
    if hasattr(resource, "text"):
        yield TextBlock(f"Resource {resource.uri}:\n{resource.text}")
    elif mime in API_IMAGE_TYPES:
        yield image_part(resource.blob, mime, f"the image resource {resource.uri}")
    else:
        size = len(getattr(resource, "blob", "")) * 3 // 4
        yield TextBlock(
            f"[resource {resource.uri} ({mime or 'binary'}, {size:,} bytes) not sent: "
            "the API takes text and images only]"
        )


def image_part(data: str, mime: str, what: str) -> TextBlock | ImageBlock:
    """An image block the API takes, or a note saying why `what` was not sent."""
    if mime not in API_IMAGE_TYPES:
        return _not_sent(what, f"it is {mime}; the API takes PNG, JPEG, GIF and WebP")
    data = "".join(data.split())  # base64 wrapped over lines is still base64
    if not _is_base64(data):
        return _not_sent(what, "its data is not base64")
    facts = image_facts(data)
    if facts.media_type != mime:
        found = facts.media_type or "not an image the API takes"
        return _not_sent(what, f"its bytes are {found}, not {mime}")
    fits = facts.size is not None and max(facts.size) <= API_MAX_EDGE
    if fits and len(data) <= MAX_BASE64_BYTES:
        return ImageBlock(mime, data)
    fitted = fit_image(data, API_MAX_EDGE)
    if fitted is None:
        width, height = facts.size or (0, 0)
        size = f"{width:,}×{height:,} px, " if facts.size else ""
        megabytes = len(data) * 3 / 4 / 1e6
        return _not_sent(
            what, f"{size}{megabytes:.1f} MB: too large to send, and it could not be scaled down"
        )
    return ImageBlock(*fitted)


def _is_base64(data: str) -> bool:
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return False
    return bool(data)


def _not_sent(what: str, why: str) -> TextBlock:
    return TextBlock(f"[{what} not sent: {why}]")


# -- structured content -----------------------------------------------------------------------


def structured_text(structured: Any, content: list[Any]) -> TextBlock | None:
    """The structured content as JSON text, when the content does not already say it."""
    if structured is None:
        return None
    texts = [item.text for item in content if getattr(item, "type", "") == "text"]
    if any(_says(text, structured) for text in texts):
        return None
    images = _image_data(content)
    if images and _holds_any(structured, images):
        return None  # a rendition of the content's own image(s)
    shown = _without_base64_images(structured)
    return TextBlock(json.dumps(shown, ensure_ascii=False, indent=1))


def _says(text: str, structured: Any) -> bool:
    """Is `text` the structured content (as JSON, or the value FastMCP wraps in
    {"result": …})?"""
    try:
        value: Any = json.loads(text)
    except ValueError:
        value = text
    wrapped = isinstance(structured, dict) and structured.keys() == {"result"}
    return value == structured or (wrapped and structured["result"] in (value, text))


def _image_data(content: list[Any]) -> set[str]:
    """The base64 data of the content's images (and image resources)."""
    found = set()
    for item in content:
        kind = getattr(item, "type", "")
        if kind == "image":
            found.add(item.data)
        elif kind == "resource" and hasattr(item.resource, "blob"):
            found.add(item.resource.blob)
    return found


def _holds_any(value: Any, strings: set[str]) -> bool:
    if isinstance(value, str):
        return value in strings or value.partition(";base64,")[2] in strings
    if isinstance(value, dict):
        return any(_holds_any(v, strings) for v in value.values())
    if isinstance(value, list):
        return any(_holds_any(v, strings) for v in value)
    return False


def _without_base64_images(value: Any) -> Any:
    """The value with every base64 image (or data: URL of one) replaced by a short note."""
    if isinstance(value, dict):
        return {k: _without_base64_images(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_base64_images(v) for v in value]
    if isinstance(value, str) and len(value) >= _SHORTEST_IMAGE:
        data = value.partition(";base64,")[2] if value.startswith("data:") else value
        kind = image_facts(data).media_type if data else None
        if kind is not None:
            return f"[{kind} image, {len(data) * 3 // 4:,} bytes: not sent as text]"
    return value
