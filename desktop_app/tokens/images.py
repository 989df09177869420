"""Image size from the first bytes of a base64 image, for the API's token formula.

The API bills an image at about width × height / 750 tokens, after scaling it so the long
edge is at most 1568 px. Only the header is decoded, never the whole image.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct

API_MAX_EDGE = 1568
FALLBACK_TOKENS = 1600  # the API's ceiling for one image: used when the size is unknown


def image_size(data_b64: str) -> tuple[int, int] | None:
    """(width, height) of a PNG, GIF, JPEG or WebP given as base64, or None."""
    try:
        head = base64.b64decode(data_b64[:65536], validate=False)  # 48 KB of header is plenty
    except (binascii.Error, ValueError):
        return None
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
        width, height = struct.unpack(">II", head[16:24])
        return width, height
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        width, height = struct.unpack("<HH", head[6:10])
        return width, height
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return _webp_size(head)
    if head.startswith(b"\xff\xd8"):
        return _jpeg_size(head)
    return None


def _webp_size(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8X" and len(head) >= 30:
        width = 1 + int.from_bytes(head[24:27], "little")
        height = 1 + int.from_bytes(head[27:30], "little")
        return width, height
    if chunk == b"VP8 " and len(head) >= 30:
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(head) >= 25:
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(head):
        if head[i] != 0xFF:
            i += 1
            continue
        marker = head[i + 1]
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            height, width = struct.unpack(">HH", head[i + 5 : i + 9])
            return width, height
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        (length,) = struct.unpack(">H", head[i + 2 : i + 4])
        i += 2 + length
    return None


def image_tokens(width: int, height: int) -> int:
    """Tokens for an image of this size, after the API's own downscaling."""
    long_edge = max(width, height)
    if long_edge > API_MAX_EDGE:
        scale = API_MAX_EDGE / long_edge
        width, height = int(width * scale), int(height * scale)
    return max(1, min(FALLBACK_TOKENS, math.ceil(width * height / 750)))


def base64_image_tokens(data_b64: str) -> int:
    size = image_size(data_b64)
    return image_tokens(*size) if size else FALLBACK_TOKENS
