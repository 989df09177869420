"""A chat's branches (`chat.branches`): a chat is a tree — an edited message or a
regenerated reply is a version beside the old one — and one branch of it is shown;
the context, the meter and the next request follow it (core/branches.py)."""

from __future__ import annotations

from collections.abc import Sequence

from desktop_app.chats.changes import Changes, Rows
from desktop_app.chats.chat_core import ChatCore
from desktop_app.core.blocks import Block, ImageBlock, TextBlock
from desktop_app.core.branches import Branch, Siblings
from desktop_app.core.errors import ContextDeskError, ErrorKind
from desktop_app.core.messages import Message


def edited(message: Message, new: str | Sequence[Block]) -> Message:
    """`message` as the user rewrote it — its images kept, then what they wrote (text,
    or blocks: attachments and text) — to send as its alternative:
    `turns.start(edited, approver, beside=message.id)` makes the new branch."""
    blocks = [TextBlock(new.strip())] if isinstance(new, str) else list(new)
    blocks = [b for b in blocks if not (isinstance(b, TextBlock) and not b.text.strip())]
    if not blocks:
        raise ContextDeskError(
            "Nothing to send", "The edited message is empty.", kind=ErrorKind.USAGE
        )
    images = tuple(b for b in message.blocks if isinstance(b, ImageBlock))
    return Message("user", (*images, *blocks))


class Branches:
    edited = staticmethod(edited)

    def __init__(self, core: ChatCore) -> None:
        self._core = core

    def message(self, message_id: str) -> Message:
        """One message of the chat, on whichever branch."""
        return self._core.host.store.message(self._core.id, message_id)

    def messages_after(self, message_id: str | None) -> list[Message]:
        """The branch shown after one of its messages (all of it for None)."""
        return self._core.host.store.messages_after(self._core.id, message_id)

    def prompt_of(self, reply: Message, messages: Sequence[Message]) -> Message:
        """The user's message a reply answers (tool results are part of Claude's turn)."""
        ids = [m.id for m in messages]
        if reply.id not in ids:
            raise ContextDeskError(
                "Message not found", "It is not in this chat.", kind=ErrorKind.NOT_FOUND
            )
        for message in reversed(messages[: ids.index(reply.id)]):
            if message.role == "user" and not message.is_tool_results:
                return message
        raise ContextDeskError(
            "Nothing to regenerate",
            "No message of yours comes before this reply.",
            kind=ErrorKind.NOTHING_TO_RETRY,
        )

    def points(self) -> dict[str, Siblings]:
        """The messages of the branch shown that have alternatives, with them."""
        core = self._core
        if not core.info.branched:  # (kept current: a turn, a switch refresh it)
            return {}
        tree = core.host.store.tree(core.id)
        found = {}
        if tree.branched:
            for message_id in tree.path(core.info.leaf_id):
                siblings = tree.siblings(message_id)
                if siblings is not None:
                    found[message_id] = siblings
        return found

    def all(self) -> list[Branch]:
        """Every branch of the chat, oldest first: where it ends and where it leaves the
        others (the command line numbers them)."""
        core = self._core
        tree = core.host.store.tree(core.id)
        shown = tree.path(core.info.leaf_id)[-1:]
        branches = []
        for leaf in tree.leaves():
            path = tree.path(leaf)
            # where it differs: its last message that has alternatives
            differs = max(
                (n for n, m in enumerate(path, 1) if tree.siblings(m) is not None), default=1
            )
            branches.append(Branch(leaf, len(path), differs, path[differs - 1], [leaf] == shown))
        return branches

    def show(self, message_id: str, *, exactly: bool = False) -> Changes:
        """Show the branch through `message_id` (as it was left, or ending there).
        The context, the meter and the next request follow it; the rows shown change
        from the message before it on (`Changes.rows`)."""
        self.switch(message_id, exactly=exactly)
        core = self._core
        path = core.host.store.tree(core.id).path(core.info.leaf_id)
        at = path.index(message_id) if message_id in path else 0
        before = path[at - 1] if at else None
        rows = Rows(before, tuple(self.messages_after(before)))
        return Changes(info=core.info, state=core.state, replan=True, rows=rows)

    def switch(self, message_id: str, *, exactly: bool = False) -> None:
        """`show` without reading the rows it shows (a turn reads its history itself)."""
        core = self._core
        core.check_not_answering("switch branches")
        core.check_no_turn_elsewhere()
        core.host.store.show_branch(core.id, message_id, exactly=exactly)
        core.refresh_info()
        core.forget_state()  # which summaries stand for this branch (`off_branch`)

    def show_holding(self, message_id: str) -> bool:
        """Show the branch a message is on, when it is not the one shown (a search hit
        in another version); False when nothing had to change."""
        core = self._core
        if not core.info.branched:
            return False
        tree = core.host.store.tree(core.id)
        if message_id in tree.path(core.info.leaf_id):
            return False
        self.switch(message_id)
        return True  # (the window reads the branch again: it may not have all its rows)
