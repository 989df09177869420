"""The first thing a new user sees when there is no API key: two ways forward."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget


class WelcomePage(QWidget):
    """Signals:
    enter_key_requested(): open Settings at the API key.
    demo_requested(): switch to the offline demo model.
    """

    enter_key_requested = Signal()
    demo_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("welcome")
        title = QLabel("<h1>Welcome to ContextDesk</h1>")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        intro = QLabel(
            "A chat client for Claude whose memory you can see and steer: every block shows "
            "what it costs and whether it is still in the model's context; pin facts that are "
            "sent every turn; compact old turns into a summary you can preview and undo."
        )
        intro.setWordWrap(True)
        intro.setAlignment(Qt.AlignmentFlag.AlignCenter)
        intro.setFixedWidth(560)
        self.enter_key = QPushButton("Enter API key…")
        self.enter_key.setObjectName("enterKey")
        self.enter_key.setDefault(True)
        self.enter_key.clicked.connect(self.enter_key_requested)
        self.try_demo = QPushButton("Try the offline demo")
        self.try_demo.setObjectName("tryDemo")
        self.try_demo.clicked.connect(self.demo_requested)
        note = QLabel(
            "The demo runs a simulated model on this computer: no key, no network, and every "
            "reply is labelled as simulated. Your key is kept in the system keyring."
        )
        note.setWordWrap(True)
        note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        note.setFixedWidth(560)
        note.setEnabled(False)  # drawn in the muted colour
        for button in (self.enter_key, self.try_demo):
            button.setMinimumWidth(260)
            button.setMinimumHeight(36)
        layout = QVBoxLayout(self)
        layout.addStretch(2)
        for widget in (title, intro, self.enter_key, self.try_demo, note):
            if isinstance(widget, QLabel) and widget.wordWrap():
                # Centred by stretches, not by an alignment: a box given an alignment
                # gives a wrapped label its one-line height, and its lines were cut.
                row = QHBoxLayout()
                row.addStretch(1)
                row.addWidget(widget)
                row.addStretch(1)
                layout.addLayout(row)
            else:
                layout.addWidget(widget, 0, Qt.AlignmentFlag.AlignHCenter)
            layout.addSpacing(8)
        layout.addStretch(3)
