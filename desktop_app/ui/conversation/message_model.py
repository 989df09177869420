"""The message list's model: one `QAbstractListModel` for the whole conversation.

Built for long chats (qTox#266, SillyTavern#5703): the model shows the newest
`PAGE` messages first and loads older ones `OLDER_PAGE` at a time when the view scrolls up
(`has_older`/`load_older`, rows inserted at the top). A streaming reply changes one row
per flush (`dataChanged` for that row only, never a reset), and a new plan — the context
state of every block — changes the block roles without touching the text.

Roles carry data, never widgets: the delegate lays out and caches by
(id, revision, width); `RevisionRole` changes whenever a row's content does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractListModel, QByteArray, QModelIndex, QPersistentModelIndex, Qt

from desktop_app.context.plan import BlockState
from desktop_app.core.blocks import TextBlock, ToolUseBlock, block_type
from desktop_app.core.branches import Siblings
from desktop_app.core.messages import Message, MessageStatus
from desktop_app.core.transcript import Continued, Snapshots, Transcript

PAGE = 200  # the newest messages shown when a chat's whole history is set
# Older messages load this many at a time as the reader scrolls up: each new row is laid
# out before the frame that shows it (≈0.8 ms each), so a page must fit in a frame.
OLDER_PAGE = 25

Index = QModelIndex | QPersistentModelIndex


class Role(IntEnum):
    MESSAGE = Qt.ItemDataRole.UserRole + 1  # the Message itself
    ROLE = Qt.ItemDataRole.UserRole + 2  # "user" | "assistant"
    STATUS = Qt.ItemDataRole.UserRole + 3  # MessageStatus value
    BLOCKS = Qt.ItemDataRole.UserRole + 4  # tuple[BlockChip, ...]
    REVISION = Qt.ItemDataRole.UserRole + 5  # changes whenever the row's content does
    DIVIDER = Qt.ItemDataRole.UserRole + 6  # "Above this line: …" or "" (see `divider_of`)
    SIBLINGS = Qt.ItemDataRole.UserRole + 7  # `Siblings` (its other versions: ‹1/2›) or None
    TURN = Qt.ItemDataRole.UserRole + 8  # `TurnPlace`: does Claude's turn go on here, below
    CALLS = Qt.ItemDataRole.UserRole + 9  # tool results: their calls, by id (`calls_before`)


@dataclass(frozen=True, slots=True)
class BlockChip:
    """What the delegate shows on one block: its type, tokens and context state — the
    state as the plan's value (colours and marks are chosen by it), its words beside."""

    kind: str
    tokens: int
    exact: bool
    state: BlockState | None  # None: not counted yet, or a reply still streaming
    sent: int = 0  # what it costs in the next request (0 unless in context or trimmed)
    words: str = ""  # the state in full: "summarized in #2", "trimmed 8,900 → 1,200 tokens"
    streaming: bool = False

    @property
    def label(self) -> str:
        """The state as the chip says it ("" until counted)."""
        if self.streaming:
            return "streaming"
        return self.words or (self.state.value if self.state is not None else "")

    @property
    def tone(self) -> str:
        """Which of the theme's state colours it is drawn in."""
        return "streaming" if self.streaming else (self.state or "")


# How the model learns each block's chip: from the current plan (the GUI passes
# `plan.block_status`), or nothing before the first plan exists.
ChipSource = Callable[[Message, int], BlockChip]


RECENT = 64  # the newest rows, looked through before every row's place is indexed


