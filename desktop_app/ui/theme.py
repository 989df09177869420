"""Colours and fonts: the system's light or dark scheme, and one colour per context state.

The state colours are the product's main signal ("is this still in the model's
context?"), so each has a light and a dark variant with enough contrast on either
background; everything else comes from the palette, so the window follows the system.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

# state → (on a light background, on a dark background)
_STATE_COLOURS = {
    "in context": ("#2e7d32", "#81c784"),
    "summarized": ("#6a1b9a", "#ce93d8"),
    "trimmed": ("#b35c00", "#ffb74d"),
    "excluded": ("#616161", "#a8a8a8"),
    "cleared": ("#6d4c41", "#bcaaa4"),
    "not sent": ("#c62828", "#ef9a9a"),
    "streaming": ("#1565c0", "#90caf9"),
    "": ("#616161", "#a8a8a8"),  # not counted yet
}

STATUS_COLOURS = {
    "streaming": ("#1565c0", "#90caf9"),
    "interrupted": ("#b35c00", "#ffb74d"),
    "error": ("#c62828", "#ef9a9a"),
}


def is_dark(palette: QPalette | None = None) -> bool:
    palette = palette or QGuiApplication.palette()
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def state_colour(state: str, dark: bool) -> QColor:
    """The colour of a context state label ("summarized in #2" → summarized)."""
    for name, pair in _STATE_COLOURS.items():
        if name and state.startswith(name):
            return QColor(pair[dark])
    return QColor(_STATE_COLOURS[""][dark])


def status_colour(status: str, dark: bool) -> QColor:
    pair = STATUS_COLOURS.get(status)
    return QColor(pair[dark]) if pair else QGuiApplication.palette().color(QPalette.ColorRole.Text)


def monospace() -> QFont:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


_chosen: dict[str, str | int] = {"appearance": "system", "text_size": 0}  # Settings' (`choose`)
_system_points: list[float] = []  # the system's text size, read once


def apply_system_scheme(app: QApplication) -> None:
    """Fusion everywhere (it draws the same on every platform and honours palettes), with a
    dark palette when Settings or — by default — the system ask for one; re-applied when
    the system switches."""
    app.setStyle("Fusion")
    appearance = _chosen["appearance"]
    system_dark = app.styleHints().colorScheme() == Qt.ColorScheme.Dark
    dark = appearance == "dark" or (appearance == "system" and system_dark)
    app.setPalette(_dark_palette() if dark else app.style().standardPalette())


def chosen() -> tuple[str, int]:
    """The appearance and text size in use (as `choose` was last told)."""
    return str(_chosen["appearance"]), int(_chosen["text_size"])


def choose(app: QApplication, appearance: str, text_size: int) -> None:
    """Use Settings' appearance (system, light, dark) and text size (0: the system's)."""
    _chosen.update(appearance=appearance, text_size=text_size)
    apply_system_scheme(app)
    font = app.font()
    if not _system_points:
        _system_points.append(font.pointSizeF())
    font.setPointSizeF(float(text_size) if text_size else _system_points[0])
    app.setFont(font)


def _dark_palette() -> QPalette:
    palette = QPalette()
    colours = {
        QPalette.ColorRole.Window: "#202124",
        QPalette.ColorRole.WindowText: "#e8eaed",
        QPalette.ColorRole.Base: "#17181a",
        QPalette.ColorRole.AlternateBase: "#26282b",
        QPalette.ColorRole.Text: "#e8eaed",
        QPalette.ColorRole.Button: "#2d2f33",
        QPalette.ColorRole.ButtonText: "#e8eaed",
        QPalette.ColorRole.Highlight: "#3d6fb4",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.ToolTipBase: "#2d2f33",
        QPalette.ColorRole.ToolTipText: "#e8eaed",
        QPalette.ColorRole.PlaceholderText: "#9aa0a6",
        QPalette.ColorRole.Link: "#8ab4f8",
        QPalette.ColorRole.Mid: "#3c4043",
    }
    for role, colour in colours.items():
        palette.setColor(role, QColor(colour))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#80868b"))
    return palette
