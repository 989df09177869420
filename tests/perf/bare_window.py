"""The floor of the start-up benchmark: a bare PySide6 window, to its first paint.

python tests/perf/bare_window.py
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow


class FirstPaint(QObject):
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            watched.removeEventFilter(self)
            print("FIRST-PAINT", flush=True)
            QTimer.singleShot(0, QApplication.quit)
        return False


app = QApplication([])
window = QMainWindow()
window.resize(1280, 820)
probe = FirstPaint()
window.installEventFilter(probe)
window.show()
app.exec()
