"""Other apps' exports, read into chats: Claude's (claude.ai and Claude desktop's "Export
data") and ChatGPT's ("Export data") `conversations.json` — a file, its shards, or the
zip they come in. Every branch of a conversation's tree is kept (a version beside the
message it replaces, ‹1/2›), the one the source showed is shown, and what could not be
brought is said in the chat's import report. A conversation imported before (its source
id is kept) is not imported again.

Each format's reader (`claude.py`, `chatgpt.py`) makes `ForeignChat`s: neutral trees of
messages; `tree.py` stores them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from desktop_app.core.blocks import Block
from desktop_app.core.messages import Message

# The formats this package reads, as `contextdesk import --from` names them.
FORMATS = ("claude", "chatgpt")


@dataclass(frozen=True, slots=True)
class ForeignNode:
    """One message of a conversation's tree: its id in the source, its parent's (None:
    a first message), and the message as ContextDesk stores it (None: a node that holds
    nothing to keep — a root, a hidden system message; its children follow its parent)."""

    id: str
    parent: str | None
    message: Message | None


@dataclass(frozen=True, slots=True)
class ForeignChat:
    source: str  # "claude" or "chatgpt"
    source_id: str  # the conversation's id there: a re-import finds it
    title: str
    nodes: tuple[ForeignNode, ...]  # parents before their children
    shown: str | None  # the node the source showed last (its branch is shown); None: latest
    model: str = ""  # the model the source names for it ("" when it does not)
    notes: tuple[str, ...] = field(default=())  # what could not be brought, by JSON path

    @property
    def key(self) -> str:
        return f"{self.source}:{self.source_id}"


def message_of(role: str, blocks: Sequence[Block], when: float | None, model: str = "") -> Message:
    """A message as the source wrote it, at its time (now, when it names none)."""
    kept = {"created_at": when} if when else {}
    return Message(role, tuple(blocks), model=model, **kept)  # type: ignore[arg-type]


def detect(data: object) -> str | None:
    """Which app's `conversations.json` this is (None: neither)."""
    items = data.get("conversations") if isinstance(data, dict) else data
    if not isinstance(items, list) or not items or not isinstance(items[0], dict):
        return None
    first = items[0]
    if "chat_messages" in first:
        return "claude"
    if "mapping" in first:
        return "chatgpt"
    return None
