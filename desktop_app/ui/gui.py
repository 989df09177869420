"""Start the desktop app: the application object, the system's colour scheme, a log
file under the logs folder, the main window."""

from __future__ import annotations

import io
import logging
import os
import sys
from logging.handlers import RotatingFileHandler
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QMessageBox

from desktop_app import __version__
from desktop_app.bundled import bundled
from desktop_app.chats import Engine, data_folder
from desktop_app.config.privacy import PRIVATE_FILE
from desktop_app.core.errors import ContextDeskError
from desktop_app.ui import theme
from desktop_app.ui.main_window import MainWindow
from desktop_app.ui.single_instance import SingleInstance

log = logging.getLogger(__name__)
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def make_app(argv: list[str] | None = None) -> QApplication:
    """The application, made and styled once (later calls return it as it is)."""
    app = QApplication.instance()
    if isinstance(app, QApplication) and app.property("contextdesk-ready"):
        return app
    if not isinstance(app, QApplication):
        app = QApplication(argv or sys.argv[:1])
    app.setProperty("contextdesk-ready", True)
    # Planning and token counting run on Python threads; with the default 5 ms GIL
    # switch interval the GUI thread waits that long for every callback it makes while
    # they run. 1 ms keeps painting and input prompt (measured: Stop 350 → 60 ms).
    sys.setswitchinterval(0.001)
    app.setApplicationName("ContextDesk")
    app.setApplicationDisplayName("ContextDesk")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("org.contextdesk.ContextDesk")
    app.setWindowIcon(app_icon())
    theme.apply_system_scheme(app)
    app.styleHints().colorSchemeChanged.connect(lambda _scheme: theme.apply_system_scheme(app))
    return app


def app_icon() -> QIcon:
    """The icon at every size it is drawn at (window, task bar, switcher)."""
    icon = QIcon()
    for size in ICON_SIZES:
        try:
            icon.addFile(str(bundled("icons", f"contextdesk-{size}.png")))
        except FileNotFoundError:  # a broken install: no icon, but the app still opens
            log.warning("icon contextdesk-%s.png is missing", size)
    return icon


def open_window(home: str | Path | None = None, *, demo: bool = False) -> MainWindow:
    """The window over the data folder (the caller has claimed it: `SingleInstance`)."""
    engine = Engine.open(home, demo=demo, holds_folder=True)
    _log_to_file(engine.paths.logs / "contextdesk.log")
    window = MainWindow(engine, engine.load_window_state())
    if demo and not engine.list_chats():
        window.start_demo()
    return window


def run_gui(home: str | Path | None = None, *, demo: bool = False, smoke_test: bool = False) -> int:
    app = make_app()
    folder = data_folder(home)
    instance = SingleInstance(folder)
    if not instance.claim():  # the other copy was asked to come to the front
        owner = instance.owner()
        by = f" (process {owner})" if owner else ""
        sys.stderr.write(
            f"ContextDesk is already open on {folder}{by}; it was brought to the front.\n"
        )
        return 0
    try:
        window = open_window(home, demo=demo or smoke_test)
    except ContextDeskError as exc:  # e.g. a database from a newer version: say so, change nothing
        QMessageBox.critical(None, exc.title, exc.message)
        instance.release()
        return 1
    instance.activation_requested.connect(window.bring_to_front)
    window.show()
    QTimer.singleShot(0, instance.listen)
    if smoke_test:
        from desktop_app.ui.smoke import SmokeTest

        checker = SmokeTest(window)
        QTimer.singleShot(0, checker.start)
    code = app.exec()
    window.engine.close()
    instance.release()
    return code


class _PrivateLog(RotatingFileHandler):
    """A log file only the user can read (it names chats and folders), rotated ones too."""

    def _open(self) -> io.TextIOWrapper:
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, PRIVATE_FILE)
        return open(fd, "a", encoding=self.encoding, errors=self.errors)


def _log_to_file(path: Path) -> None:
    """Warnings and errors go to a small rotating log the user can attach to a report."""
    root = logging.getLogger()
    if any(isinstance(h, RotatingFileHandler) for h in root.handlers):
        return
    handler = _PrivateLog(path, maxBytes=1_000_000, backupCount=2, encoding="utf-8")
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
