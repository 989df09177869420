"""The tokens layer's errors.

`EncodingUnavailable` never reaches a person: `encoding.load_encoder` catches it and
counts with the heuristic instead (said in the log). It is no `ContextDeskError` for that
reason.
"""

from __future__ import annotations


class EncodingUnavailable(RuntimeError):
    """The bundled cl100k encoding cannot be built offline (a missing file, a wrong
    hash, tiktoken not installed)."""
