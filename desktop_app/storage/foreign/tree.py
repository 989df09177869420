"""A `ForeignChat` stored as a chat: its tree made ours, in one transaction.

Nodes that hold nothing to keep (a root, a hidden system or tool message) are passed
over: their children follow the nearest kept ancestor. A message that only continues its
parent's turn (the same speaker, the parent's one child — a reply cut by a tool call) is
joined to it. The branch the source showed is repaired for the API and shown; every other
node is a version beside its sibling, after its parent. The source's id is kept with the
chat (`imported_sources`), so importing the same export again adds nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from desktop_app.context.chat_settings import ContextSettings
from desktop_app.context.facts import FactSource, offered
from desktop_app.context.state import ContextState
from desktop_app.core.blocks import Block
from desktop_app.core.messages import Message
from desktop_app.core.repair import repair, sanitize
from desktop_app.storage.chat_info import ChatInfo
from desktop_app.storage.foreign import ForeignChat, Hidden
from desktop_app.storage.store import ChatStore


@dataclass(frozen=True, slots=True)
class StoredForeign:
    chat: ChatInfo
    messages: int  # stored, every branch's
    versions: int  # messages that are another version of one (branches beside the shown)
    hidden: int  # what the source did not show, kept with the chat unshown
    report: tuple[str, ...]  # what was left out or repaired, by JSON path


def already_imported(store: ChatStore, chat: ForeignChat) -> bool:
    found = store.db.execute(
        "SELECT 1 FROM imported_sources s JOIN chats c ON c.id = s.chat_id WHERE s.source = ?",
        (chat.key,),
    ).fetchone()
    return found is not None


def store_foreign(
    store: ChatStore, chat: ForeignChat, model: str, settings: ContextSettings
) -> StoredForeign | None:
    """Store `chat` as a new chat on `model`; None when it was imported before, or holds
    no message to keep."""
    if already_imported(store, chat):
        return None
    kept, parent_of, order, unshown = _kept_tree(chat)
    if not kept:
        return None
    path = _shown_path(chat, kept, parent_of)
    fixed = repair([kept[n] for n in path])
    stored = {m.id for m in fixed.messages}
    on_path = set(path)
    branches: list[tuple[str | None, Message]] = []
    for node in order:
        if node in on_path:
            continue
        parent = parent_of.get(node)
        while parent is not None and kept[parent].id not in stored:
            parent = parent_of.get(parent)  # (merged away by the repair: its ancestor)
        branches.append((kept[parent].id if parent else None, kept[node]))
        stored.add(kept[node].id)
    hidden = []
    for follows, record in unshown:  # each after the message it followed, as stored
        while follows is not None and kept[follows].id not in stored:
            follows = parent_of.get(follows)
        hidden.append(replace(record, after=kept[follows].id if follows else None))
    title = sanitize(chat.title) or _title(fixed.messages)
    where = {kept[n].id: float(i) for i, n in enumerate(order)}
    info = store.create_full(
        title,
        model,
        "",
        settings,
        fixed.messages,
        ContextState(facts=tuple(offered(chat.suggested, FactSource.IMPORT))),
        branches,
        where,
        source=chat.key,
        hidden=hidden,
    )
    repairs = tuple(f"{chat.source} {chat.source_id}: {r}" for r in fixed.repairs)
    return StoredForeign(
        info,
        len(fixed.messages) + len(branches),
        len(branches),
        len(hidden),
        (*chat.notes, *map(str, repairs)),
    )


def _kept_tree(
    chat: ForeignChat,
) -> tuple[dict[str, Message], dict[str, str | None], list[str], list[tuple[str | None, Hidden]]]:
    """The nodes with a message (joined where one only continues its parent's turn), each
    one's kept parent, and their order, parents first; and what the source did not show,
    each with the kept node it comes after (None: before the first)."""
    by_id = {node.id: node for node in chat.nodes}
    kept: dict[str, Message] = {}
    parent_of: dict[str, str | None] = {}
    # A node joined to a kept one, or passed over → (the kept one that stands for it, how
    # many pieces of its turn had been joined at that point).
    alias: dict[str, tuple[str, int]] = {}
    # A kept message's blocks before each piece joined to it (its turn, piece by piece).
    pieces: dict[str, list[tuple[Block, ...]]] = {}
    children: dict[str | None, list[str]] = {}
    order: list[str] = []
    unshown: list[tuple[str | None, Hidden]] = []

    def keep(node_id: str, message: Message, parent: str | None) -> None:
        kept[node_id] = message
        parent_of[node_id] = parent
        children.setdefault(parent, []).append(node_id)
        order.append(node_id)

    for node in chat.nodes:
        found = node.parent
        while found is not None and found not in kept and found not in alias:
            found = by_id[found].parent if found in by_id else None
        up, at = (None, 0) if found is None else alias.get(found, (found, 0))
        if node.message is None:
            if up is not None:
                alias[node.id] = (up, at)
            unshown += [(up, h) for h in node.hidden]
            continue
        if up is not None and kept[up].role == node.message.role:
            joined = pieces.setdefault(up, [])
            if at == len(joined) and not children.get(up):  # the turn goes on: one message
                joined.append(kept[up].blocks)
                kept[up] = kept[up].with_blocks(kept[up].blocks + node.message.blocks)
                alias[node.id] = (up, len(joined))
                unshown += [(up, h) for h in node.hidden]
                continue
            if at < len(joined):
                # Another way the turn went on from an earlier piece (a regeneration
                # after a tool call): a version of the joined message, from that point.
                blocks = joined[at] + node.message.blocks
                keep(node.id, node.message.with_blocks(blocks), parent_of[up])
                unshown += [(node.id, h) for h in node.hidden]
                continue
        keep(node.id, node.message, up)
        unshown += [(node.id, h) for h in node.hidden]
    return kept, parent_of, order, unshown


def _shown_path(
    chat: ForeignChat, kept: dict[str, Message], parent_of: dict[str, str | None]
) -> list[str]:
    """The branch to show: the one ending at the node the source showed (its kept
    ancestor, if it holds nothing itself), else the newest message's."""
    by_id = {node.id: node for node in chat.nodes}
    end = chat.shown
    while end is not None and end not in kept:
        end = by_id[end].parent if end in by_id else None
    if end is None:
        end = max(kept, key=lambda n: kept[n].created_at)
    path = []
    node: str | None = end
    while node is not None:
        path.append(node)
        node = parent_of.get(node)
    return path[::-1]


def _title(messages: Sequence[Message]) -> str:
    first = next((m.text for m in messages if m.role == "user" and m.text.strip()), "")
    return " ".join(first.split())[:60] or "Imported chat"
