"""Claude's export (claude.ai or Claude desktop: Settings → Privacy → Export data):
`conversations.json`, an array of conversations `{uuid, name, created_at, chat_messages[]}`;
each message `{uuid, sender: human|assistant, text, content[], attachments[], files[],
created_at, parent_message_uuid}`. Branches hang on `parent_message_uuid` (the first
message's parent is the all-zero sentinel below); exports older than the field are one
line in the array's order. The shape as the issue documents it (issue 35, "The formats"),
and as public converters read it.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from desktop_app.core.blocks import Block, TextBlock
from desktop_app.core.messages import Message
from desktop_app.storage.foreign import (
    ForeignChat,
    ForeignMemory,
    ForeignNode,
    ForeignProject,
    Hidden,
    an_object,
    memory_facts,
    message_of,
)

ROOT = "00000000-0000-4000-8000-000000000000"  # the first message's parent


def conversations(data: Any) -> list[ForeignChat]:
    return [conversation(raw, i) for i, raw in enumerate(data) if isinstance(raw, dict)]


def conversation(raw: dict[str, Any], index: int) -> ForeignChat:
    notes: list[str] = []
    nodes: list[ForeignNode] = []
    previous: str | None = None
    latest: tuple[float, str] | None = None
    for i, item in enumerate(raw.get("chat_messages") or []):
        if not isinstance(item, dict):
            notes.append(f"[{index}].chat_messages.{i}: not a message; left out")
            continue
        node_id = str(item.get("uuid") or f"#{i}")
        if "parent_message_uuid" in item:  # (older exports: the array is the chain)
            parent = item.get("parent_message_uuid")
            parent = None if parent in (None, ROOT) else str(parent)
        else:
            parent = previous
        hidden: list[Hidden] = []
        message = _message(item, f"[{index}].chat_messages.{i}", notes, hidden)
        nodes.append(ForeignNode(node_id, parent, message, tuple(hidden)))
        previous = node_id
        when = _when(item.get("created_at"))  # (one without a time is not the newest)
        if message is not None and when is not None and (latest is None or when >= latest[0]):
            latest = (when, node_id)
    return ForeignChat(
        "claude",
        str(raw.get("uuid") or f"#{index}"),
        str(raw.get("name") or "").strip(),
        tuple(nodes),
        latest[1] if latest else None,  # the newest message's branch, as claude.ai opens it
        str(raw.get("model") or ""),
        tuple(notes),
        str(raw.get("project_uuid") or an_object(raw.get("project")).get("uuid") or ""),
    )


def projects(data: Any) -> list[ForeignProject]:
    """`projects.json`: `[{uuid, name, prompt_template, docs[{filename, content}]}]`."""
    found = []
    for raw in data if isinstance(data, list) else []:
        if not isinstance(raw, dict) or not str(raw.get("name") or "").strip():
            continue
        docs = tuple(
            (str(d.get("filename") or "document"), str(d["content"]))
            for d in raw.get("docs") or []
            if isinstance(d, dict) and isinstance(d.get("content"), str) and d["content"]
        )
        found.append(
            ForeignProject(
                str(raw.get("uuid") or raw["name"]),
                str(raw["name"]).strip(),
                str(raw.get("prompt_template") or ""),
                docs,
            )
        )
    return found


def memories(data: Any) -> ForeignMemory:
    """`memories.json` (`[{conversations_memory, project_memories{project uuid: text},
    account_uuid}]`, or one such object, as newer exports write `memories/<account>.json`):
    what Claude remembered, as facts."""
    general: list[str] = []
    per_project: dict[str, list[str]] = {}
    for raw in data if isinstance(data, list) else [data]:
        raw = an_object(raw)
        if isinstance(raw.get("conversations_memory"), str):
            general += memory_facts(raw["conversations_memory"])
        for project, text in an_object(raw.get("project_memories")).items():
            if isinstance(text, str):
                per_project.setdefault(str(project), []).extend(memory_facts(text))
    return ForeignMemory(
        tuple(dict.fromkeys(general)),
        tuple((p, tuple(dict.fromkeys(f))) for p, f in per_project.items() if f),
    )


def _message(
    item: dict[str, Any], path: str, notes: list[str], hidden: list[Hidden]
) -> Message | None:
    """The message to show (None: nothing to show); what of it cannot be sent again — its
    thinking, another app's tool calls and results — is added to `hidden`."""
    role = {"human": "user", "user": "user", "assistant": "assistant"}.get(str(item.get("sender")))
    if role is None:
        notes.append(f"{path}: a {item.get('sender')!r} message; left out")
        return None
    blocks: list[Block] = []
    content = item.get("content")
    if isinstance(content, list) and content:
        for j, block in enumerate(content):
            blocks += _block(block, f"{path}.content.{j}", notes, hidden, role)
    elif isinstance(item.get("text"), str) and item["text"]:
        blocks.append(TextBlock(item["text"]))
    for j, attachment in enumerate(item.get("attachments") or []):
        if isinstance(attachment, dict) and attachment.get("extracted_content"):
            name = attachment.get("file_name") or "attachment"
            blocks.append(TextBlock(f"[Attached: {name}]\n{attachment['extracted_content']}"))
        else:
            notes.append(f"{path}.attachments.{j}: no text in the export; left out")
    for j, file in enumerate(item.get("files") or []):
        name = file.get("file_name") if isinstance(file, dict) else None
        notes.append(f"{path}.files.{j}: {name or 'a file'} is not in the export")
    if not blocks:
        notes.append(f"{path}: nothing to keep (no text)")
        return None
    return message_of(role, blocks, _when(item.get("created_at")))


