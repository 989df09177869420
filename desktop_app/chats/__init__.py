"""The application layer (docs/architecture.md, "Layers"): Qt-free, the one home of every
action a user takes. `Engine` opens the app's parts and hands out one `Chat` per chat;
a `Chat` has every action on it; a `Turn` is one message being answered. The window
(`ui/`) and the command line (`cli.py`) call these and keep only widgets and printing.
"""

from desktop_app.chats.chat import NEW_CHAT_TITLE, Chat, can_retry, repaired
from desktop_app.chats.engine import DEMO_MODEL, Engine, Imported, data_folder
from desktop_app.chats.turn import Turn
from desktop_app.config.logfile import log_unexpected

__all__ = [
    "DEMO_MODEL",
    "NEW_CHAT_TITLE",
    "Chat",
    "Engine",
    "Imported",
    "Turn",
    "can_retry",
    "data_folder",
    "log_unexpected",
    "repaired",
]
