"""The window shown until the chat window lands: honest about what exists today."""

from __future__ import annotations

import sys

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel, QMainWindow, QVBoxLayout, QWidget

from desktop_app import __version__

MESSAGE = """
<h1 style="margin-bottom:4px">ContextDesk</h1>
<p style="color:palette(mid)">version {version}</p>
<p>The chat window is on its way. The engine underneath it is ready: the transcript,
the Messages API's rules and their repair, and the agent loop.</p>
<p>Check a conversation exported from any Messages-API client:<br>
<code>contextdesk check history.json --fix repaired.json</code></p>
"""


class PlaceholderWindow(QMainWindow):
    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle("ContextDesk")
        label = QLabel(MESSAGE.format(version=__version__))
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout()
        layout.setContentsMargins(40, 32, 40, 32)
        layout.addWidget(label, alignment=Qt.AlignmentFlag.AlignTop)
        central = QWidget()
        central.setLayout(layout)
        self.setCentralWidget(central)
        self.resize(560, 320)


def run_placeholder_window() -> int:
    app = QApplication.instance() or QApplication(sys.argv)
    app.setApplicationName("ContextDesk")
    window = PlaceholderWindow()
    window.show()
    return app.exec()
