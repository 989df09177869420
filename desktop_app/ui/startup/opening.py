"""Opening the engine after the first frame (`open_engine`), or saying why it cannot."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QMessageBox, QWidget

from desktop_app.core.errors import ContextDeskError

if TYPE_CHECKING:
    from pathlib import Path

    from desktop_app.chats import Engine, FirstFrame
    from desktop_app.core.errors import ErrorInfo
    from desktop_app.ui.workers import BackgroundWorker

log = logging.getLogger(__name__)


def open_engine(frame: FirstFrame, window: QWidget) -> Engine | None:
    """The data folder's engine, open, its log file kept — or None, once a message box
    has said why not (a database of a newer version, say): nothing is changed."""
    from desktop_app.chats import Engine, log_unexpected

    try:
        engine = Engine.open(frame.paths, demo=frame.demo, holds_folder=True)
    except Exception as exc:  # say so, change nothing
        if not isinstance(exc, ContextDeskError):
            log_unexpected(exc, "opening the data folder")
        info = exc.info if isinstance(exc, ContextDeskError) else None
        QMessageBox.critical(
            window,
            info.title if info else "ContextDesk could not start",
            info.message if info else f"{type(exc).__name__}: {exc}",
        )
        return None
    try:
        engine.keep_log()  # (the log file's module loads after the first frame too)
    except OSError as exc:  # the app works on; what it would log goes to the console
        log.warning("no log file at %s: %s", engine.log_file, exc)
    return engine


def back_up_if_due(engine: Engine, background: BackgroundWorker) -> None:
    """Today's copy of the database, made on the background thread (once a day)."""

    def made(copy: Path | None) -> None:
        if copy is not None:
            log.info("today's copy of the database: %s", copy)

    def failed(error: ErrorInfo) -> None:
        log.warning("the daily copy of the database was not made: %s", error.message)

    background.submit("backup", engine.back_up_if_due, made, failed)
