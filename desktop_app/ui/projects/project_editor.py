"""A project itself — its instructions, pinned facts and knowledge files (with their
tokens, the knowledge's budget and how it is sent), its spending cap, what its new chats
start with, and what its shared prefix earns from the prompt cache — editable in place.
One widget for the project's page and the chat's Project dialog; every change re-plans
the project's chats (`changed`)."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QHideEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from desktop_app import said
from desktop_app.chats import pages_said
from desktop_app.context import bounds
from desktop_app.context.project import KnowledgeMode, Project
from desktop_app.core.errors import ContextDeskError
from desktop_app.ui.conversation.pdf_choice import ask_pdf_way, is_pdf
from desktop_app.ui.dialogs.fact_dialog import ask_fact

if TYPE_CHECKING:
    from desktop_app.chats import Engine

ID_ROLE = Qt.ItemDataRole.UserRole + 1
PENDING_ROLE = Qt.ItemDataRole.UserRole + 2  # a suggested fact, awaiting Accept
MODES = {
    KnowledgeMode.WHOLE: "Send every file whole (when they all fit)",
    KnowledgeMode.CHOSEN: "Send the checked files whole",
    KnowledgeMode.ON_DEMAND: "List them; Claude reads one when needed",
}


class ProjectEditor(QGroupBox):
    """The project `project_of()` names (None: nothing to edit, the box disabled).

    Signals:
    changed(): the project changed (its chats plan again).
    """

    changed = Signal()

    def __init__(
        self,
        engine: Engine,
        project_of: Callable[[], Project | None],
        title: str = "The project (shared by all its chats)",
        parent: QWidget | None = None,
        *,
        show_cache: bool = True,  # its line on the prompt cache (a page says it above)
    ) -> None:
        super().__init__(title, parent)
        self.setObjectName("projectEditor")
        self.engine = engine
        self.projects = engine.projects
        self._project_of = project_of
        self.show_cache = show_cache
        self._filling = False
        self.instructions = QPlainTextEdit()
        self.instructions.setObjectName("projectInstructions")
        self.instructions.setPlaceholderText("Instructions for every chat of the project")
        self.instructions.setMaximumHeight(110)
        self.instructions.installEventFilter(self)  # left: kept (`_keep_edited_instructions`)
        save = QPushButton("Save instructions")
        save.clicked.connect(self._on_save_instructions_clicked)
        self.facts = QListWidget()
        self.facts.setObjectName("projectFacts")
        self.facts.setMaximumHeight(110)
        pin = QPushButton("Pin a fact…")
        pin.clicked.connect(self._on_pin_clicked)
        unpin = QPushButton("Remove fact")
        unpin.clicked.connect(self._on_unpin_clicked)
        # A suggested fact (an imported project's memory) waits for the user: not sent.
        self.accept_fact = QPushButton("Accept")
        self.accept_fact.setObjectName("acceptProjectFact")
        self.accept_fact.setToolTip("Pin the suggested fact: sent with every chat of the project")
        self.accept_fact.clicked.connect(self._on_accept_fact_clicked)
        self.facts.currentItemChanged.connect(self._on_fact_current_changed)
        self.files = QListWidget()
        self.files.setObjectName("projectFiles")
        self.files.setMaximumHeight(110)
        self.files.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # (its tooltip: all of it)
        self.files.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.files.itemChanged.connect(self._on_file_item_changed)
        add_file = QPushButton("Add files…")
        add_file.clicked.connect(self._on_add_file_clicked)
        remove_file = QPushButton("Remove file")
        remove_file.clicked.connect(self._on_remove_file_clicked)
        self.mode = QComboBox()
        for mode, text in MODES.items():
            self.mode.addItem(text, mode.value)
        self.mode.activated.connect(self._on_mode_activated)
        self.budget = QDoubleSpinBox()
        self.budget.setRange(0, 100)
        self.budget.setDecimals(0)
        self.budget.setSuffix(" % of the window")
        self.budget.editingFinished.connect(self._on_budget_editing_finished)
        self.spend_cap = QDoubleSpinBox()  # a hard cap on its chats together (chats/budgets.py)
        self.spend_cap.setObjectName("projectSpendCap")
        self.spend_cap.setRange(0, 1_000_000)
        self.spend_cap.setPrefix("$")
        self.spend_cap.setSpecialValueText("No cap")
        self.spend_cap.setToolTip(
            "The most the project's chats may cost together: a send that would go over it "
            "is asked about first"
        )
        self.spend_cap.editingFinished.connect(self._on_spend_cap_editing_finished)
        # What the project's new chats start with (over Settings'); saved as left.
        self.new_model = QComboBox()
        self.new_model.setObjectName("projectModel")
        self.new_model.setEditable(True)
        self.new_model.addItem("Settings’ model", "")
        for info in engine.known_models():  # never a network call here
            self.new_model.addItem(f"{info.display_name} — {info.context_window:,}", info.id)
        self.new_model.activated.connect(self._on_new_model_chosen)
        typed = self.new_model.lineEdit()
        if typed is not None:  # a model typed is kept when the field is left, Enter or not
            typed.editingFinished.connect(self._on_new_model_chosen)
        self.new_max_tokens = _default_spin(
            "projectMaxTokens", 0, int(bounds.MAX_TOKENS.high), " tokens"
        )
        self.new_max_tokens.editingFinished.connect(self._on_defaults_edited)
        self.new_thinking = _default_spin(
            "projectThinking", -1, int(bounds.THINKING_BUDGET.high), " tokens (0 = off)"
        )
        self.new_thinking.editingFinished.connect(self._on_defaults_edited)

        # Its own wrapping line: in the box's title it would widen the dialog (600 → 671).
        self.cache_note = QLabel()
        self.cache_note.setObjectName("projectCacheNote")
        self.cache_note.setWordWrap(True)
        form = QFormLayout(self)
        form.addRow(self.cache_note)
        form.addRow("Instructions", self.instructions)
        form.addRow("", save)
        form.addRow("Pinned facts", self.facts)
        form.addRow("", _row(pin, unpin, self.accept_fact))
        form.addRow("Knowledge files", self.files)
        form.addRow("", _row(add_file, remove_file))
        form.addRow("Knowledge", self.mode)
        form.addRow("Budget", self.budget)
        # The budget's share in tokens, and whether the files fit it (a chat's own window
        # decides; Settings' model's is said: what a new chat of the project starts with).
        self.budget_note = QLabel()
        self.budget_note.setObjectName("projectBudgetNote")
        self.budget_note.setWordWrap(True)
        form.addRow("", self.budget_note)
        form.addRow("Spending cap", self.spend_cap)
        form.addRow("New chats: model", self.new_model)
        form.addRow("Max output", self.new_max_tokens)
        form.addRow("Thinking", self.new_thinking)
        self.problem = QLabel()
        self.problem.setWordWrap(True)
        self.problem.setObjectName("projectProblem")
        form.addRow(self.problem)
        # Enter in a field finishes that field; it must not press a button too (it would
        # save the instructions, or close a dialog over an error it just showed).
        for button in self.findChildren(QPushButton):
            button.setAutoDefault(False)
        self.refresh()

    @property
    def project(self) -> Project | None:
        return self._project_of()

    def refresh(self) -> None:
        """Show the project as it is now."""
        self._filling = True
        project = self.project
        self.setEnabled(project is not None)
        read, sent = self.projects.cache_reads(project) if project else (0, 0)
        self.cache_note.setText(
            f"Read from the prompt cache across its chats: {read:,} tokens in {sent:,} requests"
        )
        self.cache_note.setVisible(project is not None and self.show_cache)
        self.instructions.setPlainText(project.instructions if project else "")
        self.facts.clear()
        self.files.clear()
        self.budget_note.setText("")
        if project is not None:
            for fact in project.facts:
                item = QListWidgetItem(fact.text, self.facts)
                item.setData(ID_ROLE, fact.id)
                if fact.pending:
                    item.setText(f"Suggested by {said.fact_author(fact)}: {fact.text}")
                    item.setToolTip("Not sent until you accept it (Accept); Remove rejects it")
                    item.setData(PENDING_ROLE, True)
                    font = item.font()
                    font.setItalic(True)
                    item.setFont(font)
            self._on_fact_current_changed(self.facts.currentItem())
            count = self.engine.counter.text
            for file in project.files:
                kind = f", a document of {pages_said(file.pages)}" if file.document else ""
                words = f"{file.name}  ≈{file.tokens(count):,} tokens{kind}"
                item = QListWidgetItem(words, self.files)
                item.setToolTip(words)
                item.setData(ID_ROLE, file.id)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(
                    Qt.CheckState.Checked if file.chosen else Qt.CheckState.Unchecked
                )
            self.mode.setCurrentIndex(self.mode.findData(project.knowledge_mode.value))
            self.budget.setValue(project.knowledge_budget * 100)
            self.budget_note.setText(self._budget_words(project))
            self.spend_cap.setValue(project.spend_cap)
            self._show_defaults(project)
        self._filling = False

    def _show_defaults(self, project: Project) -> None:
        found = self.new_model.findData(project.model)
        if found < 0:
            self.new_model.addItem(project.model, project.model)
            found = self.new_model.count() - 1
        self.new_model.setCurrentIndex(found)
        defaults = dict(project.defaults)
        self.new_max_tokens.setValue(int(str(defaults.get("max_tokens", 0))))
        thinking = defaults.get("thinking")  # a budget, off (0), or Settings' (-1)
        budget = int(str(defaults.get("thinking_budget", -1))) if thinking == "budget" else -1
        self.new_thinking.setValue(0 if thinking == "off" else budget)

    def _budget_words(self, project: Project) -> str:
        """The files' tokens against the budget in a new chat of the project."""
        count = self.engine.counter.text
        files = project.files
        if project.knowledge_mode is KnowledgeMode.CHOSEN:
            files = tuple(f for f in files if f.chosen)
        total = sum(f.tokens(count) for f in files)
        model = project.model or self.engine.settings.model
        window = self.engine.model_window(model)
        budget = int(window * project.knowledge_budget)
        said_window = f"{window:,}-token window"
        if project.knowledge_mode is KnowledgeMode.ON_DEMAND:
            return f"Listed only; Claude reads a file when needed (≈{total:,} tokens in all)."
        if total <= budget:
            return f"≈{total:,} of ≈{budget:,} tokens, sent whole (in a {said_window})."
        return (
            f"≈{total:,} tokens, over the ≈{budget:,} of a {said_window}: none is sent "
            "whole — choose files, raise the budget, or let Claude read them on demand."
        )

    def act(self, action: Callable[[], object]) -> None:
        """Run a change; say what went wrong in place, or re-plan and show it."""
        try:
            action()
        except ContextDeskError as exc:
            self.problem.setText(f"<b>{escape(exc.title)}</b>: {escape(exc.message)}")
            return
        self.problem.setText("")
        self.changed.emit()
        # Later: a list item's or a box's own signal may be running (refilling now would
        # delete the item that sent it).
        QTimer.singleShot(0, self, self._refresh_if_shown)

    def _refresh_if_shown(self) -> None:
        if self.isVisible():  # closed meanwhile: nothing to show (the data may be gone)
            self.refresh()

    @Slot()
    def _on_save_instructions_clicked(self) -> None:
        project = self.project
        if project is not None:
            text = self.instructions.toPlainText()
            self.act(lambda: self.projects.change(project.id, instructions=text))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.instructions and event.type() == QEvent.Type.FocusOut:
            self._keep_edited_instructions()
        return super().eventFilter(watched, event)

    def hideEvent(self, event: QHideEvent) -> None:
        self._keep_edited_instructions()  # (the page left for a chat, the dialog closed)
        super().hideEvent(event)

    def _keep_edited_instructions(self) -> None:
        """Instructions typed and not saved are saved once the box is left, as every other
        field here is (they were dropped when the page was left)."""
        project = self.project
        if project is not None and self.instructions.toPlainText() != project.instructions:
            self._on_save_instructions_clicked()

    @Slot()
    def _on_pin_clicked(self) -> None:
        project = self.project
        text = ask_fact(self, "Pin to project", "Sent, verbatim, with every request of its chats:")
        if project is not None and text:
            self.act(lambda: self.projects.pin(project.id, text))

    @Slot(QListWidgetItem)
    def _on_fact_current_changed(self, item: QListWidgetItem | None) -> None:
        self.accept_fact.setEnabled(item is not None and bool(item.data(PENDING_ROLE)))

    @Slot()
    def _on_accept_fact_clicked(self) -> None:
        project, item = self.project, self.facts.currentItem()
        if project is not None and item is not None and item.data(PENDING_ROLE):
            fact_id = str(item.data(ID_ROLE))
            self.act(lambda: self.projects.accept(project.id, fact_id))

    @Slot()
    def _on_unpin_clicked(self) -> None:
        project, item = self.project, self.facts.currentItem()
        if project is not None and item is not None:
            fact_id = str(item.data(ID_ROLE))
            self.act(lambda: self.projects.unpin(project.id, fact_id))

    @Slot()
    def _on_add_file_clicked(self) -> None:
        project = self.project
        paths, _ = QFileDialog.getOpenFileNames(self, "Add knowledge files")
        if project is None or not paths:
            return
        ways: list[tuple[Path, bool]] = []
        for name in paths:
            path = Path(name)
            as_document = ask_pdf_way(self, path, self.engine) if is_pdf(path) else False
            if as_document is None:
                return  # cancelled: nothing is added
            ways.append((path, as_document))
        self.act(lambda: [self.projects.add_file(project.id, p, as_document=d) for p, d in ways])

    @Slot()
    def _on_remove_file_clicked(self) -> None:
        project, item = self.project, self.files.currentItem()
        if project is not None and item is not None:
            file_id = str(item.data(ID_ROLE))
            self.act(lambda: self.projects.remove_file(project.id, file_id))

    @Slot(QListWidgetItem)
    def _on_file_item_changed(self, _item: QListWidgetItem) -> None:
        project = self.project
        if self._filling or project is None:
            return
        chosen = [
            str(self.files.item(i).data(ID_ROLE))
            for i in range(self.files.count())
            if self.files.item(i).checkState() == Qt.CheckState.Checked
        ]
        self.act(lambda: self.projects.choose_files(project.id, chosen))

    @Slot(int)
    def _on_mode_activated(self, index: int) -> None:
        project = self.project
        if project is not None:
            mode = self.mode.itemData(index)
            self.act(lambda: self.projects.change(project.id, knowledge_mode=mode))

    @Slot()
    def _on_budget_editing_finished(self) -> None:
        project = self.project
        if project is not None and not self._filling:
            share = self.budget.value() / 100
            self.act(lambda: self.projects.change(project.id, knowledge_budget=share))

    @Slot()
    def _on_spend_cap_editing_finished(self) -> None:
        project = self.project
        cap = round(self.spend_cap.value(), 2)
        if project is not None and not self._filling and cap != project.spend_cap:
            self.act(lambda: self.projects.change(project.id, spend_cap=cap))

    @Slot()
    def _on_new_model_chosen(self) -> None:
        project = self.project
        if project is None or self._filling:
            return
        text = self.new_model.currentText().strip()
        found = self.new_model.findText(text)  # a listed name, or a model id typed
        model = str(self.new_model.itemData(found)) if found >= 0 else text
        if model != project.model:
            self.act(lambda: self.projects.change(project.id, model=model))

    @Slot()
    def _on_defaults_edited(self) -> None:
        project = self.project
        if project is None or self._filling:
            return
        max_tokens, thinking = self.new_max_tokens.value(), self.new_thinking.value()
        wanted = {  # the special value (the minimum) means Settings'
            "max_tokens": str(max_tokens) if max_tokens > 0 else "",
            "thinking": str(thinking) if thinking >= 0 else "",
        }
        self.act(lambda: self.projects.set_defaults(project.id, wanted))


def _default_spin(name: str, lowest: int, highest: int, suffix: str) -> QSpinBox:
    """A number new chats start with; its lowest value reads "Settings’" (none set)."""
    spin = QSpinBox()
    spin.setObjectName(name)
    spin.setRange(lowest, highest)
    spin.setSingleStep(1024)
    spin.setSuffix(suffix)
    spin.setSpecialValueText("Settings’")
    spin.setValue(lowest)
    return spin


def _row(*buttons: QPushButton) -> QWidget:
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    for button in buttons:
        layout.addWidget(button)
    layout.addStretch(1)
    return row
