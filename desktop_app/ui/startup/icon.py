"""The application's icon (`give_app_icon`), given right after the first frame: QIcon's
class makes its ~90 enum members, and the icon reads its eight files (~2 ms together),
which the first frame does without — the desktop shows the .desktop file's icon, or its
own, for that moment."""

from __future__ import annotations

import logging

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from desktop_app.bundled import bundled

log = logging.getLogger(__name__)
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def give_app_icon() -> None:
    """Every window of the application gets the icon (task bar, switcher, title)."""
    app = QApplication.instance()
    if isinstance(app, QApplication):
        app.setWindowIcon(app_icon())


def app_icon() -> QIcon:
    """The icon at every size it is drawn at (window, task bar, switcher)."""
    icon = QIcon()
    for size in ICON_SIZES:
        try:
            icon.addFile(str(bundled("icons", f"contextdesk-{size}.png")))
        except FileNotFoundError:  # a broken install: no icon, but the app still opens
            log.warning("icon contextdesk-%s.png is missing", size)
    return icon
