"""How the simulator thinks as today's models do, and checks thinking blocks as the API
does (platform.claude.com: build-with-claude/thinking, preserved-thinking,
thinking-troubleshooting; read 2026-12-03).

- Leaving `thinking` out means adaptive thinking on the models that say so
  (`ModelFacts.omitted_thinks`); `display` defaults to the model's (`"omitted"` on
  today's: the block's text is empty, only its signature comes back).
- On Fable 5/5.1, Mythos 5.1, Opus 5.5 and Sonnet 5.5 the notes written between tool
  calls come back as thinking blocks of their own, each before the call it introduces.
- A signature binds its block to the model that wrote it and the prefix it followed
  (system, tools, the messages before it; not cache markers, key order or the thinking
  settings). Here it is readable JSON with an HMAC, so a test can see what it binds; a
  signature the simulator did not make is taken as valid but bound to an unknown prefix.

This module is the stand-in's own reading of those rules, written apart from the
client's (core/binding.py), so that a mistake on one side fails a test.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

from desktop_app.core.model_facts import (
    DEMO,
    ModelFacts,
    builtin_facts,
    facts_for,
    reads_thinking_of,
)

_KEY = b"contextdesk-simulator-signing-key"
_PREFIX = "sim1."
# Models whose notes between tool calls are thinking blocks (thinking page, "Progress
# updates"); Sonnet 5.5 makes only the longer notes so.
PROGRESS_NOTE_MODELS = frozenset(
    {
        "claude-fable-5",
        "claude-fable-5-1",
        "claude-mythos-5-1",
        "claude-opus-5-5",
        "claude-sonnet-5-5",
    }
)
BOUND_TO_ANOTHER = (
    "messages.{i}.content.{j}: Invalid `signature` in `thinking` block. The block is bound to "
    "a different conversation. Remove the block, or set `thinking.block_binding."
    'prefix_mismatch_behavior` to "drop_block".'
)
BAD_SIGNATURE = "messages.{i}.content.{j}: Invalid `signature` in `thinking` block"


def how_it_thinks(body: dict[str, Any]) -> tuple[bool, bool, str]:
    """(reasons before answering, writes progress notes as thinking, display) for a
    request body, by its `thinking` field and its model's rules."""
    facts = facts_for(str(body.get("model", "")))
    thinking = body.get("thinking")
    kind = thinking.get("type") if isinstance(thinking, dict) else None
    if kind is None:
        kind = "adaptive" if facts.omitted_thinks else "disabled"
    display = facts.display_default
    if isinstance(thinking, dict) and thinking.get("display") in ("summarized", "omitted"):
        display = thinking["display"]
    notes = _base(facts.id) in PROGRESS_NOTE_MODELS and kind in ("adaptive", "between_tools")
    if kind == "between_tools":
        return False, notes, "summarized"  # the notes come back as summary text
    if kind == "adaptive" and facts.id == DEMO.id:
        # The demo decides as adaptive thinking does: only a question worth it.
        return _worth_thinking(body), notes, display
    return kind in ("adaptive", "enabled"), notes, display


def _worth_thinking(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or []
    last = messages[-1] if messages and isinstance(messages[-1], dict) else {}
    content = last.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    text = " ".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict))
    return len(text.split()) >= 30 or "think" in text.lower()


