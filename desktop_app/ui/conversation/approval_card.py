"""Asks before a tool runs, inside the conversation (under the step that waits), the way
the apps our users know ask: the tool, what it will really do (resolved paths, the exact
command), its arguments on a click, and Allow once / Always for this chat / Deny.

Not a dialog: the loop waits for the answer, the window stays usable, Stop still works
(and withdraws the question), and a question in a chat not shown waits there.
"""

from __future__ import annotations

import html
import json
import threading
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.chats import people_name
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import Cancelled
from desktop_app.core.ports import ApprovalDecision, ApprovalRequest
from desktop_app.ui import theme


@dataclass
class PendingApproval:
    """One question to the user; the GUI thread answers it, the worker waits for it."""

    request: ApprovalRequest
    decision: ApprovalDecision = ApprovalDecision.DENY
    answered: threading.Event = field(default_factory=threading.Event)

    def answer(self, decision: ApprovalDecision) -> None:
        self.decision = decision
        self.answered.set()


class WindowApprover(QObject):
    """The loop's `Approver` in the window: called on the worker thread, it asks the
    GUI thread through a signal and waits, and gives up as soon as the turn is cancelled.

    Signals:
        approval_requested(object): a `PendingApproval` for the GUI thread to answer.
    """

    approval_requested = Signal(object)

    def approve(self, request: ApprovalRequest, cancel: CancelToken) -> ApprovalDecision:
        pending = PendingApproval(request)
        self.approval_requested.emit(pending)
        unregister = cancel.on_cancel(pending.answered.set)  # Stop wakes the wait at once
        try:
            pending.answered.wait()
        finally:
            unregister()
        if cancel.cancelled:
            raise Cancelled()
        return pending.decision


class ApprovalCard(QFrame):
    """Signals: finished(): answered or withdrawn; the card can go."""

    finished = Signal()

    def __init__(
        self, pending: PendingApproval, chat_id: str, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.pending = pending
        self.chat_id = chat_id  # the chat whose turn waits (the card shows with it)
        call = pending.request.call
        name = people_name(call.name)  # an MCP tool as server.tool
        self.setObjectName("approvalCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.heading = QLabel(f"<b>Claude wants to run <code>{html.escape(name)}</code></b>")
        self.heading.setObjectName("approvalHeading")
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        action = QLabel(pending.request.summary)
        action.setObjectName("approvalSummary")
        action.setTextFormat(Qt.TextFormat.PlainText)  # the model's words, never markup
        action.setWordWrap(True)
        action.setFont(theme.monospace())
        action.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.arguments = QPlainTextEdit(json.dumps(call.input, indent=2, ensure_ascii=False))
        self.arguments.setObjectName("approvalArguments")
        self.arguments.setReadOnly(True)
        self.arguments.setFont(theme.monospace())
        self.arguments.setMaximumHeight(160)
        self.arguments.hide()
        self.show_arguments = QToolButton()
        self.show_arguments.setObjectName("approvalShowArguments")
        self.show_arguments.setText("Arguments ▸")
        self.show_arguments.setAutoRaise(True)
        self.show_arguments.setCheckable(True)
        self.show_arguments.toggled.connect(self._on_show_arguments_toggled)
        self.allow_once = QPushButton("Allow once")
        self.allow_always = QPushButton("Always for this chat")
        self.deny = QPushButton("Deny")
        self.deny.setDefault(True)  # Enter never runs something by accident
        self.allow_once.clicked.connect(self._on_allow_once_clicked)
        self.allow_always.clicked.connect(self._on_allow_always_clicked)
        self.deny.clicked.connect(self._on_deny_clicked)
        buttons = QHBoxLayout()
        buttons.addWidget(self.show_arguments)
        buttons.addStretch(1)
        for button in (self.deny, self.allow_always, self.allow_once):
            buttons.addWidget(button)
        column = QVBoxLayout(self)
        column.setContentsMargins(12, 8, 12, 8)
        column.addWidget(self.heading)
        column.addWidget(action)
        column.addWidget(self.arguments)
        column.addLayout(buttons)

    @property
    def answered(self) -> bool:
        return self.pending.answered.is_set()

    def answer(self, decision: ApprovalDecision) -> None:
        if not self.answered:
            self.pending.answer(decision)
        self.finished.emit()

    @Slot()
    def withdraw(self) -> None:
        """The turn was stopped (or the window closes): no answer is needed any more;
        a wait still open is told no."""
        self.answer(ApprovalDecision.DENY)

    @Slot(bool)
    def _on_show_arguments_toggled(self, shown: bool) -> None:
        self.arguments.setVisible(shown)
        self.show_arguments.setText("Arguments ▾" if shown else "Arguments ▸")

    @Slot()
    def _on_allow_once_clicked(self) -> None:
        self.answer(ApprovalDecision.ALLOW_ONCE)

    @Slot()
    def _on_allow_always_clicked(self) -> None:
        self.answer(ApprovalDecision.ALLOW_ALWAYS)

    @Slot()
    def _on_deny_clicked(self) -> None:
        self.answer(ApprovalDecision.DENY)
