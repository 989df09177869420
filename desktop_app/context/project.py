"""Projects: memory shared across chats — instructions, pinned facts and knowledge files.

A chat in a project starts its system prompt with the project's layers, in this fixed
order: project instructions, project facts, project knowledge; then come the chat's own
system prompt and the chat's facts. The project's part is one block with a cache
breakpoint after it, so every chat of the project reads it from the same cache.

Knowledge is never silently cut: files are sent whole while they fit the project's
budget (a share of the chat's window). When they do not fit, nothing of them is sent
until the user chooses — some files (`chosen`), or none sent whole and the model reading
them on demand (`on_demand`, through the `read_project_file` tool) — and the panel says
so. A chat can switch any project layer off for itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from enum import StrEnum

from desktop_app.context.facts import Fact
from desktop_app.core.blocks import OpaqueBlock
from desktop_app.core.messages import new_id
from desktop_app.tokens.documents import PAGE_IMAGE_TOKENS

LAYERS = ("instructions", "facts", "knowledge")  # the documented order
DEFAULT_KNOWLEDGE_BUDGET = 0.30  # of the chat's context window


class KnowledgeMode(StrEnum):
    WHOLE = "whole"  # every file, whole, when all fit the budget; else none (and said)
    CHOSEN = "chosen"  # the files the user chose, whole
    ON_DEMAND = "on_demand"  # a list of the files; the model reads them with a tool


@dataclass(frozen=True, slots=True)
class KnowledgeFile:
    name: str
    text: str
    id: str = field(default_factory=lambda: new_id("file"))
    chosen: bool = True  # sent in the `chosen` mode
    added_at: float = field(default_factory=time.time)
    # A PDF sent as a `document` (Claude reads its pages): its base64; `text` is then its
    # extracted words (what the on-demand tool reads). "" for a file sent as text.
    document: str = ""
    pages: int = 0

    def tokens(self, count: Callable[[str], int]) -> int:
        """What it adds to a request, about: its text, or a document's pages and text."""
        return (
            self.pages * PAGE_IMAGE_TOKENS + count(self.text) if self.document else count(self.text)
        )

    def block(self) -> OpaqueBlock:
        """A document file as the `document` block a request carries (citations on)."""
        return OpaqueBlock(
            "document",
            {
                "type": "document",
                "source": {
                    "type": "base64",
                    "media_type": "application/pdf",
                    "data": self.document,
                },
                "title": self.name,
                "citations": {"enabled": True},
            },
        )


@dataclass(frozen=True, slots=True)
class Project:
    id: str
    name: str
    instructions: str = ""
    facts: tuple[Fact, ...] = ()
    files: tuple[KnowledgeFile, ...] = ()
    knowledge_budget: float = DEFAULT_KNOWLEDGE_BUDGET
    knowledge_mode: KnowledgeMode = KnowledgeMode.WHOLE
    model: str = ""  # new chats in the project take it ("" = Settings' model)
    workspace: str = ""  # the file tools' folder for its chats ("" = Settings')
    # What new chats of the project start with (ContextSettings field → value, sorted),
    # over Settings' defaults: max output, thinking, compaction, tools off, …
    defaults: tuple[tuple[str, object], ...] = ()
    created_at: float = field(default_factory=time.time)
    spend_cap: float = 0.0  # the most its chats may cost together (chats/budgets.py); 0: none


@dataclass(frozen=True, slots=True)
class Layer:
    """One project layer as a chat's next request holds it."""

    name: str  # instructions, facts or knowledge
    text: str  # "" when empty, switched off, or (knowledge) not sent
    off: bool = False  # the chat switched it off
    note: str = ""  # what the user should know (knowledge over its budget, …)


