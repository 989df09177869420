"""The window's start: its menus, and what the first frame hands on to the engine."""
