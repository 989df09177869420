"""The one error type every boundary turns its failures into.

A `ContextDeskError` carries what a person needs: a short title, a message they can act
on, whether trying again makes sense, and details for those who ask. `ErrorInfo` is its
frozen, thread-safe snapshot, which events carry across to the GUI.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    title: str
    message: str
    retryable: bool = False
    details: str = ""
    kind: str = "error"


class ContextDeskError(Exception):
    def __init__(
        self,
        title: str,
        message: str,
        *,
        retryable: bool = False,
        details: str = "",
        kind: str = "error",
    ) -> None:
        super().__init__(f"{title}: {message}")
        self.info = ErrorInfo(title, message, retryable, details, kind)

    @property
    def title(self) -> str:
        return self.info.title

    @property
    def message(self) -> str:
        return self.info.message

    @property
    def retryable(self) -> bool:
        return self.info.retryable


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong at one JSON path, worded like the API's own 400s."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class HistoryFormatError(ContextDeskError):
    """Input that is not a Messages-API history at all (wrong types, missing fields)."""

    def __init__(self, problems: list[Problem]) -> None:
        shown = "\n".join(str(p) for p in problems[:20])
        more = f"\n… and {len(problems) - 20} more" if len(problems) > 20 else ""
        super().__init__(
            "This is not a valid conversation",
            f"{len(problems)} problem(s) found; nothing was changed. First: {problems[0]}",
            details=shown + more,
            kind="format",
        )
        self.problems = problems


class ProtocolViolationError(ContextDeskError):
    """A request that the API would reject; raised before it is sent."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__(
            "The request breaks the Messages API's rules",
            f"Not sent, because the API would reject it: {problems[0]}",
            details="\n".join(str(p) for p in problems),
            kind="protocol",
        )
        self.problems = problems


class Cancelled(Exception):
    """The user stopped the turn. Not an error: nothing went wrong."""
