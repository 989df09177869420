"""Loading Qt for the window, called once by start-up before any module that uses Qt.

PySide6 replaces `builtins.__import__` to support `from __feature__ import snake_case`
(which we never use), and its hook then reads the source of every module imported after
it: about 20 ms of start-up for our modules alone. Qt is imported here first, and the
plain import is put back.
"""

import builtins


def load_qt() -> None:
    plain_import = builtins.__import__
    import PySide6.QtCore  # noqa: F401 — installs the hook (see above)

    builtins.__import__ = plain_import
