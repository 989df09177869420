"""A chat's messages as a tree of branches, and the branch shown: the tree itself (ids
only: cheap), reading the messages along the branch shown (its newest page, what follows
a message, one message, the other branches' messages) and choosing which branch shows.

Separate from `store.py` (whose `ChatStore` delegates here) because the tree and the
branch shown are their own bookkeeping (`chats.leaf_id`, `chats.branched`), which both
reading and writing messages consult; the rows themselves are read by `message_rows.py`.
A chat that never branched is read as one line, by position, without the tree.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

from desktop_app.core.errors import ContextDeskError, ErrorKind
from desktop_app.core.messages import Message
from desktop_app.storage.chat_info import ChatInfo
from desktop_app.storage.chat_rows import chat, writing
from desktop_app.storage.message_rows import read_from

if TYPE_CHECKING:
    from desktop_app.core.branches import Tree


def tree(db: sqlite3.Connection, chat_id: str) -> Tree:
    """Every message's place among the chat's branches (ids only: cheap)."""
    from desktop_app.core.branches import Node, Tree  # (not on the way to the first paint)

    return Tree(
        Node(r[0], r[1], bool(r[2]))
        for r in db.execute(
            "SELECT id, parent_id, deleted FROM messages WHERE chat_id = ? ORDER BY position",
            (chat_id,),
        )
    )


def recent_messages(
    db: sqlite3.Connection,
    chat_id: str,
    limit: int | None,
    counts: dict[str, tuple[int, ...]] | None = None,
) -> list[Message]:
    """The newest `limit` messages of the branch shown, oldest first (all of them for
    None): a long chat shows its last page without reading the whole history first.
    Given `counts`, their kept per-block token counts go there (`read_from`)."""
    info = chat(db, chat_id)
    if not info.branched and not info.leaf_id:  # one line, to its newest message
        return _read_line(db, chat_id, limit, counts)
    path = tree(db, chat_id).path(info.leaf_id)
    return read(db, chat_id, path if limit is None else path[len(path) - limit :], counts)


def _read_line(
    db: sqlite3.Connection,
    chat_id: str,
    limit: int | None,
    counts: dict[str, tuple[int, ...]] | None = None,
) -> list[Message]:
    """`recent_messages` of a chat that never branched: by position, no tree."""
    since = -1
    if limit is not None:
        row = db.execute(
            "SELECT position FROM messages WHERE chat_id = ? AND NOT deleted ORDER BY position DESC LIMIT 1 OFFSET ?",
            (chat_id, max(0, limit - 1)),
        ).fetchone()
        since = row["position"] if row is not None else -1
    return read_from(db, chat_id, since, counts=counts)


def messages_after(db: sqlite3.Connection, chat_id: str, message_id: str | None) -> list[Message]:
    """The branch shown after one of its messages (all of it for None)."""
    path = tree(db, chat_id).path(chat(db, chat_id).leaf_id)
    start = path.index(message_id) + 1 if message_id in path else 0
    return read(db, chat_id, path[start:])


def message(db: sqlite3.Connection, chat_id: str, message_id: str) -> Message:
    found = read(db, chat_id, [message_id])
    if not found:
        raise ContextDeskError(
            "Message not found", "It is not in this chat.", kind=ErrorKind.NOT_FOUND
        )
    return found[0]


def read(
    db: sqlite3.Connection,
    chat_id: str,
    ids: Sequence[str],
    counts: dict[str, tuple[int, ...]] | None = None,
) -> list[Message]:
    """These messages (ids of one branch, oldest first), with their blocks (and their
    kept counts into `counts`, if given)."""
    if not ids:
        return []
    first = db.execute(
        "SELECT position FROM messages WHERE id = ? AND chat_id = ?", (ids[0], chat_id)
    ).fetchone()
    if first is None:
        return []
    # the other branches' messages after `first` are read and dropped
    return read_from(db, chat_id, first["position"], set(ids), counts)


def show_end(db: sqlite3.Connection, chat_id: str, leaf_id: str | None) -> None:
    """End the branch shown at this message (None: the newest), as it was before."""
    with writing(db):
        db.execute("UPDATE chats SET leaf_id = ? WHERE id = ?", (leaf_id, chat_id))


def other_branches(db: sqlite3.Connection, chat_id: str) -> list[tuple[str | None, Message]]:
    """The messages of every branch but the one shown, oldest first, each with the
    message it follows (None: a first message) — what an export adds to the path."""
    info = chat(db, chat_id)
    if not info.branched:
        return []
    found = tree(db, chat_id)
    if not found.branched:
        return []
    shown = set(found.path(info.leaf_id))
    off = [m for m in found.parent if m not in shown]  # in the order they were stored
    return [(found.parent[m.id], m) for m in read(db, chat_id, off)]


def off_branch(db: sqlite3.Connection, info: ChatInfo) -> frozenset[str]:
    """The chat's messages on no branch shown (what a summary may cover, but not send)."""
    if not info.branched:
        return frozenset()
    found = tree(db, info.id)
    if not found.branched:
        return frozenset()
    return frozenset(found.parent.keys() - set(found.path(info.leaf_id)))


def show_branch(
    db: sqlite3.Connection, chat_id: str, message_id: str, *, exactly: bool = False
) -> None:
    """Show the branch through `message_id`, as it was left (its newest message);
    `exactly`: end the branch shown at `message_id` (an answer to it comes next)."""
    found = tree(db, chat_id)
    if message_id not in found:
        raise ContextDeskError(
            "Message not found", "It is not in this chat.", kind=ErrorKind.NOT_FOUND
        )
    leaf = message_id if exactly else found.newest_leaf(message_id)
    with writing(db):
        db.execute(
            "UPDATE chats SET leaf_id = ? WHERE id = ?",
            (None if leaf == found.newest else leaf, chat_id),
        )
