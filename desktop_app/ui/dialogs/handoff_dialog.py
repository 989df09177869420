"""Continue in a new chat: how many of the last turns to carry and who writes the summary
(Claude, one request; or a digest, none), then a preview as compaction's is — the summary
(editable), each pinned fact to copy, move or leave, what the check found missing — and
*Continue* makes the new chat. Nothing changes before that."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop_app.chats import (
    KEEP_TURNS,
    FactChoice,
    first_request_tokens,
    hand_off,
    previewing_handoff,
)
from desktop_app.config.prices import format_money
from desktop_app.context.plan import Section
from desktop_app.core.errors import ContextDeskError
from desktop_app.core.messages import Usage
from desktop_app.ui.dialogs.slow_preview import SlowPreview

if TYPE_CHECKING:
    from desktop_app.chats import HandoffPreview
    from desktop_app.core.errors import ErrorInfo
    from desktop_app.ui.conversation.session import ChatSession

CHOICES = (
    ("Copy", FactChoice.COPY),
    ("Move", FactChoice.MOVE),
    ("Leave", FactChoice.DROP),
)


class HandoffDialog(QDialog):
    """Signals: continued(Chat) — the new chat, made."""

    continued = Signal(object)

    def __init__(self, session: ChatSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.preview: HandoffPreview | None = None
        self.previewing = SlowPreview("handoff", self)
        self.previewing.ready.connect(self.show_preview)
        self.previewing.failed.connect(self._on_previewing_failed)
        self.previewing.ended.connect(self._on_previewing_ended)
        self.setObjectName("handoffDialog")
        self.setWindowTitle(f"Continue “{session.chat.title}” in a new chat")
        self.keep = QSpinBox()
        self.keep.setRange(1, 50)
        self.keep.setValue(KEEP_TURNS)
        self.keep.setSuffix(" turns, verbatim")
        self.by_model = QRadioButton("Claude writes it (one request)")
        self.by_model.setChecked(not session.engine.demo)
        self.by_digest = QRadioButton("A digest of decisions, numbers and questions (no request)")
        self.by_digest.setChecked(session.engine.demo)
        self.preview_button = QPushButton("Preview")
        self.preview_button.setDefault(True)
        self.preview_button.clicked.connect(self._on_preview_clicked)
        self.status = QLabel("Nothing changes until you continue.")
        self.status.setObjectName("handoffStatus")
        self.status.setWordWrap(True)
        self.summary = QPlainTextEdit()
        self.summary.setObjectName("handoffSummary")
        self.summary.setPlaceholderText("The summary the new chat starts with; edit it freely.")
        self.facts = QFormLayout()
        self.fact_boxes: dict[str, QComboBox] = {}
        self.continue_button = QPushButton("Continue in new chat")
        self.continue_button.setObjectName("handoffContinue")
        self.continue_button.setEnabled(False)
        self.continue_button.clicked.connect(self._on_continue_clicked)
        cancel = QPushButton("Cancel")
        cancel.clicked.connect(self.reject)

        choose = QFormLayout()
        choose.addRow("Carry the last", self.keep)
        choose.addRow("Summary of the rest", self.by_model)
        choose.addRow("", self.by_digest)
        top = QHBoxLayout()
        top.addLayout(choose, 1)
        top.addWidget(self.preview_button)
        bottom = QHBoxLayout()
        bottom.addStretch(1)
        bottom.addWidget(self.continue_button)
        bottom.addWidget(cancel)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.status)
        layout.addWidget(self.summary, 1)
        layout.addLayout(self.facts)
        layout.addLayout(bottom)
        self.resize(680, 560)

    @Slot()
    def _on_preview_clicked(self) -> None:
        if self.previewing.running:
            self.previewing.cancel()
            return
        self.previewing.start(
            previewing_handoff(
                self.session.chat, self.keep.value(), use_model=self.by_model.isChecked()
            )
        )
        self.preview_button.setText("Cancel")
        self.continue_button.setEnabled(False)
        self.status.setText(
            "Asking Claude for a summary…" if self.by_model.isChecked() else "Making the digest…"
        )

    @Slot()
    def _on_previewing_ended(self) -> None:
        self.preview_button.setText("Preview")

    @Slot(object)
    def _on_previewing_failed(self, error: ErrorInfo | None) -> None:
        title, message = (error.title, error.message) if error else ("No preview", "")
        self.status.setText(f"<b>{escape(title)}</b>: {escape(message)}")

    def show_preview(self, preview: HandoffPreview) -> None:
        self.preview = preview
        facts = len(preview.facts)
        told = (
            f"The new chat starts with {facts} pinned fact{'s' if facts != 1 else ''}, "
            + ("the summary below, " if preview.summary else "no summary (every turn fits), ")
            + f"and the last {len(preview.kept)} messages verbatim"
            + (" — in the same project." if preview.project_id else ".")
        )
        told += " " + escape(self._sizes(preview), quote=False)
        if preview.missing:
            told += (
                " <b>Neither the summary nor a pinned fact holds:</b> "
                + escape(", ".join(preview.missing))
                + " — add them to the summary, or pin them first."
            )
        self.status.setText(told)
        self.summary.setPlainText(preview.summary)
        while self.facts.rowCount():
            self.facts.removeRow(0)
        self.fact_boxes = {}
        for fact in preview.facts:
            box = QComboBox()
            for words, choice in CHOICES:
                box.addItem(words, choice)
            box.setToolTip("Copy: pinned in both chats · Move: the new one only · Leave: old only")
            label = QLabel(fact.text)
            label.setWordWrap(True)
            self.facts.addRow(box, label)
            self.fact_boxes[fact.id] = box
        self.continue_button.setEnabled(True)

    def _sizes(self, preview: HandoffPreview) -> str:
        """The new chat's first request beside this chat's next, in tokens and input cost
        (estimates: the new one is not made yet)."""
        engine, chat = self.session.engine, self.session.chat
        prices = engine.prices()

        def priced(tokens: int) -> str:
            cost = prices.cost(chat.model, Usage(input_tokens=tokens))
            return f"≈{tokens:,} tokens" + (
                f", ≈{format_money(cost, prices.currency)}" if cost is not None else ""
            )

        new = first_request_tokens(preview, chat, engine.counter)
        plan = self.session.plan
        if plan is None:
            return f"Its first request: {priced(new)} (input, estimated)."
        # As this chat's plan counts: calibrated, with the same tools offered.
        new = round(new * plan.calibration) + plan.sections.get(Section.TOOLS, 0)
        old = plan.input_figure.value
        return (
            f"Its first request: {priced(new)}; this chat's next: {priced(old)} (input, estimated)."
        )

    @Slot()
    def _on_continue_clicked(self) -> None:
        preview = self.preview
        if preview is None:
            return
        choices = {fid: FactChoice(box.currentData()) for fid, box in self.fact_boxes.items()}
        try:
            made = hand_off(
                self.session.engine,
                self.session.chat,
                preview,
                summary=self.summary.toPlainText(),
                choices=choices,
            )
        except ContextDeskError as exc:  # (a full disk: nothing was made)
            self.status.setText(f"<b>{escape(exc.title)}</b>: {escape(exc.message)}")
            return
        self.session.reload()  # (a moved fact left it)
        self.continued.emit(made.chat)
        self.accept()

    def reject(self) -> None:
        self.previewing.stop()
        super().reject()
