"""The projection's result, as a value: `Plan` (the exact next request, its tokens by
`Section`, each block's `BlockState`, whether compaction is due) and the words a block's
state is shown in (`BlockStatus`).

Separate from `projection.py`, which makes plans, because most of those who read a plan
— the window's meter and context panel, the command line, the cost estimate — never
make one: they need this value and its vocabulary, not the projection's machinery.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from desktop_app.context.project import ProjectLayers
from desktop_app.core.messages import Message
from desktop_app.core.request import ChatRequest
from desktop_app.core.thinking import ThinkingSetup
from desktop_app.tokens.counter import TokenCounter, TokenFigure

NO_THINKING = ThinkingSetup(None, "", False)


class BlockState(StrEnum):
    IN_CONTEXT = "in context"
    SUMMARIZED = "summarized"
    TRIMMED = "trimmed"
    EXCLUDED = "excluded"
    CLEARED = "cleared"
    NOT_SENT = "not sent"


# A whole message's state, shared by every message in it (a 100,000-message chat's plan
# marks most of its messages not sent: one tuple, not one each).
WHOLE_NOT_SENT: tuple[BlockState, int | None] = (BlockState.NOT_SENT, None)
WHOLE_EXCLUDED: tuple[BlockState, int | None] = (BlockState.EXCLUDED, None)


@dataclass(frozen=True, slots=True)
class BlockStatus:
    state: BlockState
    tokens: int  # the block as stored: its own local estimate, never calibrated
    sent_tokens: int  # what it costs in the request: 0 unless in context or trimmed
    summary: int | None = None  # k of "summarized in #k"
    why: str = ""  # why a block is not sent, where one says (a thinking block's binding)

    @property
    def label(self) -> str:
        if self.state is BlockState.SUMMARIZED:
            return f"summarized in #{self.summary}"
        if self.state is BlockState.TRIMMED:
            return f"trimmed {self.tokens:,} → {self.sent_tokens:,} tokens"
        if self.why:
            return f"{self.state.value}: {self.why}"
        return self.state.value


class Section(StrEnum):
    PROJECT_INSTRUCTIONS = "project instructions"
    PROJECT_FACTS = "project facts"
    PROJECT_KNOWLEDGE = "project knowledge"
    SYSTEM = "system"
    FACTS = "facts"
    TOOLS = "tools"
    SUMMARY = "summary"
    MESSAGES = "messages"
    RESERVED = "reserved output"
    FREE = "free"


@dataclass(frozen=True, slots=True)
class Plan:
    request: ChatRequest
    sections: Mapping[Section, int]  # calibrated token estimates; they add up to the window
    context_window: int
    estimated_input: int  # calibrated estimate of the whole prompt
    calibration: float  # the factor applied to totals, for this request's mix of content
    threshold: int  # tokens at which auto-compaction is due
    compaction_due: bool
    due_reason: str
    fits: bool  # estimated input + max_tokens ≤ window
    forecast_turns: int | None  # "auto-compaction in about N turns" (None: no rate yet)
    first_sent_after_head: str | None  # where the context "starts" after the first message
    not_sent_count: int
    last_reported: TokenFigure | None  # the last reply's prompt, as the API counted it (exact)
    # Per-message and per-block states that differ from "in context, unchanged".
    message_states: Mapping[str, tuple[BlockState, int | None]] = field(repr=False)
    block_states: Mapping[tuple[str, int], tuple[BlockState, int]] = field(repr=False)
    counter: TokenCounter = field(repr=False, compare=False)
    project: ProjectLayers | None = field(default=None, repr=False, compare=False)
    # What the chat's thinking choice became for this model (its `note` says any change).
    thinking: ThinkingSetup = field(default=NO_THINKING, repr=False, compare=False)
    # Why each thinking block "not sent" is not sent (core/binding.py).
    unsent_reasons: Mapping[tuple[str, int], str] = field(
        default_factory=dict, repr=False, compare=False
    )
    # Of the project's knowledge section, the documents opening the first message (the
    # Request tab's folds count them with the messages, where they are sent).
    documents_tokens: int = field(default=0, compare=False)
    # The whole prompt as the server's count_tokens counted this very request (exact).
    exact_input: TokenFigure | None = field(default=None, compare=False)
    # Why nothing can be compacted now ("" when something can; planner.compaction_blocked).
    compaction_blocked: str = field(default="", compare=False)
    # The message this request's last one is a new version of ("": none — not an edit).
    edit_of: str = field(default="", compare=False)
    # The failed or interrupted reply this request answers again, beside it (Retry).
    retries: str = field(default="", compare=False)
    # The words standing for an empty composer's draft ("": the draft is the user's own),
    # so that the next request can be shown as one that can be sent (Chat.next_planning).
    stand_in: str = field(default="", compare=False)

    @property
    def input_figure(self) -> TokenFigure:
        """The whole prompt of this request: the server's count where it counted it,
        else the local estimate."""
        return self.exact_input or TokenFigure(self.estimated_input, exact=False)

    def block_status(self, message: Message, index: int) -> BlockStatus:
        """The state of one block of the transcript in this request, with its own local
        estimate (calibration scales totals, never a block: its number must not move when
        a factor is learned)."""
        tokens = self.counter.blocks_of(message)[index]
        if message.id == self.retries:  # Retry's request answers again, beside it
            return BlockStatus(BlockState.NOT_SENT, tokens, 0, why="Retry answers again")
        whole = self.message_states.get(message.id)
        if whole is not None:
            return BlockStatus(whole[0], tokens, 0, whole[1])
        special = self.block_states.get((message.id, index))
        if special is not None:
            state, sent_raw = special
            why = self.unsent_reasons.get((message.id, index), "")
            return BlockStatus(state, tokens, sent_raw, why=why)
        return BlockStatus(BlockState.IN_CONTEXT, tokens, tokens)

    @property
    def forecast(self) -> str:
        if self.compaction_due:
            return "auto-compaction is due now"
        if self.forecast_turns is None:
            return "not enough turns yet to forecast auto-compaction"
        turns = self.forecast_turns
        return (
            f"at the recent rate, auto-compaction in about {turns:,} "
            f"turn{'s' if turns != 1 else ''}"
        )
