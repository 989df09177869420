"""Export: a chat as `contextdesk.chat` JSON (version 1: the branch shown, the other
branches' messages with their parents, the context state, facts, settings and, when
asked, the ledger's requests) and as Markdown for reading. Import is `exchange`'s."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import IO, Any

from desktop_app import __version__
from desktop_app.core.blocks import (
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from desktop_app.core.messages import Message
from desktop_app.storage.chat_info import ChatInfo
from desktop_app.storage.foreign import Hidden
from desktop_app.storage.store import ChatStore

FORMAT = "contextdesk.chat"
VERSION = 1


class Items:
    """A list of the document that `write_json` writes item by item, each item made as
    it is written: a 100,000-message chat's messages are never all JSON at once."""

    __slots__ = ("_make",)

    def __init__(self, make: Callable[[], Iterator[Any]]) -> None:
        self._make = make

    def __iter__(self) -> Iterator[Any]:
        return self._make()


def export_chat(
    store: ChatStore,
    chat_id: str,
    request_body: dict[str, Any],
    block_tokens: Callable[[Message], Sequence[int]] | None = None,
    messages: Sequence[Message] | None = None,
) -> dict[str, Any]:
    """`export_document` as one value, its lists made (a short chat's, a test's)."""
    document = export_document(store, chat_id, request_body, block_tokens, messages)
    return {k: list(v) if isinstance(v, Items) else v for k, v in document.items()}


def write_json(out: IO[str], document: dict[str, Any]) -> None:
    """`document` (an object with at least one member) as `json.dumps(document,
    indent=2)` writes it, plus a newline — its `Items` one by one, so that what is in
    memory at once is one message, not the file."""

    def dumps(value: Any, depth: int) -> str:  # (JSON has no raw newline inside a string)
        text = json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False)
        return text.replace("\n", "\n" + "  " * depth)

    for n, (key, value) in enumerate(document.items()):
        out.write(("{" if n == 0 else ",") + "\n  " + dumps(key, 1) + ": ")
        if not isinstance(value, Items):
            out.write(dumps(value, 1))
            continue
        opened = False
        for item in value:
            out.write(("," if opened else "[") + "\n    " + dumps(item, 2))
            opened = True
        out.write("\n  ]" if opened else "[]")
    out.write("\n}\n")


def export_document(
    store: ChatStore,
    chat_id: str,
    request_body: dict[str, Any],
    block_tokens: Callable[[Message], Sequence[int]] | None = None,
    messages: Sequence[Message] | None = None,
) -> dict[str, Any]:
    """The chat as a `contextdesk.chat` document, its messages `Items` (`write_json`).
    `request_body` is the exact next request (the caller projects it); `block_tokens`
    gives each message's per-block estimates; `messages`, when the caller has loaded
    them already, saves loading them twice."""
    chat = store.chat(chat_id)
    state = store.context_state(chat_id)
    shown = store.messages(chat_id) if messages is None else messages
    others = store.other_branches(chat_id)
    # With branches, each message says where it was stored: versions keep their order
    order = store.tree(chat_id).order if others else {}
    hidden = store.hidden_messages(chat_id)
    before, after = store.handoffs(chat_id)
    linked = store.chats([c for c in [before, *after] if c])
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "app": f"ContextDesk {__version__}",
        "chat": {
            "id": chat.id,
            "title": chat.title,
            "model": chat.model,
            "created_at": chat.created_at,
            "updated_at": chat.updated_at,
            "settings": asdict(chat.settings),
        },
        # A hand-off's two chats name each other (chats/handoff.py).
        **({"continued_from": _link(linked[before])} if before in linked else {}),
        **(
            {"continued_in": [_link(linked[c]) for c in after if c in linked]}
            if any(c in linked for c in after)
            else {}
        ),
        "system_prompt": chat.system_prompt,
        "facts": [
            {
                "id": f.id,
                "text": f.text,
                "fields": [list(p) for p in f.fields],
                "source": f.source.value,
                "pending": f.pending,
                "created_at": f.created_at,
                "updated_at": f.updated_at,
            }
            for f in state.facts
        ],
        "summaries": [
            {
                "id": s.id,
                "number": s.number,
                "covers": list(s.covers),
                "text": s.text,
                "model": s.model,
                "instructions": s.instructions,
                "replaces": s.replaces,
                "warnings": list(s.warnings),
                "edited": s.edited,
                "undone": s.undone,
                "created_at": s.created_at,
            }
            for s in state.summaries
        ],
        "context": {
            "excluded_messages": sorted(state.excluded_messages),
            "excluded_blocks": [list(k) for k in sorted(state.excluded_blocks)],
            "cleared_results": sorted(state.cleared_results),
        },
        "messages": Items(lambda: (_message_json(m, block_tokens, order) for m in shown)),
        # The other branches' messages (edits and regenerations), each after its parent
        "branches": Items(
            lambda: (
                {**_message_json(m, block_tokens, order), "parent": parent} for parent, m in others
            )
        ),
        # What an imported chat's source kept but did not show (its tool traffic, system
        # messages): never shown or sent; here so that nothing imported is lost.
        **({"imported_hidden": [_hidden_json(h) for h in hidden]} if hidden else {}),
        "request": request_body,
    }


