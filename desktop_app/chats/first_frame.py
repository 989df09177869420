"""What the window's first frame shows, read without the engine.

A returning user's window paints its frame and chat list before the engine (the store,
the context machinery, the connection: ~100 ms of imports on a slow machine) loads; the
window attaches the engine right after (`MainWindow.attach`). So this reads only files
and one query, with light modules: the window state, the look the settings chose (the
settings themselves load with the engine), and the chat list as the engine would list it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from desktop_app.config.paths import AppPaths, app_paths
from desktop_app.config.stored import read_record
from desktop_app.config.window_state import DEFAULT_LOOK, AppState, read_look

if TYPE_CHECKING:
    from desktop_app.chats.engine import Engine
    from desktop_app.config.settings import Settings
    from desktop_app.storage.chat_info import ChatInfo


def app_folders(home: str | Path | None = None) -> AppPaths:
    """The app's folders, made if missing and private to the user (tightened if not);
    `.data`, where the database lives, is what one window may hold at a time."""
    return app_paths(home).ensure()


class FirstFrame(NamedTuple):  # (a named tuple: `config/window_state.py` says why)
    paths: AppPaths
    demo: bool = False
    state: AppState = AppState()
    look: tuple[str, int] = DEFAULT_LOOK  # Settings' appearance and text size
    # The chat list, newest first; None when it was not read here (a database to upgrade
    # or one that cannot be read: the engine lists it, or says what is wrong).
    chats: list[ChatInfo] | None = None
    projects: Mapping[str, str] = {}  # (a default shared by every frame: never changed)

    @classmethod
    def read(cls, home: str | Path | AppPaths | None = None, *, demo: bool = False) -> FirstFrame:
        """`home` as folders made already (`app_folders`), or where to make them."""
        paths = home if isinstance(home, AppPaths) else app_folders(home)
        listed = _read_list(paths.database)
        return cls(
            paths,
            demo=demo,
            state=read_record(paths.state_file, AppState),
            look=read_look(paths.settings_file),
            chats=listed[0] if listed else None,
            projects=listed[1] if listed else {},
        )

    @classmethod
    def of(cls, engine: Engine, state: AppState) -> FirstFrame:
        """What an engine already open would show first (the chat list: from the engine)."""
        look = (engine.settings.appearance, engine.settings.text_size)
        return cls(engine.paths, demo=engine.demo, state=state, look=look)

    def read_settings(self) -> Settings:
        """The settings, read in full (not for the first frame: they load after it)."""
        from desktop_app.config.settings import Settings, load

        return load(self.paths.settings_file, Settings)


def _read_list(database: Path) -> tuple[list[ChatInfo], dict[str, str]] | None:
    if not database.exists():
        return [], {}  # the first start: no chats yet (and nothing of SQLite loads)
    import sqlite3

    from desktop_app.storage.chat_info import list_chats, project_names
    from desktop_app.storage.version import SCHEMA_VERSION

    try:
        db = sqlite3.connect(database, timeout=1.0)  # (a writer holds readers rarely)
    except sqlite3.Error:
        return None
    try:
        db.row_factory = sqlite3.Row
        if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
            return None  # the engine upgrades it first
        return list_chats(db), project_names(db)
    except sqlite3.Error:
        return None
    finally:
        db.close()
