"""The application layer (docs/architecture.md, "Layers"): Qt-free, the one home of every
action a user takes. `Engine` opens the app's parts and hands out one `Chat` per chat;
a `Chat` has every action on it; a `Turn` is one message being answered. The window
(`ui/`) and the command line (`cli/`) call these and keep only widgets and printing.
"""

from typing import TYPE_CHECKING, Any

from desktop_app.chats.first_frame import FirstFrame, data_folder
from desktop_app.chats.names import NEW_CHAT_TITLE
from desktop_app.config.logfile import log_unexpected

if TYPE_CHECKING:
    from desktop_app.chats.changes import Changes, Rows
    from desktop_app.chats.chat import Chat, Imported
    from desktop_app.chats.chat_core import can_retry, repaired, retry_point
    from desktop_app.chats.engine import DEMO_MODEL, Engine
    from desktop_app.chats.thinking_preview import thinking_meaning
    from desktop_app.chats.turn import Turn

# Each loads on first use: the window's first frame needs only `FirstFrame` (the engine
# follows it), and a chat's own machinery (the loop's events, requests, token counting)
# loads with the first chat opened.
_LATER = {
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
}


def __getattr__(name: str) -> Any:
    if name in _LATER:
        import importlib

        return vars(importlib.import_module(f"desktop_app.chats.{_LATER[name]}"))[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEMO_MODEL",
    "NEW_CHAT_TITLE",
    "Changes",
    "Chat",
    "Engine",
    "FirstFrame",
    "Imported",
    "Rows",
    "Turn",
    "can_retry",
    "data_folder",
    "log_unexpected",
    "repaired",
    "retry_point",
    "thinking_meaning",
]
