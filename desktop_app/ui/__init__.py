"""The Qt user interface: the only package that imports PySide6.

PySide6 replaces `__import__` to support `from __feature__ import snake_case` (which we
never use), and its hook then reads the source of every module imported after it: about
20 ms of start-up for our modules alone. Qt is imported here first, and the plain import
is put back.
"""

import builtins

_plain_import = builtins.__import__
import PySide6.QtCore  # noqa: E402, F401 — installs the hook (see above)

builtins.__import__ = _plain_import
del _plain_import