def _link(chat: ChatInfo) -> dict[str, str]:
    return {"id": chat.id, "title": chat.title}


def _hidden_json(hidden: Hidden) -> dict[str, Any]:
    return {
        "after": hidden.after,
        "path": hidden.path,
        "role": hidden.role,
        "kind": hidden.kind,
        "text": hidden.text,
    }


def _message_json(
    m: Message,
    block_tokens: Callable[[Message], Sequence[int]] | None,
    order: dict[str, int],
) -> dict[str, Any]:
    return {
        **({"order": order[m.id]} if m.id in order else {}),
        "id": m.id,
        "role": m.role,
        "content": m.to_api()["content"],
        "status": m.status.value,
        "stop_reason": m.stop_reason,
        "usage": m.usage.to_api() if m.usage else None,
        **({"model": m.model} if m.model else {}),
        "created_at": m.created_at,
        "token_estimates": list(block_tokens(m)) if block_tokens else None,
    }


def export_markdown(
    store: ChatStore, chat_id: str, messages: Sequence[Message] | None = None
) -> str:
    """The chat for reading: facts first, then every message (`messages`, if read
    already), tool calls as code."""
    chat = store.chat(chat_id)
    state = store.context_state(chat_id)
    lines = [
        f"# {chat.title}",
        "",
        f"Model: `{chat.model}` · exported {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        "",
    ]
    if chat.system_prompt:
        lines += ["## System prompt", "", chat.system_prompt, ""]
    accepted = [f for f in state.facts if not f.pending]
    if accepted:
        lines += ["## Pinned facts", ""] + [f"- {f.text}" for f in accepted] + [""]
    speaker = ""
    for message in store.messages(chat_id) if messages is None else messages:
        # Tool results come back in a user message, but they are Claude's work: they read
        # on under Claude's heading, as the window shows them inside Claude's turn.
        said_by = "You" if message.role == "user" and not message.is_tool_results else "Claude"
        if said_by != speaker:
            lines += [f"## {said_by}", ""]
            speaker = said_by
        for block in message.blocks:
            lines += [*_markdown_block(block), ""]
    return "\n".join(lines).rstrip() + "\n"


def _markdown_block(block: object) -> list[str]:
    if isinstance(block, TextBlock):
        return [block.text]
    if isinstance(block, ThinkingBlock):
        if not block.thinking.strip():  # display "omitted": only that it happened came back
            return ["*(Claude thought here; its text was not sent back)*"]
        return ["<details><summary>Thinking</summary>", "", block.thinking, "", "</details>"]
    if isinstance(block, RedactedThinkingBlock):
        return ["*(redacted thinking)*"]
    if isinstance(block, ToolUseBlock):
        return [
            f"**Tool call:** `{block.name}`",
            "",
            "```json",
            json.dumps(block.input, ensure_ascii=False, indent=2),
            "```",
        ]
    if isinstance(block, ToolResultBlock):
        label = "Tool error" if block.is_error else "Tool result"
        return [f"**{label}:**", "", "```", block.text, "```"]
    return [f"*({type(block).__name__})*"]
