"""The log file: warnings, errors and the details of anything unexpected, in a small
rotating file only the user can read (`logs/contextdesk.log`), for both faces."""

from __future__ import annotations

import functools
import io
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from desktop_app.config.privacy import PRIVATE_FILE

if TYPE_CHECKING:
    from logging.handlers import RotatingFileHandler


@functools.cache
def _private_log() -> type[RotatingFileHandler]:
    """A rotating handler whose rotated files are created private too (made on first
    use: `logging.handlers` costs the window ~20 ms of start-up)."""
    from logging.handlers import RotatingFileHandler

    class PrivateLog(RotatingFileHandler):
        def _open(self) -> io.TextIOWrapper:
            fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, PRIVATE_FILE)
            return open(fd, "a", encoding=self.encoding, errors=self.errors)

    return PrivateLog


UNEXPECTED = "desktop_app.unexpected"  # bugs' tracebacks: the file only, never the terminal
# The MCP SDK's loggers: the file only too. A server that prints stray lines on stdout makes
# the SDK log a traceback for each (mcp/client/stdio.py `_parse_line`): not the user's to see.
SDK_LOGGERS = ("mcp",)


def _from_sdk(record: logging.LogRecord) -> bool:
    return any(record.name == n or record.name.startswith(f"{n}.") for n in SDK_LOGGERS)


class SdkRecordsOnOneLine(logging.Filter):
    """An SDK record in one line: the message and the exception's type, no traceback and
    no exception text — a server's stray stdout line is logged for every line it prints,
    and the text quotes the line, which may hold what the server was given (a token)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _from_sdk(record) and record.exc_info:
            exc = record.exc_info[1]
            record.msg = f"{record.getMessage()} ({type(exc).__name__})"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        return True


def keep_sdk_logs_off_the_terminal() -> None:
    """The SDK's records go where `log_to_file` sends them, and nowhere else."""
    for name in SDK_LOGGERS:
        logger = logging.getLogger(name)
        logger.propagate = False
        if not logger.handlers:  # with none at all, logging's last resort prints to stderr
            logger.addHandler(logging.NullHandler())


def log_to_file(path: Path) -> None:
    """Send warnings and errors (with tracebacks) to `path` as well."""
    root = logging.getLogger()
    file_only = [logging.getLogger(name) for name in (UNEXPECTED, *SDK_LOGGERS)]
    private_log = _private_log()
    for old in [h for h in root.handlers if isinstance(h, private_log)]:
        if old.baseFilename == os.path.abspath(path):
            return
        root.removeHandler(old)  # another data folder (tests run the CLI in one process)
        for logger in file_only:
            logger.removeHandler(old)
        old.close()
    handler = private_log(path, maxBytes=1_000_000, backupCount=2, encoding="utf-8")
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(SdkRecordsOnOneLine())
    root.addHandler(handler)
    for logger in file_only:
        logger.propagate = False
        logger.addHandler(handler)


def log_unexpected(exc: BaseException, what: str) -> None:
    """Keep a bug's traceback in the log file (not on the user's screen)."""
    logging.getLogger(UNEXPECTED).error("%s failed", what, exc_info=exc)
