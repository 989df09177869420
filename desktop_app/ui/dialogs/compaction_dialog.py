"""Compact now: optional instructions, then a preview — the proposed summary (editable),
the turns it covers, tokens before → after, and the facts the fidelity check found
missing, each one click from being pinned. Apply, or discard: nothing changes until
Apply."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from PySide6.QtCore import Slot
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app import said
from desktop_app.ui.conversation.session import ChatSession
from desktop_app.ui.dialogs.slow_preview import SlowPreview

if TYPE_CHECKING:
    from desktop_app.context.compaction import CompactionPreview
    from desktop_app.core.errors import ErrorInfo


class CompactionDialog(QDialog):
    def __init__(self, session: ChatSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.preview: CompactionPreview | None = None
        self.previewing = SlowPreview("compaction", self)
        self.previewing.ready.connect(self.show_preview)
        self.previewing.failed.connect(self._on_previewing_failed)
        self.previewing.ended.connect(self._on_previewing_ended)
        self.setWindowTitle(f"Compact “{session.chat.title}”")
        self.setObjectName("compactionDialog")
        self.instructions = QLineEdit()
        self.instructions.setPlaceholderText(
            "Optional: what the summary must keep (e.g. every order number)"
        )
        self.preview_button = QPushButton("Preview summary")
        self.preview_button.setDefault(True)
        self.preview_button.clicked.connect(self._on_preview_clicked)
        self.status = QLabel("Nothing changes until you apply the summary.")
        self.status.setWordWrap(True)
        self.summary = QPlainTextEdit()
        self.summary.setObjectName("summaryText")
        self.summary.setPlaceholderText(
            "The proposed summary appears here; you can edit it before applying."
        )
        self.missing_label = QLabel("Not in the summary or the pinned facts — pin any you need:")
        self.missing = QListWidget()
        self.missing.setMaximumHeight(110)
        self.missing_label.hide()
        self.missing.hide()
        self.pin_button = QPushButton("Pin selected fact")
        self.pin_button.clicked.connect(self._on_pin_clicked)
        self.pin_button.hide()
        self.apply_button = QPushButton("Apply")
        self.apply_button.setEnabled(False)
        self.apply_button.clicked.connect(self._on_apply_clicked)
        discard = QPushButton("Discard")
        discard.clicked.connect(self.reject)

        top = QHBoxLayout()
        top.addWidget(self.instructions, 1)
        top.addWidget(self.preview_button)
        bottom = QHBoxLayout()
        bottom.addWidget(self.pin_button)
        bottom.addStretch(1)
        bottom.addWidget(self.apply_button)
        bottom.addWidget(discard)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.status)
        layout.addWidget(self.summary, 1)
        layout.addWidget(self.missing_label)
        layout.addWidget(self.missing)
        layout.addLayout(bottom)
        self.resize(640, 520)

    @Slot()
    def _on_preview_clicked(self) -> None:
        if self.previewing.running:
            self.previewing.cancel()
            return
        chat = self.session.chat
        self.previewing.start(
            chat.memory.previewing_compaction(self.instructions.text(), self.session.messages)
        )
        self.preview_button.setText("Cancel")
        self.apply_button.setEnabled(False)
        self.status.setText("Asking the model for a summary…")

    @Slot()
    def _on_previewing_ended(self) -> None:
        self.preview_button.setText("Preview summary")

    @Slot(object)
    def _on_previewing_failed(self, error: ErrorInfo | None) -> None:
        title, message = (error.title, error.message) if error else ("No summary", "")
        self.status.setText(f"<b>{escape(title)}</b>: {escape(message)}")

    def show_preview(self, preview: CompactionPreview) -> None:
        self.preview = preview
        first, last = preview.span.turns
        cost = self.session.chat.costs.of_compaction(preview, self.session.messages)
        self.status.setText(
            f"Summarizes turns {first}–{last} ({len(preview.span.covers):,} messages): "
            f"≈{preview.tokens_before:,} → ≈{preview.tokens_after:,} tokens."
            + (f" {said.input_cost(cost)}" if cost is not None else "")
        )
        self.summary.setPlainText(preview.text)
        self.missing.clear()
        for fact in preview.missing:
            QListWidgetItem(fact, self.missing)
        for widget in (self.missing_label, self.missing, self.pin_button):
            widget.setVisible(bool(preview.missing))
        self.apply_button.setEnabled(True)

    @Slot()
    def _on_pin_clicked(self) -> None:
        item = self.missing.currentItem() or self.missing.item(0)
        if item is None:
            return
        self.session.pin_fact(item.text())
        self.missing.takeItem(self.missing.row(item))
        self.status.setText(self.status.text().split(" Pinned")[0] + f" Pinned “{item.text()}”.")

    @Slot()
    def _on_apply_clicked(self) -> None:
        if self.preview is None:
            return
        if self.session.apply_compaction(self.preview, self.summary.toPlainText()):
            self.accept()
            return
        error = self.session.error  # not saved: the preview stays, to apply once it can be
        self.status.setText(
            f"<b>Not applied</b>: {escape(error.message)}" if error else "Not applied."
        )

    def reject(self) -> None:
        self.previewing.stop()
        super().reject()
