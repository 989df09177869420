"""What an action changed (`Changes`): every action of a chat's returns one, and the faces
show it as it says — the window applies it in one place (`ChatSession.apply`), the
command line prints from it. No face works out for itself what an action did.
"""

from __future__ import annotations

from dataclasses import dataclass

from desktop_app.config.prices import InputCostChange
from desktop_app.context.facts import Fact
from desktop_app.context.state import ContextState
from desktop_app.core.messages import Message
from desktop_app.storage.chat_info import ChatInfo


@dataclass(frozen=True, slots=True)
class Rows:
    """The branch shown changed from a point on: the rows after `after` (a message id;
    None: from the first) are these now."""

    after: str | None
    messages: tuple[Message, ...]


@dataclass(frozen=True, slots=True)
class Changes:
    info: ChatInfo | None = None  # the chat's row as it now is (the list, the window's bar)
    state: ContextState | None = None  # its context state as it now is
    replan: bool = False  # what the next request holds changed: plan it again
    rows: Rows | None = None  # the messages shown from a point on
    notes: tuple[str, ...] = ()  # what the action adjusted on its own, to say once
    fact: Fact | None = None  # the fact the action pinned or changed
    waits_for_turn: bool = False  # a context edit made during a turn: applied when it ends
    # What the change does to the next turn's input cost (asked for with the history it
    # is made on; None: not asked, no price for the model, or it could not be said).
    cost: InputCostChange | None = None


NOTHING = Changes()
