"""A demo conversation to look at: the first chat of the offline demo, the screenshots
and the long-chat benchmarks all use it, so what is measured is what a user sees.

Every kind of block appears: Markdown with code, thinking, tool calls with results
(some long enough to be trimmed), and hard facts worth pinning.
"""

from __future__ import annotations

import time

from desktop_app.context.chat_settings import ContextSettings
from desktop_app.context.facts import Fact
from desktop_app.context.state import ContextState
from desktop_app.core.blocks import TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from desktop_app.core.messages import Message
from desktop_app.storage.chat_info import ChatInfo
from desktop_app.storage.store import ChatStore

DEMO_TITLE = "Offline demo: invoice dispute"

_TOPICS = (
    "the refund for invoice #88213",
    "the delivery date of order 4471-B",
    "the warranty on serial SN-20931",
    "the shipping fee on contract C-1187",
    "the duplicate charge of 129.99 EUR",
)


def demo_turns(n_turns: int, *, start: float | None = None) -> list[Message]:
    """`n_turns` exchanges (2–4 messages each) with realistic, varied content."""
    clock = start if start is not None else time.time() - n_turns * 60
    messages: list[Message] = []
    for turn in range(n_turns):
        topic = _TOPICS[turn % len(_TOPICS)]
        at = clock + turn * 60
        question = (
            f"Turn {turn + 1}: can you check {topic}? The customer wrote on "
            f"2026-04-{turn % 28 + 1:02d} and says they were promised "
            f"{100 + turn % 900}.{turn % 100:02d} EUR back."
        )
        messages.append(Message("user", (TextBlock(question),), created_at=at))
        if turn % 3 == 1:
            call = ToolUseBlock(
                f"toolu_demo_{turn:06d}", "read_file", {"path": f"cases/{turn:04d}.md"}
            )
            messages.append(
                Message(
                    "assistant",
                    (TextBlock("Let me read the case file first."), call),
                    stop_reason="tool_use",
                    created_at=at + 2,
                )
            )
            lines = "\n".join(
                f"{day:02d}.04.2026  note {day}: customer called about {topic}; "
                "agent promised a callback"
                for day in range(1, 40 if turn % 6 == 1 else 8)
            )
            result = ToolResultBlock(call.id, f"# Case {turn:04d}\n{lines}")
            messages.append(Message("user", (result,), created_at=at + 3))
        blocks: list[TextBlock | ThinkingBlock] = []
        if turn % 4 == 0:
            blocks.append(
                ThinkingBlock(
                    f"The customer asks about {topic}. I should state the amount and date exactly "
                    "and suggest pinning them so they survive compaction.",
                    signature="demo-signature",
                )
            )
        blocks.append(
            TextBlock(
                f"Here is what I found about **{topic}**:\n\n"
                f"- Amount promised: **{100 + turn % 900}.{turn % 100:02d} EUR**\n"
                f"- Deadline: 2026-05-{turn % 28 + 1:02d}\n\n"
                "```text\n"
                f"status: open   owner: support-{turn % 7}\n"
                "```\n\n"
                "Pin the amount and the deadline if they matter for the rest of this chat."
            )
        )
        messages.append(
            Message(
                "assistant",
                tuple(blocks),
                stop_reason="end_turn",
                # No usage: these replies were written here, never sent — a figure the
                # panel calls exact must come from a server, for a request sent.
                created_at=at + 5,
            )
        )
    return messages


def create_demo_chat(
    store: ChatStore, n_turns: int = 4, *, model: str = "contextdesk-demo"
) -> ChatInfo:
    """A chat with `n_turns` of demo conversation and two pinned facts."""
    state = (
        ContextState()
        .pin(Fact("Refund for invoice #88213: 847.20 EUR, due 2026-04-13"))
        .pin(Fact("The customer prefers email, not phone"))
    )
    return store.create_full(DEMO_TITLE, model, "", ContextSettings(), demo_turns(n_turns), state)
