"""Start the desktop app: the application object, the system's colour scheme, a log
file under the logs folder, the main window."""

from __future__ import annotations

import functools
import logging
import os
import sys
import traceback
from pathlib import Path
from types import TracebackType

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication

from desktop_app import __version__
from desktop_app.chats import AppPaths, FirstFrame, app_folders, log_unexpected
from desktop_app.ui import theme
from desktop_app.ui.main_window import MainWindow
from desktop_app.ui.qt_loading import wait_for_start_up
from desktop_app.ui.startup.single_instance import SingleInstance

log = logging.getLogger(__name__)
# Set, the app prints FIRST-PAINT on stdout when its window first paints, then quits:
# the start-up benchmark measures the real entry point with it (tests/perf/bench_startup.py).
FIRST_PAINT_PROBE = "CONTEXTDESK_QUIT_AFTER_FIRST_PAINT"


class _FirstPaintProbe(QObject):
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            watched.removeEventFilter(self)
            sys.stdout.write("FIRST-PAINT\n")
            sys.stdout.flush()
            QTimer.singleShot(0, QApplication.quit)
        return False


def make_app(argv: list[str] | None = None) -> QApplication:
    """The application, made and styled once (later calls return it as it is)."""
    app = QApplication.instance()
    if isinstance(app, QApplication) and app.property("contextdesk-ready"):
        return app
    made_here = not isinstance(app, QApplication)
    wait_for_start_up()  # (`qt_loading`: the process private, fontconfig started)
    if not isinstance(app, QApplication):
        # Fusion from the start: set later, Qt for Python would type the style it returns
        # (`setStyle`), making QStyle's ~560 enum members before the first frame.
        app = QApplication([*(argv or sys.argv[:1]), "-style", "Fusion"])
    app.setProperty("contextdesk-ready", True)
    # Planning and token counting run on Python threads; with the default 5 ms GIL
    # switch interval the GUI thread waits that long for every callback it makes while
    # they run. 1 ms keeps painting and input prompt (measured: Stop 350 → 60 ms).
    sys.setswitchinterval(0.001)
    app.setApplicationName("ContextDesk")
    app.setApplicationDisplayName("ContextDesk")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("org.contextdesk.ContextDesk")
    theme.apply_system_scheme(app, first_frame=made_here)  # in full after the first frame
    app.styleHints().colorSchemeChanged.connect(lambda _scheme: theme.apply_system_scheme(app))
    return app


def open_window(home: str | Path | AppPaths | None = None, *, demo: bool = False) -> MainWindow:
    """The window over the data folder (the caller has claimed it: `SingleInstance`):
    its frame and chat list from a light read; the engine opens after the first paint."""
    return MainWindow(FirstFrame.read(home, demo=demo))


def _report_unexpected(
    window: MainWindow, kind: type[BaseException], exc: BaseException, tb: TracebackType | None
) -> None:
    """A bug in a slot: shown in the window as an error (with the traceback on demand
    and in the log), never a silent console line or a crash."""
    from desktop_app.core.errors import ErrorInfo, ErrorKind  # (not before the first paint)

    log_unexpected(exc.with_traceback(tb), "the window")
    log_file = window.frame.paths.log_file
    window.show_problem(
        ErrorInfo(
            "Something went wrong",
            f"{kind.__name__}: {exc}. The details are in {log_file}; please attach it to a "
            "bug report.",
            details="".join(traceback.format_exception(kind, exc, tb)),
            kind=ErrorKind.BUG,
        )
    )


def run_gui(home: str | Path | None = None, *, demo: bool = False, smoke_test: bool = False) -> int:
    app = make_app()
    paths = app_folders(home)  # (made once: the first frame reads them as they are)
    folder = paths.data
    instance = SingleInstance(folder)
    if not instance.claim():  # the other copy was asked to come to the front
        owner = instance.owner()
        by = f" (process {owner})" if owner else ""
        if instance.woke_the_other:
            sys.stderr.write(
                f"ContextDesk is already open on {folder}{by}; it was brought to the front.\n"
            )
            return 0
        sys.stderr.write(
            f"ContextDesk is already open on {folder}{by} but did not answer. Wait for it "
            "to finish starting, or close it, then try again.\n"
        )
        return 1
    window = open_window(paths, demo=demo or smoke_test)
    instance.activation_requested.connect(window.bring_to_front)
    sys.excepthook = functools.partial(_report_unexpected, window)
    if os.environ.get(FIRST_PAINT_PROBE):
        window.installEventFilter(_FirstPaintProbe(window))
    window.show()
    window.first_painted.connect(instance.listen)
    if smoke_test:
        from desktop_app.ui.smoke import SmokeTest

        checker = SmokeTest(window)
        QTimer.singleShot(0, checker.start)
    code = app.exec()
    if window.attached:
        window.engine.close()
    instance.release()
    return code
