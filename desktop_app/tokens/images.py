"""What an image costs in tokens: the API's formula, on the size read from its header.

The API bills an image at about width × height / 750 tokens, after scaling it so the long
edge is at most 1568 px. Only the header is decoded, never the whole image (`core.images`).
"""

from __future__ import annotations

import math

from desktop_app.core.images import image_size

API_MAX_EDGE = 1568
FALLBACK_TOKENS = 1600  # the API's ceiling for one image: used when the size is unknown

__all__ = ["API_MAX_EDGE", "FALLBACK_TOKENS", "base64_image_tokens", "image_size", "image_tokens"]


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
