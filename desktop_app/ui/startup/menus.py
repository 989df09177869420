"""The window's menu bar (`WindowMenus`): every action, in the menus a desktop app has.

The first frame shows the menus' titles, and of their ~25 actions only the one it acts
on (the chat list's, shown or folded); the others (~1.5 ms) are made when first needed
(`fill`): a menu opened, an action asked for, the engine attached. Before the engine
they are disabled and without keys anyway: making a key sequence makes `Qt`'s enums,
which the first frame does without (`desktop_app/ui/qt_later.py`); `enable` gives them
their keys once the engine is here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from PySide6.QtGui import QAction

if TYPE_CHECKING:
    from PySide6.QtGui import QKeySequence
    from PySide6.QtWidgets import QMenuBar, QWidget

    from desktop_app.ui.chat_list.controller import ChatListController
    from desktop_app.ui.conversation.pane import ConversationPane
    from desktop_app.ui.dialogs.window_dialogs import WindowDialogs

    ChatAct = Callable[[ChatListController, str], object]  # (the list's actions, a chat id)

    # Keys as text ("Ctrl" is Command on macOS), or a function giving them (called by
    # `enable`, after the first frame: QKeySequence's class makes its ~100 enum members).
    Shortcut = str | Callable[[], QKeySequence | str]


class MenuWindow(Protocol):
    """What the menus ask of the window (`MainWindow`)."""

    def menuBar(self) -> QMenuBar: ...

    def close(self) -> bool: ...

    def new_chat(self) -> object: ...

    def import_chat(self) -> object: ...

    def open_settings(self) -> None: ...

    @property
    def dialogs(self) -> WindowDialogs: ...  # (there once the engine is: so are the actions)

    def shown_does(self, act: Callable[[ConversationPane], object]) -> Callable[[], None]: ...

    def shown_chat_does(self, act: ChatAct) -> Callable[[], None]: ...

    def rename_chat(self) -> None: ...

    def search_chats(self) -> None: ...

    def show_archive(self) -> None: ...

    def show_chat_list(self, shown: bool) -> None: ...

    def set_context_view(self, on: bool) -> None: ...


class WindowMenus:
    def __init__(self, window: MenuWindow, parent: QWidget, context_view: bool) -> None:
        self._window = window
        self._parent = parent
        self._context_view = context_view
        self._filled = False
        self._actions: dict[str, QAction] = {}  # by name, those others ask for (`fill`)
        self._enabled = False  # (`enable`: the engine is here)
        self.shortcuts: list[tuple[QAction, Shortcut]] = []  # given by `enable`
        bar = window.menuBar()
        self.menus = [bar.addMenu(title) for title in ("&File", "&Chat", "&View", "&Help")]
        for menu in self.menus:
            menu.aboutToShow.connect(self.fill)
        # The first frame's own: it shows or folds the chat list by it (`WindowFrame`)
        self.chat_list_action = self._action("C&hat list", "Ctrl+B", None)
        self.chat_list_action.setCheckable(True)
        self.chat_list_action.setChecked(True)  # before it is connected: the state decides
        self.chat_list_action.toggled.connect(window.show_chat_list)
        self.chat_list_action.setEnabled(False)  # (until the engine is here: `enable`)

    # The actions others act on or through (made by `fill`: asked for, they are made then)

    @property
    def new_action(self) -> QAction:
        return self._named("new")

    @property
    def stop_action(self) -> QAction:
        return self._named("stop")

    @property
    def retry_action(self) -> QAction:
        return self._named("retry")

    @property
    def context_action(self) -> QAction:
        return self._named("context")

    @property
    def context_view_action(self) -> QAction:
        return self._named("context_view")

    def _named(self, name: str) -> QAction:
        self.fill()
        return self._actions[name]

    def fill(self) -> None:
        """The menus' actions, disabled until the engine is here (once)."""
        if self._filled:
            return
        self._filled = True
        window = self._window
        file_menu, chat_menu, view_menu, help_menu = self.menus
        named = self._actions
        named["new"] = self._action("&New chat", "Ctrl+N", window.new_chat)
        file_menu.addAction(named["new"])
        for text, keys, fmt in (
            ("Export as &JSON…", "Ctrl+E", "json"),
            ("Export as &Markdown…", "Ctrl+Shift+E", "md"),
        ):
            export = window.shown_chat_does(functools.partial(_export, fmt=fmt))
            file_menu.addAction(self._action(text, keys, export))
        file_menu.addAction(self._action("&Import chats…", "Ctrl+O", window.import_chat))
        file_menu.addSeparator()
        file_menu.addAction(self._action("&Settings…", _settings_keys, window.open_settings))
        file_menu.addAction(
            self._action(
                "&Tools and MCP servers…", "Ctrl+Shift+T", lambda: window.dialogs.open_tools()
            )
        )
        file_menu.addAction(self._action("&Quit", "Ctrl+Q", window.close))
        # Esc stops the reply wherever the focus is (the draft, the list, a button);
        # the search and find boxes claim it first to clear or close themselves.
        named["stop"] = self._action("&Stop reply", "Esc", window.shown_does(_stop))
        chat_menu.addAction(named["stop"])
        named["retry"] = self._action("&Retry", "Ctrl+R", window.shown_does(_retry))
        chat_menu.addAction(named["retry"])
        chat_menu.addAction(self._action("&Find in chat…", "Ctrl+F", window.shown_does(_find)))
        chat_menu.addSeparator()
        chat_menu.addAction(self._action("Re&name…", "F2", window.rename_chat))
        chat_menu.addAction(
            self._action("&Pin or unpin", "Ctrl+Shift+P", window.shown_chat_does(_toggle_pinned))
        )
        chat_menu.addAction(
            self._action("&Archive", "Ctrl+Shift+A", window.shown_chat_does(_toggle_archived))
        )
        chat_menu.addAction(
            self._action("Pro&ject…", "Ctrl+Shift+J", lambda: window.dialogs.open_project())
        )
        chat_menu.addAction(
            self._action(
                "Continue in a &new chat…", "Ctrl+Shift+N", lambda: window.dialogs.open_handoff()
            )
        )
        chat_menu.addAction(
            self._action("Move to &trash", "Ctrl+Shift+Backspace", window.shown_chat_does(_trash))
        )
        named["context"] = self._action("&Context panel", "Ctrl+Shift+C", None)
        view_menu.addAction(named["context"])  # ContextPlacement acts on it
        view_menu.addAction(self.chat_list_action)
        context_view = named["context_view"] = self._action("Context &view", "Ctrl+Shift+D", None)
        context_view.setCheckable(True)
        context_view.setChecked(self._context_view)
        context_view.toggled.connect(window.set_context_view)
        view_menu.addAction(context_view)
        view_menu.addSeparator()
        view_menu.addAction(self._action("&Search chats", "Ctrl+K", window.search_chats))
        view_menu.addAction(self._action("A&rchived chats", "Ctrl+Shift+H", window.show_archive))
        view_menu.addAction(
            self._action("&Trash…", "Ctrl+Shift+Delete", lambda: window.dialogs.open_trash())
        )
        view_menu.addAction(
            self._action("&Usage…", "Ctrl+Shift+U", lambda: window.dialogs.open_usage())
        )
        help_menu.addAction(
            self._action("&Keyboard shortcuts", "Ctrl+/", lambda: window.dialogs.open_shortcuts())
        )
        for action in self.actions():
            action.setEnabled(self._enabled)

    def actions(self) -> list[QAction]:
        self.fill()
        return [action for menu in self.menus for action in menu.actions()]

    def enable(self, on: bool = True) -> None:
        """The engine is here: every action works, with its key."""
        self.fill()
        self._enabled = on
        if on:
            for action, keys in self.shortcuts:
                action.setShortcut(keys if isinstance(keys, str) else keys())
        for action in self.actions():
            action.setEnabled(on)

    def _action(
        self, text: str, shortcut: Shortcut | None, slot: Callable[[], object] | None
    ) -> QAction:
        """A menu action, without its shortcut until `enable`. (Its text set apart: given
        with it, Qt for Python would try QAction's icon overload, making QIcon's enums.)"""
        action = QAction(self._parent)
        action.setText(text)
        if shortcut is not None:
            self.shortcuts.append((action, shortcut))
        if slot is not None:
            action.triggered.connect(lambda _checked=False: slot())
        return action


def _settings_keys() -> QKeySequence | str:
    """The platform's Preferences key, or Ctrl+, where it has none (Linux, Windows)."""
    from PySide6.QtGui import QKeySequence

    preferences = QKeySequence.keyBindings(QKeySequence.StandardKey.Preferences)
    return preferences[0] if preferences else "Ctrl+,"


def _stop(pane: ConversationPane) -> None:
    pane.stop()


def _retry(pane: ConversationPane) -> None:
    pane.retry()


def _find(pane: ConversationPane) -> None:
    pane.open_find()


def _toggle_pinned(chats: ChatListController, chat_id: str) -> None:
    chats.toggle_pinned(chat_id)


def _toggle_archived(chats: ChatListController, chat_id: str) -> None:
    chats.toggle_archived(chat_id)


def _trash(chats: ChatListController, chat_id: str) -> None:
    chats.trash(chat_id)


def _export(chats: ChatListController, chat_id: str, *, fmt: str) -> None:
    chats.export(chat_id, fmt)
