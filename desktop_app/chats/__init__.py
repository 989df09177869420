"""The application layer (docs/architecture.md, "Layers"): Qt-free, the one home of every
action a user takes. `Engine` opens the app's parts and hands out one `Chat` per chat;
a `Chat` has every action on it; a `Turn` is one message being answered. The window
(`ui/`) and the command line (`cli/`) call these and keep only widgets and printing,
and import them from here only — this is the layer's face (`tests/unit/test_layering.py`).
"""

from typing import TYPE_CHECKING, Any

from desktop_app.chats.first_frame import FirstFrame, app_folders
from desktop_app.chats.names import CHAT_FIELDS, NEW_CHAT_TITLE, PROJECT_DEFAULT_FIELDS
from desktop_app.config.logfile import log_unexpected
from desktop_app.config.paths import AppPaths

if TYPE_CHECKING:
    from desktop_app.chats.attachments import (
        API_MAX_EDGE,
        FALLBACK_TOKENS,
        image_size,
        image_tokens,
    )
    from desktop_app.chats.budgets import Budget, month_start
    from desktop_app.chats.changes import Changes, Rows
    from desktop_app.chats.chat import Chat, Imported
    from desktop_app.chats.chat_core import can_retry, repaired, retry_point
    from desktop_app.chats.checking import check_file
    from desktop_app.chats.documents import attach_file, count_document, pages_said, pdf_ways
    from desktop_app.chats.engine import DEMO_MODEL, Engine
    from desktop_app.chats.given_files import read_given_file, shown_name
    from desktop_app.chats.handoff import (
        KEEP_TURNS,
        FactChoice,
        Handoff,
        HandoffPreview,
        HandoffPreviewing,
        first_request_tokens,
        hand_off,
        handoff_links,
        preview_handoff,
        previewing_handoff,
    )
    from desktop_app.chats.heap import give_back_freed_memory
    from desktop_app.chats.imports import SOURCE_NAMES, ImportBatch
    from desktop_app.chats.instance import InstanceLock
    from desktop_app.chats.memory import CompactionPreviewing
    from desktop_app.chats.slow import SlowAction, run_here
    from desktop_app.chats.thinking_preview import thinking_meaning
    from desktop_app.chats.tool_servers import ServerView, api_name, people_name
    from desktop_app.chats.turn import Turn
    from desktop_app.chats.usage import UsageReport, UsageRow, day_of

# Each loads on first use: the window's first frame needs only `FirstFrame` (the engine
# follows it), and a chat's own machinery (the loop's events, requests, token counting)
# loads with the first chat opened.
_LATER = {
    "API_MAX_EDGE": "attachments",
    "FALLBACK_TOKENS": "attachments",
    "image_size": "attachments",
    "image_tokens": "attachments",
    "check_file": "checking",
    "give_back_freed_memory": "heap",
    "read_given_file": "given_files",
    "shown_name": "given_files",
    "InstanceLock": "instance",
    "CompactionPreviewing": "memory",
    "SlowAction": "slow",
    "run_here": "slow",
    "ServerView": "tool_servers",
    "api_name": "tool_servers",
    "people_name": "tool_servers",
    "Budget": "budgets",
    "ImportBatch": "imports",
    "SOURCE_NAMES": "imports",
    "month_start": "budgets",
    "UsageReport": "usage",
    "UsageRow": "usage",
    "day_of": "usage",
    "Changes": "changes",
    "Rows": "changes",
    "DEMO_MODEL": "engine",
    "Engine": "engine",
    "Imported": "chat",
    "Chat": "chat",
    "can_retry": "chat_core",
    "repaired": "chat_core",
    "retry_point": "chat_core",
    "Turn": "turn",
    "thinking_meaning": "thinking_preview",
    "KEEP_TURNS": "handoff",
    "FactChoice": "handoff",
    "Handoff": "handoff",
    "HandoffPreview": "handoff",
    "hand_off": "handoff",
    "attach_file": "documents",
    "count_document": "documents",
    "pdf_ways": "documents",
    "pages_said": "documents",
    "first_request_tokens": "handoff",
    "handoff_links": "handoff",
    "preview_handoff": "handoff",
    "previewing_handoff": "handoff",
    "HandoffPreviewing": "handoff",
}


def __getattr__(name: str) -> Any:
    if name in _LATER:
        import importlib

        return vars(importlib.import_module(f"desktop_app.chats.{_LATER[name]}"))[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "API_MAX_EDGE",
    "CHAT_FIELDS",
    "DEMO_MODEL",
    "FALLBACK_TOKENS",
    "KEEP_TURNS",
    "NEW_CHAT_TITLE",
    "PROJECT_DEFAULT_FIELDS",
    "SOURCE_NAMES",
    "AppPaths",
    "Budget",
    "Changes",
    "Chat",
    "CompactionPreviewing",
    "Engine",
    "FactChoice",
    "FirstFrame",
    "Handoff",
    "HandoffPreview",
    "HandoffPreviewing",
    "ImportBatch",
    "Imported",
    "InstanceLock",
    "Rows",
    "ServerView",
    "SlowAction",
    "Turn",
    "UsageReport",
    "UsageRow",
    "api_name",
    "app_folders",
    "attach_file",
    "can_retry",
    "check_file",
    "count_document",
    "day_of",
    "first_request_tokens",
    "give_back_freed_memory",
    "hand_off",
    "handoff_links",
    "image_size",
    "image_tokens",
    "log_unexpected",
    "month_start",
    "pages_said",
    "pdf_ways",
    "people_name",
    "preview_handoff",
    "previewing_handoff",
    "read_given_file",
    "repaired",
    "retry_point",
    "run_here",
    "shown_name",
    "thinking_meaning",
]