def _block(block: Any, path: str, notes: list[str], hidden: list[Hidden], role: str) -> list[Block]:
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "text":
        text = str(block.get("text") or "")
        links = [
            str(c["url"])
            for c in block.get("citations") or []
            if isinstance(c, dict) and c.get("url")
        ]
        if links:
            text += "\n\nSources: " + " ".join(dict.fromkeys(links))
        return [TextBlock(text)] if text else []
    if kind == "tool_use" and block.get("name") == "artifacts":
        made = an_object(block.get("input"))
        title = made.get("title") or made.get("id") or "Artifact"
        if made.get("content"):
            language = made.get("language") or ""
            return [TextBlock(f"**{title}**\n\n```{language}\n{made['content']}\n```")]
        if made.get("command") == "update" and isinstance(made.get("new_str"), str):
            # An edit of an artifact made earlier: what it replaced, and with what.
            return [
                TextBlock(
                    f"**{title}** (updated)\n\nReplaced:\n```\n{made.get('old_str') or ''}\n"
                    f"```\nwith:\n```\n{made['new_str']}\n```"
                )
            ]
        notes.append(
            f"{path}: an artifact {made.get('command') or 'change'} with no text; left out"
        )
        return []
    kept = ": kept with the chat (in its export), not shown or sent"
    if kind == "thinking":
        hidden.append(Hidden(path, role, "thinking", str(block.get("thinking") or "")))
        notes.append(f"{path}: thinking without a signature the API takes back{kept}")
        return []
    if kind in ("tool_use", "tool_result"):
        name = block.get("name") or kind
        said = block.get("input") if kind == "tool_use" else block.get("content")
        text = said if isinstance(said, str) else json.dumps(said or "", ensure_ascii=False)
        hidden.append(Hidden(path, role, f"{kind} {name}", text))
        notes.append(f"{path}: {kind} {name} ({text[:60]}) — another app's tool{kept}")
        return []
    notes.append(f"{path}: a {kind!r} block; left out")
    return []


def _when(value: Any) -> float | None:
    try:
        return datetime.fromisoformat(str(value)).timestamp()
    except ValueError:
        return None
