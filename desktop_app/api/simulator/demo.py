"""The offline demo model: deterministic, honest about being simulated, and able to use
the demo tools and write an extractive summary when asked to compact."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection
from typing import Any

from desktop_app.api.simulator.script import Reply
from desktop_app.context.fidelity import hard_facts

LABEL = "[Simulated reply from the ContextDesk offline demo model]"
SUMMARY_LABEL = "[Simulated summary by the offline demo model]"


def answer(body: dict[str, Any], purpose: str) -> Reply:
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    if purpose == "compaction" or "compact the earlier part of a conversation" in _system_text(
        body
    ):
        return Reply.text(summarize(_text_of(last)))
    results = [b for b in _blocks(last) if b.get("type") == "tool_result"]
    if last.get("role") == "user" and results:
        outputs = "\n".join(f"- {_result_text(r)[:300]}" for r in results)
        return Reply.text(
            f"{LABEL}\nThe tool{'s' if len(results) > 1 else ''} returned:\n{outputs}"
        )
    text = _text_of(last)
    tools = {t.get("name") for t in body.get("tools") or []}
    call = _tool_for(text, tools, len(messages))
    if call:
        return Reply.tools(call, text=f"{LABEL}\nLet me use {call[1]}.")
    return Reply.text(chat_reply(text, len(messages), tools))


# What to ask for to see each tool called (`_tool_for` answers these words).
ASKING = (
    ("current_time", "for the time"),
    ("list_files", "to list files"),
    ("read_file", "to read a file (“read notes.txt”)"),
)


def chat_reply(text: str, n_messages: int, tools: Collection[Any] = ()) -> str:
    """An honest stand-in reply, pointing at what it can do with the tools it was offered
    (the file tools only with a workspace folder: it says so)."""
    words = len(text.split())
    facts = hard_facts(text)
    noticed = (
        f" I noticed these facts you might want to pin: {', '.join(facts[:5])}." if facts else ""
    )
    asks = [words_ for name, words_ in ASKING if name in tools]
    ask = (
        f" Ask me {', '.join(asks[:-1])}{' or ' if len(asks) > 1 else ''}{asks[-1]} to see tool "
        "calls"
        if asks
        else " No tools were offered to me"
    )
    files = (
        ""
        if not asks or "list_files" in tools
        else " (the file tools need a workspace folder: Settings)"
    )
    return (
        f"{LABEL}\nYou wrote {words} word{'s' if words != 1 else ''}; this conversation now has "
        f"{n_messages} message{'s' if n_messages != 1 else ''}.{noticed}{ask}{files}; connect "
        "an API key for real answers."
    )


def summarize(span: str) -> str:
    """An extractive summary: every sentence that carries a hard fact, in order."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?。！？])\s+|\n+", span) if s.strip()]
    keep = [s for s in sentences if hard_facts(s)] or sentences[:3]
    return SUMMARY_LABEL + "\n" + "\n".join(f"- {s[:400]}" for s in keep[:40])


def _tool_for(text: str, tools: set[Any], seq: int) -> tuple[str, str, dict[str, Any]] | None:
    lowered = text.lower()
    tool_id = "toolu_demo_" + hashlib.sha256(f"{seq}:{text}".encode()).hexdigest()[:16]
    if "time" in lowered and "current_time" in tools:
        return (tool_id, "current_time", {})
    if ("list" in lowered and "file" in lowered) and "list_files" in tools:
        return (tool_id, "list_files", {"path": "."})
    match = re.search(r"read\s+(?:the\s+)?(?:file\s+)?([\w./-]+\.\w+)", text, re.I)
    if match and "read_file" in tools:
        return (tool_id, "read_file", {"path": match.group(1)})
    match = re.search(r"\bpin\s+(.+)", text, re.I)
    if match and "pin_fact" in tools:
        return (tool_id, "pin_fact", {"text": match.group(1).strip()})
    return None


def _system_text(body: dict[str, Any]) -> str:
    system = body.get("system") or ""
    if isinstance(system, list):
        return "\n".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
    return str(system)


def _blocks(message: Any) -> list[dict[str, Any]]:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _text_of(message: Any) -> str:
    return "\n".join(str(b.get("text", "")) for b in _blocks(message) if b.get("type") == "text")


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content", "")
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)
