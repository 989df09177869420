"""The log file: warnings, errors and the details of anything unexpected, in a small
rotating file only the user can read (`logs/contextdesk.log`), for both faces."""

from __future__ import annotations

import io
import logging
import os
from logging.handlers import RotatingFileHandler
from pathlib import Path

from desktop_app.config.privacy import PRIVATE_FILE


class _PrivateLog(RotatingFileHandler):
    """Rotated files are created private too."""

    def _open(self) -> io.TextIOWrapper:
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, PRIVATE_FILE)
        return open(fd, "a", encoding=self.encoding, errors=self.errors)


UNEXPECTED = "desktop_app.unexpected"  # bugs' tracebacks: the file only, never the terminal


def log_to_file(path: Path) -> None:
    """Send warnings and errors (with tracebacks) to `path` as well."""
    root = logging.getLogger()
    unexpected = logging.getLogger(UNEXPECTED)
    for old in [h for h in root.handlers if isinstance(h, _PrivateLog)]:
        if old.baseFilename == os.path.abspath(path):
            return
        root.removeHandler(old)  # another data folder (tests run the CLI in one process)
        unexpected.removeHandler(old)
        old.close()
    handler = _PrivateLog(path, maxBytes=1_000_000, backupCount=2, encoding="utf-8")
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    unexpected.propagate = False
    unexpected.addHandler(handler)


def log_unexpected(exc: BaseException, what: str) -> None:
    """Keep a bug's traceback in the log file (not on the user's screen)."""
    logging.getLogger(UNEXPECTED).error("%s failed", what, exc_info=exc)
