"""What every part of a chat shares (`ChatCore`): its row, its context state, its
planner once built, whether a turn runs — and the one way its context state changes.

A chat's parts (`planning`, `memory`, `costs`, `branches`, `turns`, `setup`) each build
on this core, never on `Chat` or on each other's insides; `Chat` only holds them.

Context edits (pin, exclude, compact…) made while a turn runs are queued and applied
when it ends: during a turn the loop's planner owns the chat's context state, and
applying them at once would be overwritten by it (docs/architecture.md, "Context edits
during a turn").
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from desktop_app.chats.changes import Changes
from desktop_app.chats.instance import process_alive
from desktop_app.context.chat_settings import ContextSettings
from desktop_app.context.state import ContextState
from desktop_app.core.errors import ContextDeskError, ErrorKind
from desktop_app.core.messages import Message, MessageStatus, as_list
from desktop_app.core.repair import repair
from desktop_app.storage.chat_info import ChatInfo

if TYPE_CHECKING:  # the context engine and the tools load with the first plan
    from desktop_app.chats.host import ChatHost
    from desktop_app.context.planner import ContextPlanner
    from desktop_app.context.projection import Projector
    from desktop_app.core.valid_prefix import ValidPrefix
    from desktop_app.tools.registry import ToolRegistry

StateChange = Callable[[ContextState], ContextState]


def repaired(messages: Sequence[Message]) -> list[Message]:
    """A stored history made valid for the API (the stored one is never changed)."""
    return list(repair(messages).messages)


class ChatCore:
    def __init__(self, host: ChatHost, info: ChatInfo) -> None:
        self.host = host
        self.info = info
        self._state: ContextState | None = None  # read on first use
        # Built by `Planning` on first use; kept here because a state change reaches it
        self.planner: ContextPlanner | None = None
        self.tools: ToolRegistry | None = None
        self.projector: Projector | None = None  # kept across planners: its view cache
        self.valid_prefix: ValidPrefix | None = None  # the last check's: `repaired_history`
        self.answering = False  # a turn runs (`Turns`): context edits wait for it
        self._queued: list[StateChange] = []

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def title(self) -> str:
        return self.info.title

    @property
    def settings(self) -> ContextSettings:
        return self.info.settings

    @property
    def model(self) -> str:
        """The model requests go to (the demo's simulator in demo mode)."""
        return self.host.model_of(self.info)

    @property
    def state(self) -> ContextState:
        """Pinned facts, summaries, exclusions and the breaker, as the next request uses them."""
        if self._state is None:
            self._state = self.host.store.context_state(self.id)
        return self._state

    # -- reading ------------------------------------------------------------------------

    def messages(self) -> Sequence[Message]:
        """The transcript as stored: every message, whatever its state in the context."""
        return self.host.store.messages(self.id)

    def repaired_history(self, messages: Sequence[Message]) -> Sequence[Message]:
        """`repaired(messages)`, the check going on from where the last one stood: each
        plan checks the whole history, and a 100,000-message chat took ~100 ms a plan."""
        result = repair(messages, self.valid_prefix)
        if result.valid_prefix is not None:
            self.valid_prefix = result.valid_prefix  # (one object, set whole: any thread)
        if not result.problems:
            return messages  # (as it was: not copied)
        return list(result.messages)

    def history(self, messages: Sequence[Message] | None = None) -> list[Message]:
        """The transcript (or `messages`, read already) repaired for the API."""
        return as_list(self.repaired_history(self.messages() if messages is None else messages))

    def refresh_info(self) -> ChatInfo:
        """Re-read the title, counts and settings (after a turn, a rename elsewhere)."""
        self.info = self.host.store.chat(self.id)
        return self.info

    def rename(self, title: str) -> Changes:
        title = " ".join(title.split())
        if not title:
            raise ContextDeskError("No title", "A chat needs a name.", kind=ErrorKind.USAGE)
        self.info = self.host.store.update_chat(self.id, title=title)
        return Changes(info=self.info)

    def forget_state(self) -> None:
        """The state is read again when next used (another branch shown: its summaries)."""
        self._state = None
        if self.planner is not None and not self.answering:
            self.planner.state = self.state

    # -- the one way the context state changes ---------------------------------------------

    def change(self, change: StateChange) -> Changes:
        """Apply a context edit now — to the state as stored, so an edit made by another
        program meanwhile is kept — or, during our own turn, when it ends."""
        if self.answering:
            self._queued.append(change)
            return Changes(waits_for_turn=True)
        self.check_no_turn_elsewhere()
        self.save_state(change(self.host.store.context_state(self.id)))
        return Changes(state=self.state, replan=True)

    def save_state(self, state: ContextState) -> None:
        """Saved first, then kept: a failed write leaves the chat as it was."""
        self.host.store.save_context_state(self.id, state)
        self.keep_state(state)

    def keep_state(self, state: ContextState) -> None:
        self._state = state
        if self.planner is not None and not self.answering:
            self.planner.state = state

    def take_queued(self, state: ContextState) -> ContextState:
        """`state` with the edits made during the turn that just ended."""
        queued, self._queued = self._queued, []
        for change in queued:
            state = change(state)
        return state

    def check_no_turn_elsewhere(self) -> None:
        """Another process (the window, or the command line beside it) may be in the
        middle of this chat's turn: a message or a context edit made now would land
        inside it, or be overwritten when it ends."""
        pid = self.host.store.answering_pid(self.id)
        if pid is None or pid == os.getpid() or not process_alive(pid):
            return  # none, ours, or left by a process that has died
        raise ContextDeskError(
            "This chat is answering elsewhere",
            f"ContextDesk (process {pid}) is in the middle of a reply in this chat. Let it "
            "finish (or stop it there), then try again.",
            kind=ErrorKind.ALREADY_RUNNING,
        )

    def check_not_answering(self, then: str) -> None:
        if self.answering:
            raise ContextDeskError(
                "Claude is still answering",
                f"Wait for the reply to finish, or stop it, then {then}.",
                kind=ErrorKind.USAGE,
            )


# -- retrying: which replies a retry answers again --------------------------------------------


def can_retry(messages: Sequence[Message]) -> bool:
    """Is there something to answer again: a last user message, once any failed or
    interrupted replies after it are left out? (Reads from the end: no copy.)"""
    for message in reversed(messages):
        if message.role == "user":
            return True
        if message.status is MessageStatus.COMPLETE:
            return False
    return False


def without_failed_replies(messages: Sequence[Message]) -> list[Message]:
    kept = list(messages)
    while kept and _failed_reply(kept[-1]):
        kept.pop()
    return kept


def _failed_reply(message: Message) -> bool:
    return message.role == "assistant" and message.status is not MessageStatus.COMPLETE


def retry_point(messages: Sequence[Message]) -> str | None:
    """Where a retry answers from: after a failed or interrupted reply, the message
    before it — the new answer is stored beside the failed one, as a version of it
    (‹1/2›, as a regeneration is), never as a second reply under it; None when the
    last message is the user's own (answered as it stands)."""
    end = len(messages)  # (found from the end: a 100,000-message history is not copied)
    while end and _failed_reply(messages[end - 1]):
        end -= 1
    if end == len(messages) or not end or messages[end - 1].role != "user":
        return None
    return messages[end - 1].id
