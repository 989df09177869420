"""Loading Qt for the window, called once by start-up before any module that uses Qt.

PySide6 replaces `builtins.__import__` to support `from __feature__ import snake_case`
(which we never use), and its hook then reads the source of every module imported after
it: about 20 ms of start-up for our modules alone. Qt is imported here first, and the
plain import is put back.

Meanwhile fontconfig reads its configuration and font caches on a thread of its own
(`warm_fontconfig`): the first widget with text would otherwise wait ~5 ms for that on
the GUI thread, while Qt and our modules load (~100 ms) with a core to spare.
"""

import builtins
import sys
import threading

FONTCONFIG = "libfontconfig.so.1"  # the one Qt's own library links to (Linux, BSD)


def load_qt() -> None:
    warm_fontconfig()
    plain_import = builtins.__import__
    import PySide6.QtCore  # noqa: F401 — installs the hook (see above)

    builtins.__import__ = plain_import


def warm_fontconfig() -> threading.Thread | None:
    """Start fontconfig on a thread (where Qt finds fonts through it); the thread."""
    if sys.platform in ("darwin", "win32"):
        return None  # Qt asks the system's own font service there
    thread = threading.Thread(target=init_fontconfig, name="fontconfig", daemon=True)
    thread.start()
    return thread


def init_fontconfig(library: str = FONTCONFIG) -> bool:
    """fontconfig's `FcInit` (thread-safe; Qt's own call then finds it done). False
    where there is no fontconfig: Qt then finds its fonts without it, as before."""
    import ctypes  # (here: not on the GUI thread's way to the first frame)

    try:
        return bool(ctypes.CDLL(library).FcInit())
    except (OSError, AttributeError):
        return False