def prefix_digest(body: dict[str, Any], before: int) -> str:
    """The prefix of message `before` in `body`: system, tools and the messages before
    it, without cache markers, in a canonical form."""
    system = body.get("system") or []
    if isinstance(system, str):
        system = [{"type": "text", "text": system}] if system else []
    prefix = {
        "system": [_unmarked(b) for b in system if isinstance(b, dict)],
        "tools": [_unmarked(t) for t in body.get("tools") or [] if isinstance(t, dict)],
        "messages": [_unmarked_message(m) for m in (body.get("messages") or [])[:before]],
    }
    text = json.dumps(prefix, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def with_thinking(body: dict[str, Any], content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A reply's blocks as the model of `body` writes them: reasoning first where it
    thinks, a note before each tool call where it writes notes as thinking, and every
    thinking block signed to this model and this request's prefix."""
    reasons, notes, display = how_it_thinks(body)
    messages = body.get("messages") or []
    model = str(body.get("model", ""))
    prefix = prefix_digest(body, len(messages))
    out: list[dict[str, Any]] = []
    for block in content:
        if block.get("type") == "tool_use" and notes and not _after_thinking(out):
            note = f"Next I call {block.get('name')} to get what the question needs."
            out.append({"type": "thinking", "thinking": note if display != "omitted" else ""})
        out.append(dict(block))
    if reasons and not (out and out[0].get("type") in _THINKING):
        last = messages[-1] if messages else {}
        words = len(json.dumps(last.get("content", "")).split()) if isinstance(last, dict) else 0
        thought = f"The user wrote about {words} words. I will answer plainly."
        out.insert(0, {"type": "thinking", "thinking": thought if display != "omitted" else ""})
    for block in out:
        if block.get("type") == "thinking" and not block.get("signature"):
            if display == "omitted":
                block["thinking"] = ""
            block["signature"] = sign(model, prefix, block["thinking"])
    return out


def _after_thinking(blocks: list[dict[str, Any]]) -> bool:
    return bool(blocks) and blocks[-1].get("type") in _THINKING


def sign(model: str, prefix: str, thinking: str) -> str:
    """A signature that binds a block to its model and prefix (and its text)."""
    payload = {"m": model, "p": prefix, "h": _mac(model, prefix, thinking)}
    return _PREFIX + base64.b64encode(json.dumps(payload).encode()).decode()


def read_signature(signature: str) -> dict[str, str] | None:
    """What a simulator signature binds ({"m": model, "p": prefix, "h": mac}), or None
    for a signature made elsewhere."""
    if not signature.startswith(_PREFIX):
        return None
    try:
        data = json.loads(base64.b64decode(signature[len(_PREFIX) :], validate=True))
    except (ValueError, TypeError):
        return {"m": "", "p": "", "h": ""}  # ours in form, damaged inside: invalid
    return data if isinstance(data, dict) else {"m": "", "p": "", "h": ""}


def thinking_problem(body: dict[str, Any]) -> str:
    """The API's 400 for the thinking blocks of `body`, or "" when it would take them
    (blocks a model cannot read are dropped, as the API drops them, without an error)."""
    facts = facts_for(str(body.get("model", "")))
    thinking = body.get("thinking")
    binding = thinking.get("block_binding") if isinstance(thinking, dict) else None
    drop = isinstance(binding, dict) and binding.get("prefix_mismatch_behavior") == "drop_block"
    failed = False
    for i, message in enumerate(body.get("messages") or []):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        content = message.get("content")
        for j, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, dict) or block.get("type") not in _THINKING:
                continue
            problem = _block_problem(body, facts, i, j, block, failed)
            if problem == "unread":
                continue
            if problem and problem.startswith("bound") and drop:
                failed = True  # it, and every later block, are dropped
                continue
            if problem:
                return (BAD_SIGNATURE if problem == "signature" else BOUND_TO_ANOTHER).format(
                    i=i, j=j
                )
    return ""


_THINKING = ("thinking", "redacted_thinking")


def _block_problem(
    body: dict[str, Any],
    facts: ModelFacts,
    i: int,
    j: int,
    block: dict[str, Any],
    failed: bool,
) -> str:
    """ "" (fine), "unread" (dropped silently), "signature" or "bound" (400)."""
    if block["type"] == "redacted_thinking":
        return "bound" if facts.prefix_binding and failed else ""
    signature = block.get("signature")
    if not isinstance(signature, str) or not signature:
        return "signature"
    data = read_signature(signature)
    if data is None:  # made elsewhere: its prefix cannot be ours
        return "bound" if facts.prefix_binding else ""
    text = block.get("thinking")
    thinking = text if isinstance(text, str) else ""
    model, prefix, mac = str(data.get("m", "")), str(data.get("p", "")), str(data.get("h", ""))
    # Under "omitted" the text sent back may be filled in: it is ignored (B2).
    signed = (_mac(model, prefix, thinking), _mac(model, prefix, ""))
    if not any(hmac.compare_digest(mac, expected) for expected in signed):
        return "signature"
    if not reads_thinking_of(facts, model):
        return "unread"
    if facts.prefix_binding and (failed or prefix != prefix_digest(body, i)):
        return "bound"
    return ""


def _mac(model: str, prefix: str, thinking: str) -> str:
    message = f"{model}\n{prefix}\n{thinking}".encode()
    return hmac.new(_KEY, message, hashlib.sha256).hexdigest()[:32]


def _base(model: str) -> str:
    known = builtin_facts(model)
    return known.id if known is not None else model


def _unmarked(block: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in block.items() if k != "cache_control"}
    if out.get("type") == "tool_result" and isinstance(out.get("content"), list):
        out["content"] = [_unmarked(p) if isinstance(p, dict) else p for p in out["content"]]
    return out


def _unmarked_message(message: Any) -> Any:
    if not isinstance(message, dict):
        return message
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    elif isinstance(content, list):
        content = [_unmarked(b) if isinstance(b, dict) else b for b in content]
    return {"role": message.get("role"), "content": content}
