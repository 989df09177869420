"""The context engine's errors.

Light on purpose (`core.errors` only): the planner and the faces catch them without
loading compaction.
"""

from __future__ import annotations

from desktop_app.core.errors import ContextDeskError, ErrorKind


class NothingToCompact(ContextDeskError):
    def __init__(self, why: str) -> None:
        super().__init__("Nothing to compact", why, kind=ErrorKind.NOTHING_TO_COMPACT)
