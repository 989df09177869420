"""Where ContextDesk keeps things: platformdirs for "ContextDesk", or everything under
CONTEXTDESK_HOME (tests and power users rely on it). Nothing is created at import time;
the composition root calls `ensure()`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

APP_NAME = "ContextDesk"
HOME_VARIABLE = "CONTEXTDESK_HOME"


class AppPaths(NamedTuple):  # (a first start's first frame makes no dataclass)
    data: Path  # the database, exports the app makes for itself
    config: Path  # settings.json (the user's choices)
    state: Path  # state.json (what the app remembers: window geometry, last chat)
    logs: Path

    @property
    def database(self) -> Path:
        return self.data / "contextdesk.sqlite3"

    @property
    def settings_file(self) -> Path:
        return self.config / "settings.json"

    @property
    def state_file(self) -> Path:
        return self.state / "state.json"

    @property
    def log_file(self) -> Path:
        return self.logs / "contextdesk.log"

    def ensure(self) -> AppPaths:
        """Make the folders (private to the user), and tighten them if they are not."""
        from desktop_app.config.privacy import PRIVATE_FOLDER, make_private

        folders = (self.data, self.config, self.state, self.logs)
        for folder in folders:
            folder.mkdir(mode=PRIVATE_FOLDER, parents=True, exist_ok=True)
        make_private(folders)
        return self


def app_paths(home: str | os.PathLike[str] | None = None) -> AppPaths:
    """`home` (the --home option), else CONTEXTDESK_HOME, else the platform's folders."""
    root = home or os.environ.get(HOME_VARIABLE)
    if root:
        base = Path(root).expanduser().resolve()
        return AppPaths(base / "data", base / "config", base / "state", base / "logs")
    import platformdirs

    dirs = platformdirs.PlatformDirs(APP_NAME, appauthor=False)
    return AppPaths(
        Path(dirs.user_data_dir),
        Path(dirs.user_config_dir),
        Path(dirs.user_state_dir),
        Path(dirs.user_log_dir),
    )
