"""Other apps' exports, read into chats: Claude's (claude.ai and Claude desktop's "Export
data", with its projects) and ChatGPT's ("Export data") `conversations.json` — a file,
its shards, or the zip they come in —, Open WebUI's "Export All Chats", a LibreChat
conversation, a SillyTavern chat (`.jsonl`). Every branch of a conversation's tree is kept (a version beside the
message it replaces, ‹1/2›), the one the source showed is shown, and what could not be
brought is said in the chat's import report. A conversation imported before (its source
id is kept) is not imported again.

Each format's reader (`claude.py`, `chatgpt.py`, `openwebui.py`, `librechat.py`,
`sillytavern.py`) makes `ForeignChat`s: neutral trees of
messages; `tree.py` stores them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from desktop_app.core.blocks import Block
from desktop_app.core.messages import Message

# The formats this package reads, as `contextdesk import --from` names them.
FORMATS = ("claude", "chatgpt", "openwebui", "librechat", "sillytavern")


@dataclass(frozen=True, slots=True)
class Hidden:
    """What the source kept but did not show — a system message, another app's tool call
    or its output, the model's notes: kept with the imported chat (`hidden_messages`),
    never shown in it or sent, and written in its export."""

    path: str  # where it was in the export (a JSON path)
    role: str  # the source's: "system", "tool", "assistant", …
    kind: str  # what it was: "execution_output", "tool_use web_search", "thinking", …
    text: str
    after: str | None = None  # the message it followed in the chat (None: before the first)


@dataclass(frozen=True, slots=True)
class ForeignNode:
    """One message of a conversation's tree: its id in the source, its parent's (None:
    a first message), the message as ContextDesk stores it (None: a node that holds
    nothing to show — a root, a hidden system message; its children follow its parent),
    and what of it the source did not show."""

    id: str
    parent: str | None
    message: Message | None
    hidden: tuple[Hidden, ...] = ()


@dataclass(frozen=True, slots=True)
class ForeignChat:
    source: str  # "claude" or "chatgpt"
    source_id: str  # the conversation's id there: a re-import finds it
    title: str
    nodes: tuple[ForeignNode, ...]  # parents before their children
    shown: str | None  # the node the source showed last (its branch is shown); None: latest
    model: str = ""  # the model the source names for it ("" when it does not)
    notes: tuple[str, ...] = field(default=())  # what could not be brought, by JSON path
    project: str = ""  # the source's id of the project it belongs to ("" when none)
    # What the source told the model of the user in it (ChatGPT's custom instructions):
    # offered as facts to accept or reject, never pinned by the import.
    suggested: tuple[str, ...] = field(default=())

    @property
    def key(self) -> str:
        return f"{self.source}:{self.source_id}"


def message_of(role: str, blocks: Sequence[Block], when: float | None, model: str = "") -> Message:
    """A message as the source wrote it, at its time (now, when it names none)."""
    kept = {"created_at": when} if when else {}
    return Message(role, tuple(blocks), model=model, **kept)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class ForeignProject:
    """A project of the source (Claude's `projects.json`): its instructions, and its
    documents as knowledge files (name, text)."""

    source_id: str
    name: str
    instructions: str
    docs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class ForeignMemory:
    """What the source remembers of the user (Claude's `memories.json`): for chats outside
    projects, and per project (the source's project id → its memory), each as facts."""

    general: tuple[str, ...] = ()
    projects: tuple[tuple[str, tuple[str, ...]], ...] = ()


def memory_facts(text: str) -> tuple[str, ...]:
    """A memory written as Markdown — paragraphs under bold headings ("**Work context**")
    or bullet lists — as facts: a paragraph or an item each, with its heading before it."""
    facts: list[str] = []
    heading = ""
    for paragraph in text.replace("\r\n", "\n").split("\n\n"):
        lines = [line.strip() for line in paragraph.splitlines() if line.strip()]
        if lines and _is_heading(lines[0]):
            heading = lines.pop(0).strip("*#_ ").rstrip(":")
        if not lines:
            continue
        items = [line.lstrip("-*• ").strip() for line in lines]
        if not all(line[:1] in "-*•" for line in lines):
            items = [" ".join(lines)]
        facts += [f"{heading}: {item}" if heading else item for item in items if item]
    return tuple(facts)


def _is_heading(line: str) -> bool:
    return (
        line.startswith("#")
        or (line.startswith("**") and line.endswith("**"))
        or (line.endswith(":") and len(line) < 60)
    )


def an_object(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one (a field of the wrong shape
    is read as absent)."""
    return value if isinstance(value, dict) else {}


def detect(data: object) -> str | None:
    """Which app's export this JSON is (None: none we read). (SillyTavern's is JSON
    Lines: known by its file's name.)"""
    if isinstance(data, dict) and "conversationId" in data:
        return "librechat"
    items = data.get("conversations") if isinstance(data, dict) else data
    if not isinstance(items, list):
        return None
    for item in items:  # (one may lack its tree — a damaged conversation: the next tells)
        if not isinstance(item, dict):
            return None
        if "chat_messages" in item:
            return "claude"
        if "mapping" in item:
            return "chatgpt"
        if isinstance(item.get("chat"), dict) and "history" in item["chat"]:
            return "openwebui"
        if "conversationId" in item:
            return "librechat"
    return None


def parents_first(tree: dict[str, Any], parent_key: str) -> list[str]:
    """The ids of `tree`'s nodes (objects that name their parent by `parent_key`), each
    after its parent; a node whose parent is missing, or in a cycle, comes where it is
    found (the store places it)."""
    order: list[str] = []
    seen: set[str] = set()
    for start in tree:
        chain = []
        node_id: Any = start
        while isinstance(node_id, str) and node_id in tree and node_id not in seen:
            chain.append(node_id)
            seen.add(node_id)
            node = tree[node_id]
            node_id = node.get(parent_key) if isinstance(node, dict) else None
        order.extend(reversed(chain))
    return [n for n in order if isinstance(tree[n], dict)]
