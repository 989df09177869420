"""The chat's project: which project it is in (one action to move it), the project's
layers as this chat sends them — each with its tokens, each switchable for this chat —
and the project itself: its instructions, pinned facts and knowledge files, the
knowledge's budget and how it is sent. Every change re-plans the project's chats."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QInputDialog,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.context.plan import Section
from desktop_app.context.project import LAYERS, Project
from desktop_app.ui.projects.project_editor import ProjectEditor

if TYPE_CHECKING:
    from desktop_app.ui.conversation.session import ChatSession

NEW_PROJECT = "__new__"


class ProjectDialog(QDialog):
    """Signals:
    changed(): the chat's project, its layers or the project changed (plan again).
    """

    changed = Signal()

    def __init__(self, session: ChatSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("projectDialog")
        self.setWindowTitle("Project")
        self.session = session
        self.projects = session.engine.projects
        self._filling = False

        self.choice = QComboBox()
        self.choice.setObjectName("projectChoice")
        self.choice.activated.connect(self._on_choice_activated)
        self.layer_boxes = {name: QCheckBox() for name in LAYERS}
        layers = QGroupBox("Sent in this chat, before its own system prompt and facts")
        layer_column = QVBoxLayout(layers)
        for name, box in self.layer_boxes.items():
            box.setObjectName(f"layer_{name}")
            box.toggled.connect(lambda on, layer=name: self._on_layer_toggled(layer, on))
            layer_column.addWidget(box)
        self.knowledge_note = QLabel()
        self.knowledge_note.setWordWrap(True)
        self.knowledge_note.setObjectName("knowledgeNote")
        layer_column.addWidget(self.knowledge_note)

        self.project_box = ProjectEditor(session.engine, lambda: self.project)
        self.project_box.changed.connect(self.changed)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        top = QFormLayout()
        top.addRow("This chat is in", self.choice)
        layout.addLayout(top)
        layout.addWidget(layers)
        layout.addWidget(self.project_box, 1)
        layout.addWidget(close)
        # Enter in a field finishes that field; it must not press a button too (it would
        # save the instructions, or close the dialog over an error it just showed).
        for button in self.findChildren(QPushButton):
            button.setAutoDefault(False)
        self.resize(600, 720)
        # The layers' tokens are the chat's next request's: shown again as it is planned.
        session.planned.connect(self._on_planned)
        self.refresh()

    # -- showing ------------------------------------------------------------------------------

    @property
    def project(self) -> Project | None:
        return self.projects.project_of(self.session.chat)

    def _refresh_if_open(self) -> None:
        if self.isVisible():  # closed meanwhile: nothing to show (the data may be gone)
            self.refresh()

    def refresh(self) -> None:
        self._filling = True
        project = self.project
        self.choice.clear()
        self.choice.addItem("No project", "")
        for p in self.projects.all():
            self.choice.addItem(p.name, p.id)
        self.choice.addItem("New project…", NEW_PROJECT)
        self.choice.setCurrentIndex(max(0, self.choice.findData(project.id if project else "")))
        self._show_layers(project)
        self.project_box.refresh()
        self._filling = False

    @Slot(object)
    def _on_planned(self, _plan: object) -> None:
        if self.isVisible():
            self._filling = True  # showing the boxes is not switching them
            self._show_layers(self.project)
            self._filling = False

    def _show_layers(self, project: Project | None) -> None:
        plan = self.session.plan
        off = self.projects.layers_off(self.session.chat)
        layers = (
            {layer.name: layer for layer in plan.project.layers} if plan and plan.project else {}
        )
        for name, box in self.layer_boxes.items():
            box.setEnabled(project is not None)
            box.setChecked(project is not None and name not in off)
            tokens = plan.sections.get(Section(f"project {name}"), 0) if plan else 0
            box.setText(f"Project {name}: ≈{tokens:,} tokens" if tokens else f"Project {name}")
        note = layers["knowledge"].note if "knowledge" in layers else ""
        self.knowledge_note.setText(note)
        self.knowledge_note.setVisible(bool(note))

    # -- acting -------------------------------------------------------------------------------

    def _act(self, action: Callable[[], object]) -> None:
        """Run a change (the chat's project or layers), as the editor runs its own; the
        dialog then shows the chat's place anew."""
        self.project_box.act(action)
        QTimer.singleShot(0, self, self._refresh_if_open)

    @Slot(int)
    def _on_choice_activated(self, index: int) -> None:
        chosen = self.choice.itemData(index)
        chat = self.session.chat
        if chosen == NEW_PROJECT:
            name, ok = QInputDialog.getText(self, "New project", "Name")
            if not ok or not name.strip():
                self.refresh()
                return
            self._act(lambda: self.projects.move(chat, self.projects.new(name).id))
        else:
            self._act(lambda: self.projects.move(chat, chosen or None))

    def _on_layer_toggled(self, layer: str, on: bool) -> None:
        if not self._filling:
            self._act(lambda: self.projects.set_layer(self.session.chat, layer, on))
