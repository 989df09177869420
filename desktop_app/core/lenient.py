"""Reading histories other programs wrote: shape errors are repaired, not refused.

Exports from other clients, hand-edited files and framework logs break the Messages API's
shape in known ways — a tool call's `input` saved as a JSON string, a thinking block
without its text, a `system` (or OpenAI-style `tool`) message inside `messages`, `null`
content. `normalise_messages` turns such an array into one the strict reader
(`wire.messages_from_api`) accepts, reporting every change with the JSON path it was at.
What it cannot make sense of is left for the strict reader to refuse, naming the path.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from desktop_app.core.repair import Repair
from desktop_app.core.request_rules import SYSTEM_MESSAGE_BLOCKS

ROLE_ALIASES = {"human": "user", "ai": "assistant", "model": "assistant", "bot": "assistant"}
SYSTEM_ROLES = ("system", "developer")


@dataclass
class Normalised:
    messages: list[Any]  # the `messages` array, ready for the strict reader
    origins: list[int] = field(default_factory=list)  # each message's index in the input
    system: list[str] = field(default_factory=list)  # text moved out of `system` messages
    tool_changes: list[dict[str, Any]] = field(default_factory=list)  # tool_addition/removal
    repairs: list[Repair] = field(default_factory=list)


def normalise_messages(raw: Any, path: str = "messages") -> Normalised:
    """The array with every shape error fixed that can be; `raw` itself when none was."""
    if not isinstance(raw, list):
        return Normalised(raw)  # the strict reader names the problem
    fixer = _Shapes(path)
    out, origins = [], []
    for i, item in enumerate(raw):
        message = fixer.message(item, i)
        if message is not None:
            out.append(message)
            origins.append(i)
    if not fixer.repairs:
        return Normalised(raw)
    return Normalised(out, origins, fixer.system, fixer.tool_changes, fixer.repairs)


class _Shapes:
    def __init__(self, path: str) -> None:
        self.path = path
        self.system: list[str] = []
        self.tool_changes: list[dict[str, Any]] = []
        self.repairs: list[Repair] = []

    def report(self, path: str, action: str, reason: str) -> None:
        self.repairs.append(Repair(path, action, reason))

    def message(self, item: Any, i: int) -> Any:
        path = f"{self.path}.{i}"
        if not isinstance(item, dict):
            self.report(path, "removed an entry that is not a message", "a message is an object")
            return None
        role = item.get("role")
        role = role if isinstance(role, str) else repr(role)  # (a list is no dict key)
        if role in SYSTEM_ROLES:
            self.system_message(item, path)
            return None
        if role == "tool":  # OpenAI's shape for a tool's result
            return self.tool_message(item, path)
        if role in ROLE_ALIASES:
            self.report(
                path,
                f"read the role {role!r} as {ROLE_ALIASES[role]!r}",
                "roles are user or assistant",
            )
            item = {**item, "role": ROLE_ALIASES[role]}
        elif role not in ("user", "assistant"):
            said = "a message with no role" if role == "None" else f"the unknown role {role!r}"
            self.report(path, f"read {said} as 'user'", "roles are user or assistant")
            item = {**item, "role": "user"}
        content = item.get("content")
        if content is None:
            self.report(path, "read missing content as empty", "every message has content")
            return {**item, "content": []}
        if isinstance(content, str):
            return item
        if not isinstance(content, list):
            self.report(path, "read the content as text", "content is a string or a list of blocks")
            return {**item, "content": json.dumps(content, ensure_ascii=False)}
        blocks = []
        changed = False
        for j, raw in enumerate(content):
            fixed = self.block(raw, f"{path}.content.{j}")
            changed = changed or fixed != [raw]
            blocks += fixed
        return {**item, "content": blocks} if changed else item

    def system_message(self, item: dict[str, Any], path: str) -> None:
        """Instructions go to the system prompt; tool changes to the chat's tools."""
        content = item.get("content")
        parts = (
            [content] if isinstance(content, str) else content if isinstance(content, list) else []
        )
        texts = []
        for part in parts:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict) and part.get("type") == "text":
                texts.append(str(part.get("text", "")))
            elif isinstance(part, dict) and str(part.get("type")) in SYSTEM_MESSAGE_BLOCKS:
                self.tool_changes.append(part)
        if any(t.strip() for t in texts):
            self.system.append("\n\n".join(t for t in texts if t.strip()))
        self.report(
            path,
            f"moved a {item.get('role')} message into the system prompt",
            "instructions belong in the top-level `system` field",
        )

    def tool_message(self, item: dict[str, Any], path: str) -> dict[str, Any]:
        content = item.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        tool_use_id = str(item.get("tool_call_id") or item.get("tool_use_id") or "")
        self.report(
            path,
            "read an OpenAI-style tool message as a user message with its result",
            "tool results are `tool_result` blocks in a user message",
        )
        return {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": tool_use_id, "content": text}],
        }

    def block(self, raw: Any, path: str) -> list[Any]:
        """The block as zero, one or two blocks the strict reader accepts."""
        if isinstance(raw, str):
            self.report(path, "read a bare string as a text block", "content blocks are objects")
            return [{"type": "text", "text": raw}]
        if not isinstance(raw, dict):
            self.report(path, "removed a block that is not an object", "content blocks are objects")
            return []
        kind = raw.get("type")
        if kind is None and isinstance(raw.get("text"), str):
            self.report(path, "read a block without a type as text", "every block has a `type`")
            return [{"type": "text", "text": raw["text"]}]
        if not isinstance(kind, str):
            self.report(path, "removed a block without a type", "every block has a `type`")
            return []
        if kind == "text" and not isinstance(raw.get("text"), str):
            text = raw.get("text")
            if text is None:
                self.report(path, "removed a text block without text", "text blocks need `text`")
                return []
            self.report(path, "read the text as a string", "`text` is a string")
            return [{**raw, "text": json.dumps(text, ensure_ascii=False)}]
        if kind == "thinking" and not isinstance(raw.get("thinking"), str):
            self.report(
                path,
                "removed a thinking block without its `thinking` text",
                "its signature covers text that is not there, so the API cannot accept it",
            )
            return []
        if kind == "tool_use":
            return self.tool_use(raw, path)
        if kind == "tool_result":
            return [self.tool_result(raw, path)]
        return [raw]

    def tool_use(self, raw: dict[str, Any], path: str) -> list[Any]:
        block = dict(raw)
        extra: list[Any] = []
        if not isinstance(block.get("id"), str) or not block["id"]:
            block["id"] = f"toolu_imported_{uuid.uuid4().hex[:16]}"
            self.report(
                path,
                f"gave a tool call without an id the id {block['id']}",
                "`tool_use` needs an `id`",
            )
        if not isinstance(block.get("name"), str):
            block["name"] = ""  # the repair names it
        tool_input = block.get("input")
        if isinstance(tool_input, str):
            try:
                parsed = json.loads(tool_input) if tool_input.strip() else {}
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                block["input"] = parsed
                self.report(
                    path + ".input", "parsed the input from its JSON string", "`input` is an object"
                )
                return [block]
        if not isinstance(tool_input, dict):
            block["input"] = {}
            text = tool_input if isinstance(tool_input, str) else None
            shown = (text or json.dumps(tool_input, ensure_ascii=False))[:500]
            self.report(
                path + ".input",
                "replaced an input that is not an object with {} and a note",
                "`input` is an object",
            )
            extra.append(
                {
                    "type": "text",
                    "text": f"[ContextDesk note: the input of tool call {block['id']} was not "
                    f"an object; it was: {shown}]",
                }
            )
        return [block, *extra]

    def tool_result(self, raw: dict[str, Any], path: str) -> dict[str, Any]:
        block = dict(raw)
        if not isinstance(block.get("tool_use_id"), str):
            block["tool_use_id"] = str(block.get("tool_use_id") or "")
            self.report(path, "read the tool_use_id as a string", "`tool_use_id` is a string")
        content = block.get("content", "")
        if content is None:
            block["content"] = ""
            self.report(
                path, "read missing result content as empty", "content is a string or a list"
            )
        elif not isinstance(content, str | list):
            block["content"] = json.dumps(content, ensure_ascii=False)
            self.report(path, "read the result content as text", "content is a string or a list")
        elif isinstance(content, list):
            parts = []
            for k, part in enumerate(content):
                parts += self.block(part, f"{path}.content.{k}")
            block["content"] = parts
        if "is_error" in block and not isinstance(block["is_error"], bool):
            block["is_error"] = bool(block["is_error"])
            self.report(path, "read is_error as a boolean", "`is_error` is true or false")
        return block
