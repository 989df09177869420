"""What the window's first frame reads: where the window was (`AppState`, in its own
file), and the look Settings chose (`read_look`: two values of the settings file, read
raw). The settings themselves, and their checks, load after the first paint
(`config/settings.py`); their appearance values are declared here, once.

The records the first frame reads are named tuples (`AppState`, `FirstFrame`, `AppPaths`,
`Bounds`): a frozen dataclass costs ~0.7 ms to make, and the `dataclasses` module 1 ms
to load, which a first start's first paint would wait for."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from desktop_app.config.stored import same_type
from desktop_app.context.bounds import TEXT_SIZE

APPEARANCES = ("system", "light", "dark")
DEFAULT_LOOK = ("system", 0)


class AppState(NamedTuple):
    window_geometry: str = ""  # base64 of QWidget.saveGeometry()
    splitter_sizes: tuple[int, ...] = ()
    last_chat_id: str = ""
    chat_list_hidden: bool = False  # Ctrl+B
    context_view: bool = False  # every block's chip in the conversation (View → Context view)
    last_folder: str = ""  # where the last export or import was (file dialogs start there)


def read_look(settings_file: Path) -> tuple[str, int]:
    """The appearance and text size the settings file chose; a value the settings would
    refuse (they say why, when they load) is the default here too."""
    try:
        text = settings_file.read_text(encoding="utf-8")
    except (OSError, ValueError):  # none yet (a first start), or not UTF-8 (set aside later)
        return DEFAULT_LOOK
    import json  # (only now: a first start's first paint loads none of it)

    try:
        data = json.loads(text)
    except ValueError:
        return DEFAULT_LOOK
    if not isinstance(data, dict):
        return DEFAULT_LOOK
    appearance = data.get("appearance", DEFAULT_LOOK[0])
    size = data.get("text_size", DEFAULT_LOOK[1])
    return (
        appearance if appearance in APPEARANCES else DEFAULT_LOOK[0],
        size if same_type(size, 0) and not TEXT_SIZE.why_not(size) else DEFAULT_LOOK[1],
    )
