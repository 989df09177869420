"""Asks before a tool runs: the tool, what it will really do (resolved paths, the exact
command), and its arguments. Allow once / Always for this chat / Deny.

Not modal: the loop waits for the answer, but the window stays usable, so Stop still
works (and withdraws the question).
"""

from __future__ import annotations

import json

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.chats.tool_servers import people_name
from desktop_app.core.ports import ApprovalDecision
from desktop_app.ui import theme
from desktop_app.ui.workers import PendingApproval


class ApprovalDialog(QDialog):
    def __init__(
        self, pending: PendingApproval, chat_title: str, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.pending = pending
        call = pending.request.call
        name = people_name(call.name)  # an MCP tool as server.tool
        self.setWindowTitle(f"Allow {name}?")
        self.setObjectName("approvalDialog")
        heading = QLabel(f"<b>Claude wants to use <code>{name}</code></b> in “{chat_title}”.")
        heading.setTextFormat(Qt.TextFormat.RichText)
        action = QLabel(pending.request.summary)
        action.setObjectName("approvalSummary")
        action.setWordWrap(True)
        action.setFont(theme.monospace())
        action.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        arguments = QPlainTextEdit(json.dumps(call.input, indent=2, ensure_ascii=False))
        arguments.setReadOnly(True)
        arguments.setFont(theme.monospace())
        arguments.setMaximumHeight(180)
        buttons = QDialogButtonBox()
        self.allow_once = QPushButton("Allow once")
        self.allow_always = QPushButton("Always for this chat")
        self.deny = QPushButton("Deny")
        buttons.addButton(self.allow_once, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(self.allow_always, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(self.deny, QDialogButtonBox.ButtonRole.RejectRole)
        self.deny.setDefault(True)  # Enter never runs something by accident
        self.allow_once.clicked.connect(self._on_allow_once_clicked)
        self.allow_always.clicked.connect(self._on_allow_always_clicked)
        self.deny.clicked.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(heading)
        layout.addWidget(QLabel("It will:"))
        layout.addWidget(action)
        layout.addWidget(QLabel("Arguments:"))
        layout.addWidget(arguments)
        layout.addWidget(buttons)
        self.resize(520, self.sizeHint().height())

    def answer(self, decision: ApprovalDecision) -> None:
        self.pending.answer(decision)
        self.done(
            QDialog.DialogCode.Accepted
            if decision is not ApprovalDecision.DENY
            else QDialog.DialogCode.Rejected
        )

    def reject(self) -> None:  # Deny, Esc and closing the window all say no
        if not self.pending.answered.is_set():
            self.pending.answer(ApprovalDecision.DENY)
        super().reject()

    @Slot()
    def withdraw(self) -> None:
        """The turn was stopped: the question no longer needs an answer."""
        super().reject()

    @Slot()
    def _on_allow_once_clicked(self) -> None:
        self.answer(ApprovalDecision.ALLOW_ONCE)

    @Slot()
    def _on_allow_always_clicked(self) -> None:
        self.answer(ApprovalDecision.ALLOW_ALWAYS)
