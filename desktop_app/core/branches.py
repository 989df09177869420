"""A chat's messages as a tree: editing a message or regenerating a reply adds a
sibling beside it, and the chat shows one branch — the path from the first message to
a leaf. Nothing is ever removed; switching branches only changes which leaf is shown.

Pure data (no database): `storage/branch_rows.py` reads each message's id, parent and
whether it is hidden, and asks this module for paths and siblings.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Node:
    id: str
    parent: str | None  # None: a first message
    hidden: bool = False  # stored but not shown (a reply cut before its first word)


@dataclass(frozen=True, slots=True)
class Siblings:
    """A message that has alternatives: all of them, oldest first, and which one it is."""

    ids: tuple[str, ...]
    index: int

    @property
    def label(self) -> str:
        return f"{self.index + 1}/{len(self.ids)}"


@dataclass(frozen=True, slots=True)
class Branch:
    """One way through a chat: the message it ends at, its length, the message (its
    number from 1, and id) where it last differs from a branch beside it, and whether
    it is shown."""

    leaf: str
    length: int
    differs_at: int
    differs_id: str
    shown: bool


class Tree:
    """Built from nodes in the order they were stored (a parent always comes before
    its children). A hidden message is passed over: its children hang from its parent."""

    def __init__(self, nodes: Iterable[Node]) -> None:
        self.parent: dict[str, str | None] = {}
        self.children: dict[str | None, list[str]] = {}
        self.order: dict[str, int] = {}  # each shown message's place in the stored order
        skipped: dict[str, str | None] = {}  # a hidden message → its shown parent
        newest: str | None = None
        for n, node in enumerate(nodes):
            parent = node.parent
            while parent in skipped:
                parent = skipped[parent]
            if parent is not None and parent not in self.parent:
                parent = None  # a parent that is gone (or never was): a first message
            if node.hidden:
                skipped[node.id] = parent
                continue
            self.parent[node.id] = parent
            self.children.setdefault(parent, []).append(node.id)
            self.order[node.id] = n
            newest = node.id
        self.newest = newest

    def __contains__(self, message_id: object) -> bool:
        return message_id in self.parent

    @property
    def branched(self) -> bool:
        return len(self.parent) > 0 and any(len(c) > 1 for c in self.children.values())

    def path(self, leaf: str | None = None) -> list[str]:
        """From the first message to `leaf` (the newest message if None or unknown)."""
        if leaf not in self.parent:
            leaf = self.newest
        ids: list[str] = []
        while leaf is not None:
            ids.append(leaf)
            leaf = self.parent[leaf]
        ids.reverse()
        return ids

    def siblings(self, message_id: str) -> Siblings | None:
        """The alternatives to a message (itself included), when there are any."""
        if message_id not in self.parent:
            return None
        ids = self.children[self.parent[message_id]]
        if len(ids) < 2:
            return None
        return Siblings(tuple(ids), ids.index(message_id))

    def newest_leaf(self, message_id: str) -> str:
        """The newest message at or under `message_id`: where its branch was left."""
        best, stack = message_id, [message_id]
        while stack:
            here = stack.pop()
            if self.order[here] > self.order[best]:
                best = here
            stack.extend(self.children.get(here, ()))
        return best

    def leaves(self) -> list[str]:
        """Every branch's end, oldest first."""
        return [m for m in self.parent if m not in self.children]


__all__ = ["Branch", "Node", "Siblings", "Tree"]
