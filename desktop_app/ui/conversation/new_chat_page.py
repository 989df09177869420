"""What a chat with no messages shows instead of a blank page: the model and its window,
what the first request will hold before a word is typed (the project's layers, the
pinned facts), and a few ways to start — each of which only fills the composer."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from desktop_app.context.plan import Section
from desktop_app.ui import theme
from desktop_app.ui.conversation.wrap_row import WrapRow

if TYPE_CHECKING:
    from desktop_app.context.facts import Fact
    from desktop_app.context.plan import Plan

# (the button, what it puts in the composer)
STARTERS = (
    ("Ask about a long document", "Here is a document. Summarize it, then answer: "),
    ("Work through a problem", "Let's work through this step by step: "),
    ("Draft something with me", "Help me draft "),
)
PROJECT_LAYERS = ("project instructions", "project facts", "project knowledge")
READING_PX = 680


class NewChatPage(QWidget):
    """Signals:
    starter_chosen(str): put this text in the composer (nothing is sent).
    """

    starter_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("newChatPage")
        self.title = QLabel("New chat")
        self.title.setFont(theme.font(self.title.font(), "title"))
        self.model_line = QLabel()
        self.model_line.setObjectName("newChatModel")
        self.holds = QLabel()  # what the first request holds before a word is typed
        self.holds.setObjectName("newChatHolds")
        self.holds.setWordWrap(True)
        self.holds.setTextFormat(Qt.TextFormat.RichText)
        buttons = []
        for label, text in STARTERS:
            button = QPushButton(label)
            button.setToolTip(f"Puts “{text.strip()}” in the message box (nothing is sent)")
            button.clicked.connect(lambda _checked=False, t=text: self.starter_chosen.emit(t))
            buttons.append(button)
        self.starters = WrapRow(*buttons)
        inner = QWidget()  # the reading column's width, centred (stretches, not alignment)
        inner.setMaximumWidth(READING_PX)
        column = QVBoxLayout(inner)
        column.setContentsMargins(theme.space(6), 0, theme.space(6), 0)
        column.setSpacing(theme.space(2))
        for widget in (self.title, self.model_line, self.holds, self.starters):
            column.addWidget(widget)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(inner, 4)
        row.addStretch(1)
        outer = QVBoxLayout(self)
        outer.addStretch(2)
        outer.addLayout(row)
        outer.addStretch(3)

    def show_chat(self, model: str, plan: Plan | None, facts: tuple[Fact, ...]) -> None:
        window = f" · a {plan.context_window:,}-token window" if plan is not None else ""
        self.model_line.setText(f"{model}{window}")
        lines = []
        if plan is not None:
            layers = [
                f"{layer.removeprefix('project ')} ≈{tokens:,}"
                for layer in PROJECT_LAYERS
                if (tokens := plan.sections.get(Section(layer), 0))
            ]
            if plan.project is not None:
                name = escape(plan.project.project.name)
                lines.append(
                    f"In the project <b>{name}</b>: "
                    + (", ".join(layers) + " tokens" if layers else "its layers are empty")
                )
            lines.append(
                f"A one-word first message would send ≈{plan.estimated_input:,} tokens: it, "
                "the system prompt, the pinned facts and the tools."
            )
        pinned = [fact for fact in facts if not fact.pending]
        if pinned:
            shown = "".join(f"<li>{escape(fact.text)}</li>" for fact in pinned[:5])
            more = f"<br>and {len(pinned) - 5:,} more" if len(pinned) > 5 else ""
            lines.append(f"Pinned, sent word for word every turn:<ul>{shown}</ul>{more}")
        else:
            lines.append(
                "No pinned facts yet: pin what every turn must carry (the Facts tab, or a "
                "message's Pin), and it is never summarized."
            )
        self.holds.setText("<br>".join(lines))
