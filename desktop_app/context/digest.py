"""A digest of turns without asking a model — for a hand-off when the user does not want
to spend a request: the sentences that carry a decision, a hard fact (an amount, a date,
an id, a path: `fidelity.hard_facts`) or a question the user asked, in order, by who said
them. Extractive: every line is words someone wrote, never a paraphrase."""

from __future__ import annotations

import re
from collections.abc import Sequence

from desktop_app.context.fidelity import hard_facts
from desktop_app.core.messages import Message

DECISION = re.compile(
    r"\b(decided|decide|agreed|agree|chose|chosen|settled|going with|we will|we'll|let's|"
    r"must|never|always|from now on|instead of|the plan is)\b",
    re.IGNORECASE,
)
SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
MOST = 60  # lines: a digest is a reminder, not a transcript


def digest(messages: Sequence[Message]) -> str:
    """The decisions, hard facts and open questions of `messages`, a line each; "" when
    none of their sentences carries one."""
    lines: list[str] = []
    questions: list[str] = []
    for message in messages:
        if message.is_tool_results:
            continue
        who = "You" if message.role == "user" else "Claude"
        # (a list's own marks would double the digest's: "- Claude: - Amount …")
        for sentence in (s.strip().lstrip("-*• ").strip() for s in SENTENCE.split(message.text)):
            if not sentence:
                continue
            if message.role == "user" and sentence.endswith("?"):
                questions.append(sentence)
            elif DECISION.search(sentence) or hard_facts(sentence):
                lines.append(f"- {who}: {sentence[:300]}")
    out = []
    if lines:
        out += ["Decisions and facts:", *lines[-MOST:]]
    if questions:
        out += ["", "Your latest questions:", *(f"- {q[:300]}" for q in questions[-5:])]
    return "\n".join(out).strip()
