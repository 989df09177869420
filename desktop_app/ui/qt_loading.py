"""Loading Qt for the window, called once by start-up before any module that uses Qt.

PySide6 replaces `builtins.__import__` to support `from __feature__ import snake_case`
(which we never use), and its hook then reads the source of every module imported after
it: about 20 ms of start-up for our modules alone. Qt is imported here first, and the
plain import is put back.

Meanwhile a thread of its own (`StartUpThread`) makes the process private and starts
fontconfig, with a core to spare while Qt and our modules load (~100 ms): both need
ctypes (~2 ms), and fontconfig reads its configuration and font caches (~5 ms) for the
first widget with text. `make_app` waits for it before the application is made, so that
Qt never uses fontconfig while it starts, and nothing runs before the process is private.
"""

import builtins
import sys
import threading
from collections.abc import Callable

FONTCONFIG = "libfontconfig.so.1"  # the one Qt's own library links to (Linux, BSD)
_started: list[threading.Thread] = []  # the start-up thread, while `make_app` has not waited


def load_qt(make_private: Callable[[], bool] | None = None) -> None:
    """Qt, the plain import put back; `make_private` (`protect_process`, given by the
    composition root) and fontconfig on the start-up thread meanwhile."""
    _started.append(StartUpThread(make_private))
    _started[-1].start()
    plain_import = builtins.__import__
    import PySide6.QtCore  # noqa: F401 — installs the hook (see above)

    builtins.__import__ = plain_import


def wait_for_start_up() -> None:
    """The start-up thread's work done (`make_app`, before the application is made)."""
    while _started:
        _started.pop().join()


class StartUpThread(threading.Thread):
    """The process made not dumpable, then fontconfig started (see above)."""

    def __init__(self, make_private: Callable[[], bool] | None) -> None:
        super().__init__(name="start-up", daemon=True)
        self._make_private = make_private
        self.private = False  # the process was made not dumpable (Linux)

    def run(self) -> None:
        if self._make_private is not None:
            self.private = self._make_private()
        if sys.platform not in ("darwin", "win32"):  # (Qt asks the system's own there)
            init_fontconfig()


def init_fontconfig(library: str = FONTCONFIG) -> bool:
    """fontconfig's `FcInit`; Qt's own call then finds it done. False where there is no
    fontconfig: Qt then finds its fonts without it, as before."""
    import ctypes

    try:
        return bool(ctypes.CDLL(library).FcInit())
    except (OSError, AttributeError):
        return False
