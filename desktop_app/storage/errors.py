"""The storage layer's errors: a chat or project that is not there, an import refused, a
database from a newer ContextDesk, and `StorageError` — a SQLite failure said plainly
(`db.storage_error` says which failure is which).

Light on purpose (the standard library and `core.errors` only, no `sqlite3`): any
module, a face's too, can catch them without loading the database.
"""

from __future__ import annotations

from pathlib import Path

from desktop_app.core.errors import ContextDeskError, ErrorKind


class ChatNotFound(ContextDeskError):
    def __init__(self, ref: str, why: str = "no chat has this id") -> None:
        super().__init__("Chat not found", f"{ref!r}: {why}.", kind=ErrorKind.NOT_FOUND)


class ProjectNotFound(ContextDeskError):
    def __init__(self, ref: str, why: str = "no project has this id or name") -> None:
        super().__init__("No such project", f"{ref!r}: {why}.", kind=ErrorKind.NOT_FOUND)


class ImportFailed(ContextDeskError):
    def __init__(self, title: str, message: str) -> None:
        super().__init__(title, f"{message} Nothing was imported.", kind=ErrorKind.IMPORT)


class ImportStopped(ContextDeskError):
    """The user stopped an import while its export was being read: nothing was stored."""

    def __init__(self) -> None:
        super().__init__("Import stopped", "Nothing was imported.", kind=ErrorKind.CANCELLED)


class NewerSchema(ContextDeskError):
    def __init__(self, found: int, understood: int, path: Path) -> None:
        super().__init__(
            "This database is from a newer ContextDesk",
            f"{path} has schema version {found}; this copy of ContextDesk understands up to "
            f"{understood}. Nothing was changed. Update ContextDesk to open it.",
            kind=ErrorKind.NEWER_SCHEMA,
        )


class StorageError(ContextDeskError):
    """The database could not be read or written; `kind` says why."""
