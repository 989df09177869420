"""What a base64 image in a request is, read from its bytes: its format and its size.

The API checks the declared media type against the bytes, the base64 payload against
5 MB and each side against 8,000 px (2,000 px when one request carries more than 20
images). Checking decodes only the header, and remembers what it read, because every
send validates every image in the history.
"""

from __future__ import annotations

import base64
import binascii
import io
import struct
from dataclasses import dataclass

MAX_BASE64_BYTES = 5 * 1024 * 1024
MAX_EDGE = 8000
MANY_IMAGES = 20  # more than this many in one request…
MANY_IMAGES_MAX_EDGE = 2000  # …and each side must be at most this
_HEADER_CHARS = 65536  # 48 KB of decoded header holds a JPEG's size after any EXIF block


@dataclass(frozen=True, slots=True)
class ImageFacts:
    media_type: str | None  # what the bytes are ("image/png", …); None: none of the four
    size: tuple[int, int] | None  # (width, height), when the header says


def image_facts(data_b64: str) -> ImageFacts:
    """The format and size of a base64 image (remembered per payload)."""
    # The key holds no reference to the (possibly large) string; a str caches its hash.
    key = (len(data_b64), hash(data_b64), data_b64[:64])
    facts = _FACTS.get(key)
    if facts is None:
        if len(_FACTS) >= 4096:
            _FACTS.clear()
        facts = _FACTS[key] = _read_facts(data_b64)
    return facts


_FACTS: dict[tuple[int, int, str], ImageFacts] = {}


def _read_facts(data_b64: str) -> ImageFacts:
    head = _decode_prefix(data_b64, _HEADER_CHARS)
    kind = sniff_media_type(head)
    size = _size(head, kind)
    if size is None and kind == "image/jpeg" and len(data_b64) > _HEADER_CHARS:
        size = _jpeg_size(_decode_prefix(data_b64, len(data_b64)))  # a very long EXIF block
    return ImageFacts(kind, size)


def image_size(data_b64: str) -> tuple[int, int] | None:
    """(width, height) of a PNG, GIF, JPEG or WebP given as base64, or None."""
    return image_facts(data_b64).size


def sniff_media_type(head: bytes) -> str | None:
    """The media type the first bytes of an image say it is, or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def _decode_prefix(data_b64: str, chars: int) -> bytes:
    text = data_b64[:chars]
    text = text[: len(text) // 4 * 4]  # whole quanta only: a cut quantum is not base64
    try:
        return base64.b64decode(text, validate=False)
    except (binascii.Error, ValueError):
        return b""


def _size(head: bytes, kind: str | None) -> tuple[int, int] | None:
    if kind == "image/png" and len(head) >= 24:
        width, height = struct.unpack(">II", head[16:24])
        return width, height
    if kind == "image/gif" and len(head) >= 10:
        width, height = struct.unpack("<HH", head[6:10])
        return width, height
    if kind == "image/webp":
        return _webp_size(head)
    if kind == "image/jpeg":
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


_SOF_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}  # start of frame: the size


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(head):
        if head[i] != 0xFF:
            i += 1
            continue
        marker = head[i + 1]
        if marker in _SOF_MARKERS:
            height, width = struct.unpack(">HH", head[i + 5 : i + 9])
            return width, height
        if marker in (0xD8, 0x01, 0xFF) or 0xD0 <= marker <= 0xD7:
            i += 1 if marker == 0xFF else 2  # fill bytes, and markers without a length
            continue
        (length,) = struct.unpack(">H", head[i + 2 : i + 4])
        i += 2 + length
    return None


def fit_image(data_b64: str, max_edge: int) -> tuple[str, str] | None:
    """(media type, base64) of the image scaled so each side is at most `max_edge` and the
    payload is under 5 MB, in PNG when it has transparency and JPEG otherwise; None when
    the bytes are not an image Pillow can read (or Pillow is not installed).

    Pillow loads here, on first use: only a repair of an oversized image needs it."""
    try:
        from PIL import Image, UnidentifiedImageError
    except ImportError:
        return None
    try:
        raw = base64.b64decode(data_b64, validate=False)
        with Image.open(io.BytesIO(raw)) as opened:
            opened.draft("RGB", (max_edge, max_edge))  # JPEG: decode at a reduced size
            image = opened.convert("RGBA" if _has_alpha(opened) else "RGB")
    except (OSError, ValueError, UnidentifiedImageError, Image.DecompressionBombError):
        return None
    edge = max_edge
    while edge >= 16:
        image.thumbnail((edge, edge), Image.Resampling.LANCZOS)
        out = io.BytesIO()
        if image.mode == "RGBA":
            image.save(out, "PNG", optimize=True)
            kind = "image/png"
        else:
            image.save(out, "JPEG", quality=85)
            kind = "image/jpeg"
        encoded = base64.b64encode(out.getvalue()).decode("ascii")
        if len(encoded) <= MAX_BASE64_BYTES:
            return kind, encoded
        edge = int(edge * 0.7)  # still too many bytes: smaller, until it fits
    return None


def _has_alpha(image: object) -> bool:
    mode = getattr(image, "mode", "")
    info = getattr(image, "info", {})
    return mode in ("RGBA", "LA", "PA") or (mode == "P" and "transparency" in info)