class _Places:
    """Each message's place in the model's list, by id — without an index of every id
    (6.8 MB at 100,000 messages) until one is needed: the rows that change (a reply
    streaming, a tool's result) are the newest, found from the end; an older one asked
    for indexes them all, kept until the list changes other than at its end."""

    def __init__(self, messages: list[Message]) -> None:
        self._messages = messages  # (the model's own list: read, never changed here)
        self._index: dict[str, int] | None = None

    def get(self, message_id: str) -> int | None:
        """Its place, wherever it is."""
        if self._index is None:
            found = self.near_the_end(message_id)
            if found is not None:
                return found
            self._index = {m.id: i for i, m in enumerate(self._messages)}
        return self._index.get(message_id)

    def near_the_end(self, message_id: str) -> int | None:
        """Its place among the newest `RECENT` (anywhere, once all are indexed): where a
        message the turn adds or changes is, if it is there at all."""
        if self._index is not None:
            return self._index.get(message_id)
        messages = self._messages
        for i in range(len(messages) - 1, max(-1, len(messages) - 1 - RECENT), -1):
            if messages[i].id == message_id:
                return i
        return None

    def appended(self) -> None:
        """The list has a new last message."""
        if self._index is not None:
            self._index[self._messages[-1].id] = len(self._messages) - 1


