"""ChatGPT's export (Settings → Data controls → Export): `conversations.json` — since early
2026 also sharded as `conversations-000.json`, … —, an array of conversations (some
variants wrap it: `{"conversations": […]}`); each `{id, title, create_time, mapping{node:
{id, parent, children[], message|null}}, current_node, default_model_slug}`, a message
`{author{role}, create_time, content{content_type, parts[]}, metadata{model_slug},
recipient}`. The tree is the UI's: every edit and regeneration is a branch, and
`current_node` ends the one shown. The shape as the issue documents it (issue 35, "The
formats"), and as public converters read it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

from desktop_app.core.blocks import Block, ImageBlock, TextBlock
from desktop_app.core.messages import Message
from desktop_app.storage.foreign import (
    ForeignChat,
    ForeignNode,
    Hidden,
    message_of,
    parents_first,
)

TEXT_TYPES = ("text", "multimodal_text")
# Kept out, and counted in the report: the model's own notes and tool traffic, which
# ChatGPT does not show either.
HIDDEN_TYPES = ("thoughts", "reasoning_recap", "code", "execution_output", "tether_quote")


Assets = Callable[[str], tuple[str, bytes] | None]  # a pointer's file: (media type, bytes)


def conversations(data: Any, assets: Assets | None = None) -> list[ForeignChat]:
    """The conversations; an image a message points to is read by `assets` (the zip's
    files), else named in the report as not in the export."""
    items = data.get("conversations") if isinstance(data, dict) else data
    return [
        conversation(raw, i, assets) for i, raw in enumerate(items or []) if isinstance(raw, dict)
    ]


def _none(_pointer: str) -> tuple[str, bytes] | None:
    return None


def conversation(raw: dict[str, Any], index: int, assets: Assets | None = None) -> ForeignChat:
    """One conversation of the list (the `index`th), its images read by `assets`."""
    if assets is None:
        assets = _none
    notes: list[str] = []
    mapping: dict[str, Any] = raw["mapping"] if isinstance(raw.get("mapping"), dict) else {}
    hidden = 0
    nodes: list[ForeignNode] = []
    suggested: list[str] = []
    for node_id in parents_first(mapping, "parent"):
        node = mapping[node_id]
        told = custom_instructions(node.get("message"))
        if told:
            suggested += told
            node = {**node, "message": None}  # (its children follow its parent)
        parent = node.get("parent") if isinstance(node.get("parent"), str) else None
        where = f"[{index}].mapping.{node_id}"
        message, kept = _message(node.get("message"), where, notes, assets)
        hidden += bool(kept)
        parent = parent if parent in mapping else None
        nodes.append(ForeignNode(node_id, parent, message, (kept,) if kept else ()))
    if hidden:
        notes.append(
            f"[{index}]: {hidden} system, tool or reasoning message(s) ChatGPT does not "
            "show: kept with the chat (in its export), not shown or sent"
        )
    current = raw.get("current_node")
    return ForeignChat(
        "chatgpt",
        str(raw.get("id") or raw.get("conversation_id") or f"#{index}"),
        str(raw.get("title") or "").strip(),
        tuple(nodes),
        current if isinstance(current, str) and current in mapping else None,
        str(raw.get("default_model_slug") or ""),
        tuple(notes),
        suggested=tuple(dict.fromkeys(suggested)),
    )


# What ChatGPT wraps the user's own words in (`user_editable_context`); the words are
# between the fences.
CUSTOM_INSTRUCTIONS = (("user_profile", "About me"), ("user_instructions", "How to respond"))


def custom_instructions(raw: Any) -> list[str]:
    """The custom instructions a hidden `user_editable_context` message carries — "About
    me" and "How to respond", as the user wrote them — as facts to offer; [] for any
    other message."""
    content = raw.get("content") if isinstance(raw, dict) else None
    if not isinstance(content, dict) or content.get("content_type") != "user_editable_context":
        return []
    found = []
    for key, label in CUSTOM_INSTRUCTIONS:
        text = content.get(key)
        if isinstance(text, str) and text.strip():
            fenced = text.split("```")
            words = fenced[1] if len(fenced) >= 3 else text  # (unwrapped: as it is)
            if words.strip():
                found.append(f"{label}: {words.strip()}")
    return found


def _message(
    raw: Any, path: str, notes: list[str], assets: Assets
) -> tuple[Message | None, Hidden | None]:
    """The node's message to show; or, for one ChatGPT keeps hidden (a system message,
    tool traffic, the model's notes), what it says, to keep unshown (None: nothing)."""
    if not isinstance(raw, dict):
        return None, None
    role = (raw.get("author") or {}).get("role")
    content: dict[str, Any] = raw["content"] if isinstance(raw.get("content"), dict) else {}
    kind = content.get("content_type")
    metadata: dict[str, Any] = raw["metadata"] if isinstance(raw.get("metadata"), dict) else {}
    if (
        role not in ("user", "assistant")
        or kind in HIDDEN_TYPES
        or raw.get("recipient", "all") != "all"
        or metadata.get("is_visually_hidden_from_conversation")
    ):
        text = _hidden_text(content)
        recipient = raw.get("recipient", "all")
        what = f"{kind} → {recipient}" if recipient not in ("all", None) else str(kind)
        return None, (Hidden(path, str(role), what, text) if text.strip() else None)
    if kind not in TEXT_TYPES:
        notes.append(f"{path}: a {kind!r} message; left out")
        return None, None
    blocks: list[Block] = []
    for j, part in enumerate(content.get("parts") or []):
        if isinstance(part, str):
            if part:
                blocks.append(TextBlock(part))
        elif isinstance(part, dict) and part.get("asset_pointer"):
            pointer = str(part["asset_pointer"])
            found = assets(pointer.split("://", 1)[-1]) if role == "user" else None
            if found is None:
                notes.append(f"{path}.content.parts.{j}: image {pointer} is not in the export")
            else:
                blocks.append(ImageBlock(found[0], base64.b64encode(found[1]).decode("ascii")))
        else:
            notes.append(f"{path}.content.parts.{j}: a part that is not text; left out")
    if not blocks:
        return None, None
    when = raw.get("create_time")
    model = str(metadata.get("model_slug") or "") if role == "assistant" else ""
    return message_of(role, blocks, when if isinstance(when, int | float) else None, model), None


def _hidden_text(content: dict[str, Any]) -> str:
    """What a hidden message says: its parts, its text (code, a tool's output), its
    thoughts' summaries and contents (ChatGPT's reasoning), or its content as JSON."""
    parts = [p for p in content.get("parts") or [] if isinstance(p, str)]
    if parts:
        return "\n\n".join(parts)
    for key in ("text", "content", "result"):
        if isinstance(content.get(key), str):
            return str(content[key])
    thoughts = [t for t in content.get("thoughts") or [] if isinstance(t, dict)]
    if thoughts:
        return "\n\n".join(
            "\n".join(str(t[k]) for k in ("summary", "content") if t.get(k)) for t in thoughts
        )
    rest = {k: v for k, v in content.items() if k != "content_type"}
    return json.dumps(rest, ensure_ascii=False) if rest else ""