@dataclass(frozen=True, slots=True)
class ProjectLayers:
    """A project's layers for one chat, in order, and what the model may read on demand."""

    project: Project
    layers: tuple[Layer, ...]
    readable: tuple[KnowledgeFile, ...] = ()  # for read_project_file (on-demand mode)
    # Knowledge files sent as documents: a system prompt cannot hold one, so they open the
    # first message of the request (context/projection.py), counted as the project's.
    documents: tuple[OpaqueBlock, ...] = ()

    @property
    def text(self) -> str:
        return "\n\n".join(layer.text for layer in self.layers if layer.text)


def layers_for(
    project: Project,
    off: Collection[str],
    window: int,
    count: Callable[[str], int],
) -> ProjectLayers:
    """The project's layers as `window` and the chat's switches allow. `count`: a text's
    token estimate (its own, uncalibrated: the budget is the user's number)."""
    name = project.name
    instructions = (
        f"# Project: {name}\n\nInstructions for every chat in this project:\n\n"
        f"{project.instructions.strip()}"
        if project.instructions.strip()
        else ""
    )
    sent_facts = [f for f in project.facts if not f.pending]
    facts = (
        "\n".join(
            [
                f"# Project facts ({name})",
                "Pinned for every chat in this project; treat them as true and current.",
                "",
                *(f.render() for f in sent_facts),
            ]
        )
        if sent_facts
        else ""
    )
    knowledge, note, readable, documents = _knowledge(project, window, count)
    layers = []
    for layer_name, text, said in (
        ("instructions", instructions, ""),
        ("facts", facts, ""),
        ("knowledge", knowledge, note),
    ):
        switched_off = layer_name in off
        layers.append(Layer(layer_name, "" if switched_off else text, switched_off, said))
    if "knowledge" in off:
        readable, documents = (), ()
    return ProjectLayers(project, tuple(layers), readable, documents)


def _knowledge(
    project: Project, window: int, count: Callable[[str], int]
) -> tuple[str, str, tuple[KnowledgeFile, ...], tuple[OpaqueBlock, ...]]:
    """(the layer's text, a note for the user, the files readable on demand, the files
    sent as documents)."""
    files = project.files
    if not files:
        return "", "", (), ()
    budget = int(window * project.knowledge_budget)
    sizes = {f.id: f.tokens(count) for f in files}
    if project.knowledge_mode is KnowledgeMode.ON_DEMAND:
        listing = "\n".join(f"- {f.name} (≈{sizes[f.id]:,} tokens)" for f in files)
        text = (
            f"# Project knowledge ({project.name}), read on demand\n"
            "These files are not in this prompt; read one with the read_project_file tool "
            "when it is needed:\n" + listing
        )
        return text, f"{len(files)} files listed; the model reads them on demand", files, ()
    chosen = (
        files
        if project.knowledge_mode is KnowledgeMode.WHOLE
        else tuple(f for f in files if f.chosen)
    )
    total = sum(sizes[f.id] for f in chosen)
    if total > budget:
        what = (
            "the chosen files"
            if project.knowledge_mode is KnowledgeMode.CHOSEN
            else (f"all {len(files)} files")
        )
        return (
            "",
            f"Not sent: {what} need ≈{total:,} tokens, over the budget of ≈{budget:,} "
            f"({project.knowledge_budget:.0%} of the window). Choose files, raise the "
            "budget, or let the model read them on demand.",
            (),
            (),
        )
    if not chosen:
        return "", "No file is chosen: nothing of the knowledge is sent.", (), ()
    parts = [f"# Project knowledge ({project.name})"]
    for f in chosen:
        if not f.document:
            parts += ["", f'<file name="{f.name}">', f.text.rstrip("\n"), "</file>"]
    documents = [f for f in chosen if f.document]
    if documents:  # (they open the conversation: said here, so the model knows why)
        names = ", ".join(f"{f.name} ({f.pages} page{'s' * (f.pages != 1)})" for f in documents)
        parts += [
            "",
            f"Also in this project, as documents opening the conversation: {names}.",
        ]
    left_out = len(files) - len(chosen)
    note = f"{left_out} files not chosen are not sent" if left_out else ""
    return "\n".join(parts), note, (), tuple(f.block() for f in documents)