class MessageListModel(QAbstractListModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._all: list[Message] = []  # the whole chat, oldest first
        self._first_shown = 0  # rows show self._all[self._first_shown:]
        self._row_of = _Places(self._all)  # message id → index in self._all
        self._revisions: dict[str, int] = {}
        self._chips: ChipSource | None = None
        # Each message's chips under the current plan, asked once: every row's layout
        # asks its own and its neighbour's (where the context starts again).
        self._chip_cache: dict[str, tuple[BlockChip, ...]] = {}
        self._dividers: dict[str, str] = {}  # message id → divider_of's words, this plan
        self._turns: dict[str, TurnPlace] = {}  # message id → its place, until a neighbour changes
        self._siblings: dict[str, Siblings] = {}  # the messages shown that have other versions
        self.history_complete = True  # False while only the newest page has been read
        self._snapshots = Snapshots()  # the transcripts of `_all` handed out (`transcript`)
        self._readers = self._make_readers()

    # -- Qt's side ------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 — Qt's signature
        return 0 if parent.isValid() else len(self._all) - self._first_shown

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        row = index.row()
        if not index.isValid() or not 0 <= row < len(self._all) - self._first_shown:
            return None
        read = self._readers.get(role)  # (by int: comparing IntEnum members is slow)
        return read(self._first_shown + row) if read is not None else None

    def _make_readers(self) -> dict[int, Callable[[int], Any]]:
        """Each role's value for a message, by its position in the whole chat."""
        every = self._all_messages
        return {
            int(Qt.ItemDataRole.DisplayRole): lambda p: every()[p].text,
            int(Role.MESSAGE): lambda p: every()[p],
            int(Role.ROLE): lambda p: every()[p].role,
            int(Role.STATUS): lambda p: every()[p].status.value,
            int(Role.BLOCKS): lambda p: self._block_chips(every()[p]),
            int(Role.REVISION): lambda p: self._revisions.get(every()[p].id, 0),
            int(Role.DIVIDER): self._divider_at,
            int(Role.SIBLINGS): lambda p: self._siblings.get(every()[p].id),
            int(Role.TURN): self._turn_at,
            int(Role.CALLS): lambda p: calls_before(every()[p], every()[p - 1] if p else None),
        }

    def layout_inputs(self, row: int) -> tuple[Message, int, str, TurnPlace]:
        """What a row's layout depends on — (message, revision, divider, turn place) — in
        one direct call: every layout pass asks every row, and a call through Qt's data()
        costs ten times more."""
        return self._layout_inputs_at(self._first_shown + row)

    def _layout_inputs_at(self, position: int) -> tuple[Message, int, str, TurnPlace]:
        message = self._all[position]
        return (
            message,
            self._revisions.get(message.id, 0),
            self._divider_at(position),
            self._turn_at(position),
        )

    def _all_messages(self) -> list[Message]:
        return self._all

    def _turn_at(self, position: int) -> TurnPlace:
        message = self._all[position]
        known = self._turns.get(message.id)
        if known is not None:
            return known
        before = self._all[position - 1] if position > 0 else None
        after = self._all[position + 1] if position + 1 < len(self._all) else None
        place = self._turns[message.id] = _PLACES[
            continues_turn(message, before), after is not None and continues_turn(after, message)
        ]
        return place

    def roleNames(self) -> dict[int, QByteArray]:
        names = {
            Qt.ItemDataRole.DisplayRole: b"display",
            Role.MESSAGE: b"message",
            Role.ROLE: b"role",
            Role.STATUS: b"status",
            Role.BLOCKS: b"blocks",
            Role.REVISION: b"revision",
        }
        return {int(role): QByteArray(name) for role, name in names.items()}

    # Not Qt's canFetchMore/fetchMore: Qt calls those whenever the view sits at its
    # bottom (it expects rows to arrive below), which is exactly where a chat opens — it
    # would load the whole chat. Older messages arrive above, when the view asks.

    def has_older(self) -> bool:
        return self._first_shown > 0

    def load_older(self) -> None:
        """Show the page of messages before the oldest one shown (the user scrolled up)."""
        if self._first_shown == 0:
            return
        count = min(OLDER_PAGE, self._first_shown)
        self.beginInsertRows(QModelIndex(), 0, count - 1)
        self._first_shown -= count
        self.endInsertRows()

    # -- our side -----------------------------------------------------------------------

    def set_messages(self, messages: Sequence[Message], *, complete: bool = True) -> None:
        """A chat was opened: show its newest page. With `complete=False` the messages
        are only the newest ones; `attach_history` brings the rest when it is read."""
        self.beginResetModel()
        self._all = list(messages)
        self._snapshots = Snapshots()
        self._turns.clear()
        self._row_of = _Places(self._all)
        self._revisions = {}
        self._chip_cache.clear()
        self._dividers.clear()
        self._siblings = {}  # the session says which, once it knows
        self._first_shown = max(0, len(self._all) - PAGE)
        self.history_complete = complete
        self.endResetModel()

    def attach_history(self, history: Sequence[Message]) -> None:
        """The whole chat, read off the GUI thread: the rows on screen stay as they are;
        what is older becomes loadable. Messages added meanwhile are kept."""
        known = {m.id for m in history}
        shown = self.rowCount()
        merged = [*history, *(m for m in self._all if m.id not in known)]
        self._dividers.clear()  # the rows before some changed
        self._turns.clear()
        self._all = merged
        self._snapshots = Snapshots(history)
        self._row_of = _Places(merged)
        self._first_shown = len(merged) - shown
        self.history_complete = True

    def append(self, message: Message) -> None:
        if self._row_of.near_the_end(message.id) is not None:  # (a new one: not looked for
            self.replace_message(message)  # among 100,000 older rows)
            return
        row = self.rowCount()
        self.beginInsertRows(QModelIndex(), row, row)
        if self._all:  # the row above may now go on into this one
            self._turns.pop(self._all[-1].id, None)
        self._all.append(message)
        self._row_of.appended()
        self.endInsertRows()

    def replace_message(self, message: Message) -> None:
        """A message the turn changed (streaming flush, finished, repaired) or added: one
        row's dataChanged, or a new row."""
        position = self._row_of.near_the_end(message.id)
        if position is None:
            self.append(message)
            return
        self._all[position] = message
        self._snapshots.changed_from(position)
        for near in self._all[max(0, position - 1) : position + 2]:  # its place, its neighbours'
            self._turns.pop(near.id, None)
        self._chip_cache.pop(message.id, None)
        self._dividers.pop(message.id, None)
        if position + 1 < len(self._all):  # the next row's divider looks at this one
            self._dividers.pop(self._all[position + 1].id, None)
        self._revisions[message.id] = self._revisions.get(message.id, 0) + 1
        row = position - self._first_shown
        if row >= 0:
            index = self.index(row)
            self.dataChanged.emit(index, index)

    def remove_message(self, message_id: str) -> None:
        """Take out a row that never became a message (a reply that failed before its
        first word)."""
        position = self._row_of.get(message_id)
        if position is None:
            return
        row = position - self._first_shown
        if row >= 0:
            self.beginRemoveRows(QModelIndex(), row, row)
        del self._all[position]
        self._snapshots.changed_from(position)
        self._turns.clear()
        self._row_of = _Places(self._all)
        if row >= 0:
            self.endRemoveRows()
        else:
            self._first_shown -= 1

    def cut_after(self, message_id: str | None) -> None:
        """Take out every row after a message (all of them for None): the branch shown
        goes another way from there."""
        position = self._row_of.get(message_id) if message_id is not None else -1
        if position is None:
            return
        keep = position + 1
        if keep >= len(self._all):
            return
        first_row = max(0, keep - self._first_shown)
        self.beginRemoveRows(QModelIndex(), first_row, self.rowCount() - 1)
        del self._all[keep:]
        self._snapshots.changed_from(keep)
        self._turns.clear()
        self._first_shown = min(self._first_shown, len(self._all))
        self._row_of = _Places(self._all)
        self._dividers.clear()
        self.endRemoveRows()

    def branch_points(self) -> dict[str, Siblings]:
        return self._siblings

    def set_branch_points(self, points: dict[str, Siblings]) -> None:
        """Which messages shown have other versions (their headers show ‹1/2›)."""
        changed = points.keys() ^ self._siblings.keys() | {
            m for m in points if points[m] != self._siblings.get(m)
        }
        self._siblings = dict(points)
        for message_id in changed:
            row = self.row_of(message_id)
            if row is not None:
                self.dataChanged.emit(self.index(row), self.index(row), [Role.SIBLINGS])

    def append_text(self, message_id: str, text: str) -> None:
        """Add streamed text to a reply's last text block (the caller batches deltas)."""
        position = self._row_of.near_the_end(message_id)
        if position is None:
            self.append(
                Message(
                    "assistant", (TextBlock(text),), id=message_id, status=MessageStatus.STREAMING
                )
            )
            return
        message = self._all[position]
        blocks = message.blocks
        if blocks and isinstance(blocks[-1], TextBlock):
            blocks = (*blocks[:-1], TextBlock(blocks[-1].text + text))
        else:
            blocks = (*blocks, TextBlock(text))
        self.replace_message(replace(message, blocks=blocks))

    def set_chip_source(self, source: ChipSource | None) -> None:
        """A new plan: every block's state may have changed; the texts have not."""
        self._chips = source
        self._chip_cache.clear()
        self._dividers.clear()
        if self.rowCount():
            self.dataChanged.emit(self.index(0), self.index(self.rowCount() - 1), [Role.BLOCKS])

    def all_messages(self) -> Sequence[Message]:
        """The whole chat, oldest first, loaded or not (read it, do not change it)."""
        return self._all

    def transcript(self) -> Transcript | Continued:
        """The whole chat, never changed (`Snapshots`: the last copy of the rows and what
        came after it): its lineage names the one this gave before (up to the first
        message changed since), so a plan after a turn finds at once how far the new one
        goes on from the last."""
        return self._snapshots.of(self._all)

    def message_at(self, row: int) -> Message:
        return self._all[self._first_shown + row]

    def row_of(self, message_id: str) -> int | None:
        """The row showing a message, or None if it is not loaded (older than shown)."""
        position = self._row_of.get(message_id)
        return (
            None
            if position is None or position < self._first_shown
            else position - self._first_shown
        )

    def divider_of(self, row: int) -> str:
        """Words for a rule above a row the next request holds when the row before it is
        not held — where the context starts again — or "". Known once per plan: every
        layout pass asks every row."""
        return self._divider_at(self._first_shown + row)

    def _divider_at(self, position: int) -> str:
        message = self._all[position]
        words = self._dividers.get(message.id)
        if words is None:
            words = ""
            if position > 0 and not out_of_request(self._block_chips(message)):
                before = self._all[position - 1]
                state = out_of_request(self._block_chips(before))
                words = f"Above this line: {state}" if state else ""
            self._dividers[message.id] = words
        return words

    def _block_chips(self, message: Message) -> tuple[BlockChip, ...]:
        if self._chips is None:
            return tuple(BlockChip(block_type(b), 0, False, None) for b in message.blocks)
        chips = self._chip_cache.get(message.id)
        if chips is None:
            chips = tuple(self._chips(message, j) for j in range(len(message.blocks)))
            self._chip_cache[message.id] = chips
        return chips


@dataclass(frozen=True, slots=True)
class TurnPlace:
    """Where a row sits in Claude's turn: it goes on from the row above (`continues`:
    no header), and the row below goes on from it (`continued`: no gap below)."""

    continues: bool = False
    continued: bool = False


# The four places, made once: every layout pass asks every row's
_PLACES = {(a, b): TurnPlace(a, b) for a in (False, True) for b in (False, True)}


def continues_turn(message: Message, before: Message | None) -> bool:
    """Is this row more of Claude's turn — the results of the calls just above, or
    Claude going on after them? Then it reads as one step with them (no header)."""
    if before is None:
        return False
    if message.is_tool_results:
        return before.role == "assistant"
    return message.role == "assistant" and before.is_tool_results


def calls_before(message: Message, before: Message | None) -> dict[str, ToolUseBlock]:
    """The calls a tool-results message answers, by id (named in each result's line)."""
    if before is None or not message.is_tool_results:
        return {}
    return {b.id: b for b in before.blocks if isinstance(b, ToolUseBlock)}


def out_of_request(chips: tuple[BlockChip, ...]) -> str:
    """The state of a message none of whose blocks the next request holds as written
    ("summarized in #2", "excluded", …), or "" when it is sent (or not planned yet; a
    reply streaming in is the newest of the context)."""
    if not chips or any(c.state is None for c in chips):
        return ""
    if any(c.state in (BlockState.IN_CONTEXT, BlockState.TRIMMED) for c in chips):
        return ""
    held_back = (BlockState.SUMMARIZED, BlockState.EXCLUDED, BlockState.NOT_SENT)
    return next((c.label for c in chips if c.state in held_back), "")


def context_marker(chips: tuple[BlockChip, ...]) -> tuple[BlockState | None, str]:
    """One quiet mark for a whole message: (the state its colour comes from, the text),
    e.g. (IN_CONTEXT, "in context · ≈72"), (SUMMARIZED, "summarized in #2"), or, when
    its blocks differ, the state most of its tokens are in, said as partly."""
    if not chips or any(c.streaming for c in chips):
        return None, ""  # (a reply being written says so beside its name, once)
    if any(c.state is None for c in chips):
        return None, "counting…"
    by_state: dict[BlockState, int] = {}
    for chip in chips:
        assert chip.state is not None  # (checked above)
        by_state[chip.state] = by_state.get(chip.state, 0) + max(chip.tokens, 1)
    if len(by_state) > 1:  # an earlier turn's thinking is always cleared: not "partly"
        by_state.pop(BlockState.CLEARED, None)
    main = max(by_state, key=lambda state: by_state[state])
    said = next(c.label for c in chips if c.state is main)
    sent = sum(c.sent for c in chips)
    exact = all(c.exact for c in chips)
    tokens = f" · {'' if exact else '≈'}{sent:,}" if sent else ""
    label = said if len(by_state) == 1 else f"partly {main.value}"
    if main is BlockState.TRIMMED:  # "trimmed 8,900 → 1,200 tokens" says its own numbers
        return main, label
    return main, f"{label}{tokens}"
