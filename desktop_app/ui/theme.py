"""Colours and fonts: the system's light or dark scheme, and one colour per context state.

The state colours are the product's main signal ("is this still in the model's
context?"), so each has a light and a dark variant with enough contrast on either
background; everything else comes from the palette, so the window follows the system.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from desktop_app.ui.qt_later import Qt

if TYPE_CHECKING:
    from PySide6.QtGui import QFont

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
    "notice": ("#1565c0", "#90caf9"),  # a change said once (not an error)
}


# The conversation's own look (light, dark): one page on the base colour, a rounded
# composer with its buttons inside, Claude's accent on Send. Set on the widgets around
# the messages (header, composer, hover bar, questions) and never on the message list
# or its parents: a style sheet above the list would slow every layout of it (~20 ms
# to open a long chat). All are made after the first frame.
_CONVERSATION_COLOURS = {
    "border": ("#dcdad3", "#3c4043"),
    "accent": ("#c96442", "#d97757"),
    "accent_down": ("#a9523a", "#b8644a"),
    "hover": ("#eeede8", "#2d2f33"),
    "card": ("#fbf6ee", "#2a2622"),
    "card_border": ("#e3c9a8", "#6b5540"),
}

CONVERSATION = """
QWidget#chatHeader {{ background: palette(base); border-bottom: 1px solid {border}; }}
QFrame#composerBox {{
    background: palette(base); border: 1px solid {border}; border-radius: 14px; padding: 1px;
}}
QFrame#composerBox[focused="true"] {{ border: 2px solid palette(highlight); padding: 0; }}
QFrame#composerBox QPlainTextEdit {{ background: transparent; border: none; }}
QPushButton#send {{
    background: {accent}; color: white; border: 2px solid transparent; border-radius: 8px;
    padding: 3px 14px; font-weight: 600;
}}
QPushButton#send:pressed {{ background: {accent_down}; }}
QToolButton#attach, QToolButton#contextViewToggle, QToolButton#cancelEdit {{
    border: 2px solid transparent; border-radius: 6px; padding: 2px 6px;
}}
QToolButton#chatThinking {{
    border: 2px solid transparent; border-radius: 6px; padding: 2px 18px 2px 6px;
}}
QToolButton#chatThinking::menu-indicator {{
    subcontrol-origin: padding; subcontrol-position: center right; right: 4px;
}}
QToolButton#chatThinking:hover {{ background: {hover}; }}
QPushButton#send:focus, QToolButton#attach:focus, QToolButton#contextViewToggle:focus,
QToolButton#cancelEdit:focus, QToolButton#chatThinking:focus {{
    border-color: palette(highlight);
}}
QToolButton#attach:hover, QToolButton#contextViewToggle:hover,
QToolButton#cancelEdit:hover {{ background: {hover}; }}
QToolButton#contextViewToggle:checked {{ background: {hover}; font-weight: 600; }}
QToolButton#attachmentCard {{
    border: 1px solid {border}; border-radius: 8px; padding: 3px 8px; background: {hover};
}}
QFrame#approvalCard {{
    background: {card}; border: 1px solid {card_border}; border-radius: 12px;
}}
QWidget#messageActions {{
    background: palette(base); border: 1px solid {border}; border-radius: 6px;
}}
QWidget#messageActions QToolButton {{ border: none; border-radius: 4px; padding: 2px 6px; }}
QWidget#messageActions QToolButton:hover {{ background: {hover}; }}
QWidget#editingBar {{ background: {hover}; border-radius: 8px; }}
"""


def conversation_sheet(dark: bool) -> str:
    return CONVERSATION.format(**{k: v[dark] for k, v in _CONVERSATION_COLOURS.items()})


def is_dark(palette: QPalette | None = None) -> bool:
    """Is this palette (the application's, by default) a dark one? The application's
    answer is kept from when its palette was last set here (every row's layout asks)."""
    if palette is None and _scheme:
        return _scheme[0]
    palette = palette or QGuiApplication.palette()
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def role_colour(claude: bool, dark: bool) -> QColor:
    """The round mark before a message's speaker: Claude's accent, or a quiet grey."""
    if claude:
        return QColor(_CONVERSATION_COLOURS["accent"][dark])
    return QColor("#8a8f98" if not dark else "#5f6368")


def state_colour(state: str | None, dark: bool) -> QColor:
    """The colour of a block's context state (`BlockState`, "streaming", or None: not
    counted yet)."""
    return QColor(_STATE_COLOURS.get(state or "", _STATE_COLOURS[""])[dark])


def status_colour(status: str, dark: bool) -> QColor:
    pair = STATUS_COLOURS.get(status)
    return QColor(pair[dark]) if pair else QGuiApplication.palette().color(QPalette.ColorRole.Text)


def monospace() -> QFont:
    from PySide6.QtGui import QFontDatabase  # (not for the first frame: ~40 enum members)

    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


_chosen: dict[str, str | int] = {"appearance": "system", "text_size": 0}  # Settings' (`choose`)
_scheme: list[bool] = []  # is the application's palette dark (once `apply_system_scheme` ran)
_system_points: list[float] = []  # the system's text size, read once


def apply_system_scheme(app: QApplication, *, first_frame: bool = False) -> None:
    """Fusion everywhere (it draws the same on every platform and honours palettes), with a
    dark palette when Settings or — by default — the system ask for one; re-applied when
    the system switches.

    `first_frame`: before the window's first frame, the application made with Fusion
    already (`make_app`), the system's scheme is read from its palette. Asking Qt for it
    (`colorScheme()`) or for Fusion's own palette (`style()`) would make Python types of
    ~100 enums first (~50 ms); the window applies the scheme in full right after."""
    appearance = _chosen["appearance"]
    dark = appearance == "dark" or (appearance == "system" and is_dark(app.palette()))
    if first_frame and (dark or not is_dark(app.palette())):  # (light on a dark system:
        if dark:  # Fusion's light palette is needed, in full)
            app.setPalette(_dark_palette())
        _scheme[:] = [dark]
        return
    if app.style().name() != "fusion":
        app.setStyle("Fusion")
    system_dark = app.styleHints().colorScheme() == Qt.ColorScheme.Dark
    dark = appearance == "dark" or (appearance == "system" and system_dark)
    palette = _dark_palette() if dark else app.style().standardPalette()
    if palette != app.palette():  # (the first frame's, mostly: nothing to repaint)
        app.setPalette(palette)
    _scheme[:] = [is_dark(app.palette())]


def chosen() -> tuple[str, int]:
    """The appearance and text size in use (as `choose` was last told)."""
    return str(_chosen["appearance"]), int(_chosen["text_size"])


def choose(
    app: QApplication, appearance: str, text_size: int, *, first_frame: bool = False
) -> None:
    """Use Settings' appearance (system, light, dark) and text size (0: the system's)."""
    _chosen.update(appearance=appearance, text_size=text_size)
    apply_system_scheme(app, first_frame=first_frame)
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
