"""The one error type every boundary turns its failures into.

A `ContextDeskError` carries what a person needs: a short title, a message they can act
on, whether trying again makes sense, and details for those who ask. `ErrorInfo` is its
frozen, thread-safe snapshot, which events carry across to the GUI.

The core's own errors live here too (`HistoryFormatError`, `ProtocolViolationError`,
`MalformedToolInput`), as each layer's live in its `errors.py` (`storage/errors.py`,
`config/errors.py`…): one place to find what a layer can raise.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from enum import StrEnum


class ErrorKind(StrEnum):
    """What went wrong, for callers that act on it (the window picks a banner's actions
    from it: Retry, Settings…, Compact…). Values are stable: they appear in `--json`."""

    ERROR = "error"  # nothing more specific is known
    NOTICE = "notice"  # not an error: a change ContextDesk made on its own, said once
    BUG = "bug"  # an exception nobody planned for
    USAGE = "usage"  # a command or value given the wrong way
    # a chat, message, fact, project, knowledge file or MCP server (or one of its secrets)
    # that is not there
    NOT_FOUND = "not_found"
    UNKNOWN_MODEL = "unknown_model"  # the API answered 404: no such model or endpoint
    # input that is not a conversation at all (`check`, a history's shape), or a knowledge
    # file with no text to send
    FORMAT = "format"
    # a file given to import that is no chat or project export we read (too large, not
    # JSON, another version): nothing was imported
    IMPORT = "import"
    IO = "io"  # a file could not be read or written: the system's reason, not the input's
    PROTOCOL = "protocol"  # a request the API would reject, caught before sending
    NOTHING_TO_RETRY = "nothing_to_retry"
    OVER_BUDGET = "over_budget"  # a send would cross a hard spending cap: nothing was sent
    # The context engine
    CONTEXT_OVERFLOW = "context_overflow"
    REQUEST_TOO_LARGE = "request_too_large"
    NOTHING_TO_COMPACT = "nothing_to_compact"
    COMPACTION_EMPTY = "compaction_empty"
    # Tools
    MALFORMED_TOOL_INPUT = "malformed_tool_input"
    PATH_REFUSED = "path_refused"
    # The key and the server
    AUTH = "auth"
    KEYRING = "keyring"  # the system keyring cannot be used (none, locked, too slow)
    PERMISSION = "permission"
    RATE_LIMIT = "rate_limit"
    OVERLOADED = "overloaded"
    SERVER_ERROR = "server_error"
    INVALID_REQUEST = "invalid_request"
    TIMEOUT = "timeout"
    CONNECTION = "connection"
    STREAM_CUT = "stream_cut"
    STREAM_ERROR = "stream_error"
    CANCELLED = "cancelled"
    # The database (storage/db.py says which SQLite failure is which)
    NEWER_SCHEMA = "newer_schema"
    DISK_FULL = "disk_full"
    DATABASE_LOCKED = "database_locked"
    READ_ONLY = "read_only"
    DATABASE_DAMAGED = "database_damaged"
    STORAGE = "storage"
    # The app itself
    ALREADY_RUNNING = "already_running"


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    title: str
    message: str
    retryable: bool = False
    details: str = ""
    kind: ErrorKind = ErrorKind.ERROR


class ContextDeskError(Exception):
    def __init__(
        self,
        title: str,
        message: str,
        *,
        retryable: bool = False,
        details: str = "",
        kind: ErrorKind = ErrorKind.ERROR,
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

    @property
    def kind(self) -> ErrorKind:
        return self.info.kind


def shown_path(path: object) -> str:
    """A path as text whatever its bytes: a name that is not UTF-8 (Python keeps its
    bytes as surrogates, which no terminal, label or database takes) shows them escaped."""
    text = os.fspath(path) if isinstance(path, os.PathLike | str) else str(path)
    return os.fsencode(text).decode("utf-8", "backslashreplace")


def file_error(title: str, path: object, exc: OSError, then: str = "") -> ContextDeskError:
    """A file that could not be read or written, said plainly (a full disk by name)."""
    kind = ErrorKind.DISK_FULL if exc.errno == errno.ENOSPC else ErrorKind.IO
    message = f"{shown_path(path)}: {exc.strerror or exc}." + (f" {then}" if then else "")
    return ContextDeskError(title, message, kind=kind)


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
            kind=ErrorKind.FORMAT,
        )
        self.problems = problems


class ProtocolViolationError(ContextDeskError):
    """A request that the API would reject; raised before it is sent."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__(
            "The request breaks the Messages API's rules",
            f"Not sent, because the API would reject it: {problems[0]}",
            details="\n".join(str(p) for p in problems),
            kind=ErrorKind.PROTOCOL,
        )
        self.problems = problems


class MalformedToolInput(ContextDeskError):
    """A tool call whose input the model streamed is not valid JSON; it is not run."""

    def __init__(self, name: str, raw: str, reason: str) -> None:
        super().__init__(
            "The model sent a malformed tool call",
            f"The input for {name or 'a tool'} was not valid JSON ({reason}), so it was not run. "
            "Retry the reply; if it keeps happening, try another model.",
            retryable=True,
            details=raw[:2000],
            kind=ErrorKind.MALFORMED_TOOL_INPUT,
        )


class Cancelled(Exception):
    """The user stopped the turn. Not an error: nothing went wrong."""
