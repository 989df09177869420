"""Child process for the start-up benchmark: the app's own start-up path, which prints
PAINTED when the main window has painted for the first time, then quits.

    python tests/perf/first_paint.py HOME
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from PySide6.QtCore import QEvent, QObject, QTimer

from desktop_app.ui.gui import make_app, open_window


class FirstPaint(QObject):
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            print("PAINTED", flush=True)
            QTimer.singleShot(0, app.quit)
            watched.removeEventFilter(self)
        return False


app = make_app()
window = open_window(sys.argv[1])
spy = FirstPaint()
window.installEventFilter(spy)
window.show()
app.exec()
window.close()
if window.attached:  # (quit at the first paint: the engine may not have opened)
    window.engine.close()
