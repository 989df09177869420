"""The transcript: everything that was said, append-only.

Nothing is ever overwritten. An edit adds a new revision of a message and keeps every
earlier one; a deletion hides a message and can be undone. What the model is sent is a
*view* of this (see `context`), so truncation and compaction never touch it either.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, replace

from desktop_app.core.blocks import Block
from desktop_app.core.messages import Message


class TranscriptError(ValueError):
    """An operation that names a message the transcript does not have, or re-adds one."""


@dataclass(frozen=True, slots=True)
class Deletion:
    message_id: str
    at: float


class Transcript:
    """An ordered, append-only log of messages with explicit edits and deletions."""

    def __init__(self, messages: tuple[Message, ...] | list[Message] = ()) -> None:
        self._order: list[str] = []
        self._revisions: dict[str, list[Message]] = {}
        self._deleted: dict[str, Deletion] = {}
        for message in messages:
            self.append(message)

    # -- reading ------------------------------------------------------------------------

    def messages(self) -> tuple[Message, ...]:
        """The current revision of every message that is not deleted, in order."""
        return tuple(self._revisions[i][-1] for i in self._order if i not in self._deleted)

    def get(self, message_id: str) -> Message:
        """The current revision of a message, deleted or not."""
        return self._history(message_id)[-1]

    def revisions(self, message_id: str) -> tuple[Message, ...]:
        """Every revision of a message, the original first."""
        return tuple(self._history(message_id))

    def is_deleted(self, message_id: str) -> bool:
        self._history(message_id)
        return message_id in self._deleted

    def __len__(self) -> int:
        return len(self._order) - len(self._deleted)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages())

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._revisions

    # -- changing -----------------------------------------------------------------------

    def append(self, message: Message) -> Message:
        if message.id in self._revisions:
            raise TranscriptError(f"message {message.id} is already in the transcript")
        self._order.append(message.id)
        self._revisions[message.id] = [message]
        return message

    def edit(self, message_id: str, blocks: tuple[Block, ...]) -> Message:
        """Record a new revision with `blocks`; the previous revisions stay readable."""
        history = self._history(message_id)
        current = history[-1]
        revised = replace(current, blocks=blocks, revision=current.revision + 1)
        history.append(revised)
        return revised

    def replace_current(self, message: Message) -> Message:
        """Update the current revision in place: only for a message still being written
        (streaming → complete/interrupted), where the partial state was never final."""
        history = self._history(message.id)
        history[-1] = replace(message, revision=history[-1].revision)
        return history[-1]

    def delete(self, message_id: str) -> None:
        self._history(message_id)
        self._deleted.setdefault(message_id, Deletion(message_id, time.time()))

    def restore(self, message_id: str) -> None:
        self._history(message_id)
        self._deleted.pop(message_id, None)

    def _history(self, message_id: str) -> list[Message]:
        try:
            return self._revisions[message_id]
        except KeyError:
            raise TranscriptError(f"no message {message_id} in this transcript") from None
