"""The window's dialogs, and what opens them."""
