"""Past chats as a visible tool: `search_chats`, over the full-text index, offered only
when the chat (or its project's defaults) turns it on. Unlike the apps that let the model
read past chats unseen, each call is an ordinary tool step of Claude's turn — the query,
the chats and messages it returned, their tokens — that asks first like any tool that
reads beyond the chat, is limited to the project when the setting says so, and never
reads a chat in the trash (the index leaves those out). What it brought is a tool result:
excluded, cleared or pinned like any other."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from desktop_app.core.errors import ContextDeskError
from desktop_app.core.ports import ApprovalPolicy
from desktop_app.storage.search import MARK_END, MARK_START
from desktop_app.tools.registry import Tool, ToolContext

if TYPE_CHECKING:
    from collections.abc import Collection

    from desktop_app.storage.store import ChatStore

MOST = 8  # results a call returns
AROUND = 300  # characters of a message either side of the match


def search_chats_tool(
    store: ChatStore, chat_id: str, within: Collection[str] | None, scope: str
) -> Tool:
    """The tool for chat `chat_id`: other chats' messages (only those of `within`, when
    given — the project's chats), newest first. `scope` words the limit for the asking."""

    def search(args: dict[str, Any], ctx: ToolContext) -> str:
        query = str(args["query"]).strip()
        limit = min(MOST, int(args.get("limit") or MOST))
        found = []
        for hit in store.search(query, limit=200, around=AROUND):
            if hit.message_id is None or hit.chat_id == chat_id:
                continue
            if within is not None and hit.chat_id not in within:
                continue
            found.append(hit)
            if len(found) == limit:
                break
        if not found:
            raise ContextDeskError("Nothing found", f"No message of {scope} holds {query!r}.")
        lines = [f"{len(found)} message(s) of {scope} hold “{query}”, newest first:"]
        for n, hit in enumerate(found, 1):
            text = hit.snippet.replace(MARK_START, "").replace(MARK_END, "")
            lines.append(
                f"[{n}] chat “{hit.chat_title}” ({hit.chat_id}), message #{hit.position + 1}:"
            )
            lines.append(text)
        return "\n".join(lines)

    def describe(args: dict[str, Any], ctx: ToolContext) -> str:
        return (
            f"Search {scope} for “{args.get('query', '')}” (its matches join this chat's context)"
        )

    return Tool(
        "search_chats",
        f"Search {scope} (not this one) for a word or phrase; returns the matching messages "
        "with the text around each match, newest first. Use it when the user refers to "
        "something from another conversation.",
        {
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 2, "description": "Words to find."},
                "limit": {"type": "integer", "minimum": 1, "maximum": MOST},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        search,
        policy=ApprovalPolicy.ASK,
        describe=describe,
    )


def scope_words(mode: str, project_name: str | None) -> str:
    return (
        f"the other chats of the project “{project_name}”"
        if mode == "project"
        else ("your other chats")
    )
