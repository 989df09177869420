"""ContextDesk's visual language, in one place: warm neutrals and one accent for light and
dark, a type scale that follows the text-size setting, spacing on a 4 px grid, and one
colour per context section and per context state (docs/visual-language.md shows them).

The state colours are the product's main signal ("is this still in the model's
context?"), so each has a light and a dark variant with enough contrast on either
page; the section colours tell the parts of a request apart wherever they are drawn
(the meter, its legend). Everything else comes from the palette built here, so every
widget Fusion draws takes the same tones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from desktop_app.ui.qt_later import Qt

if TYPE_CHECKING:
    from PySide6.QtGui import QFont

# -- tones: (light, dark) -----------------------------------------------------------------
# Warm neutrals, as the pages of Claude's own apps are, not Fusion's stock grey; one accent
# (Claude's terracotta) for what acts: Send, the selection, focus.
TONES = {
    "window": ("#f3f1ea", "#1c1b19"),  # chrome: the sidebar, the panel, menus
    "page": ("#faf9f5", "#262624"),  # the conversation and every input (Qt's Base)
    "raised": ("#ebe8df", "#302f2c"),  # buttons, alternate rows, empty bars
    "border": ("#dcd8cc", "#3f3d38"),
    "text": ("#1f1e1b", "#ece9e2"),
    "muted": ("#6b675e", "#a39f95"),  # meta lines, placeholders
    "accent": ("#c96442", "#d97757"),
    "accent_down": ("#a9523a", "#b8644a"),
    "hover": ("#ebe8df", "#302f2c"),
    "card": ("#fbf4ea", "#2b2723"),  # a question waiting for the user
    "card_border": ("#e3c9a8", "#6b5540"),
    "code": ("#f1eee6", "#1f1e1c"),  # fenced code's page
    "code_inline": ("#ebe7dc", "#34322e"),
    "rule": ("#d6d1c4", "#46433d"),  # a table's lines
    "link": ("#a34a2c", "#e8a084"),
    "cache_warm": ("#2e7d32", "#81c784"),  # the prompt cache holds the chat's prefix
}

# -- type: a role's size as a share of the text size (Settings → Text size) -------------
TYPE_SCALE = {
    "display": 1.8,  # one figure to read first: the context panel's total
    "title": 1.2,
    "heading": 1.0,
    "body": 1.0,
    "meta": 0.86,
    "mono": 0.92,
}
_BOLD_ROLES = ("display", "title", "heading")

# -- space: every margin and gap a multiple of this ----------------------------------------
GRID = 4


def space(steps: int) -> int:
    """`steps` grid units, in pixels (margins, gaps, paddings)."""
    return steps * GRID


def tone(name: str, dark: bool) -> QColor:
    return QColor(TONES[name][dark])


def font(base: QFont, role: str) -> QFont:
    """`base` (a widget's font: the text size chosen) at a role of the type scale; "mono"
    is the system's fixed-width font."""
    from PySide6.QtGui import QFont

    scaled = monospace() if role == "mono" else QFont(base)
    if TYPE_SCALE[role] != 1 or role == "mono":
        scaled.setPointSizeF(base.pointSizeF() * TYPE_SCALE[role])
    if role in _BOLD_ROLES:
        scaled.setBold(True)
    return scaled


# -- a request's sections: (light, dark), each ≥ 3:1 against the page -----------------------
SECTION_COLOURS = {
    "project instructions": ("#4656a8", "#8e9be8"),
    "project facts": ("#1d6f63", "#63c2b2"),
    "project knowledge": ("#7b5a38", "#cda57c"),
    "system": ("#5966c0", "#a0aaf0"),
    "facts": ("#22877a", "#7fd3c4"),
    "tools": ("#8a6a4e", "#cbb096"),
    "summary": ("#8848b5", "#c99be8"),
    "messages": ("#2f74b5", "#7fb3e8"),
    "reserved output": ("#b86a12", "#e9b062"),
}


def section_colour(section: str, dark: bool) -> QColor | None:
    """The colour a request's section is drawn in (None: free room, drawn as the bar)."""
    pair = SECTION_COLOURS.get(section)
    return QColor(pair[dark]) if pair else None


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


# The conversation's own look: one page on the base colour, a rounded composer with its
# buttons inside, the accent on Send (its colours are `TONES`). Set on the widgets around
# the messages (header, composer, hover bar, questions) and never on the message list
# or its parents: a style sheet above the list would slow every layout of it (~20 ms
# to open a long chat). All are made after the first frame.

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
QToolButton#chatCache {{
    border: 2px solid transparent; border-radius: 6px; padding: 2px 6px; color: {muted};
}}
QToolButton#chatCache[cacheState="warm"] {{ color: {cache_warm}; }}
QToolButton#chatCache::menu-indicator, QToolButton#attachmentCard::menu-indicator {{
    image: none; width: 0;
}}
QToolButton#chatCache:hover {{ background: {hover}; }}
QToolButton#chatCache:focus {{ border-color: palette(highlight); }}
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
    return CONVERSATION.format(**{k: v[dark] for k, v in TONES.items()})


def is_dark(palette: QPalette | None = None) -> bool:
    """Is this palette (the application's, by default) a dark one? The application's
    answer is kept from when its palette was last set here (every row's layout asks)."""
    if palette is None and _scheme:
        return _scheme[0]
    palette = palette or QGuiApplication.palette()
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def role_colour(claude: bool, dark: bool) -> QColor:
    """The round mark before a message's speaker: Claude's accent, or a quiet grey."""
    return tone("accent" if claude else "muted", dark)


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
    """Fusion everywhere (it draws the same on every platform and honours palettes), in
    ContextDesk's light or dark tones as Settings or — by default — the system ask;
    re-applied when the system switches.

    `first_frame`: before the window's first frame, the application made with Fusion
    already (`make_app`), the system's scheme is read from its palette. Asking Qt for it
    (`colorScheme()`) or for the style would make Python types of ~100 enums first
    (~50 ms); the window applies the scheme in full right after."""
    appearance = _chosen["appearance"]
    if first_frame:
        dark = appearance == "dark" or (appearance == "system" and is_dark(app.palette()))
    else:
        if app.style().name() != "fusion":
            app.setStyle("Fusion")
        system_dark = app.styleHints().colorScheme() == Qt.ColorScheme.Dark
        dark = appearance == "dark" or (appearance == "system" and system_dark)
    tones = palette_for(dark)
    if tones != app.palette():  # (after the first frame, mostly: nothing to repaint)
        app.setPalette(tones)
    _scheme[:] = [dark]


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


def palette_for(dark: bool) -> QPalette:
    """The application's palette from `TONES` (Fusion draws every stock widget with it)."""
    pal = QPalette()
    role, group = QPalette.ColorRole, QPalette.ColorGroup
    light_edge, dark_edge = ("#ffffff", "#aaa597") if not dark else ("#4a4843", "#121110")
    colours = {
        role.Window: "window",
        role.WindowText: "text",
        role.Base: "page",
        role.AlternateBase: "raised",
        role.Text: "text",
        role.Button: "raised",
        role.ButtonText: "text",
        role.BrightText: "page",
        role.Highlight: "accent",
        role.ToolTipBase: "page",
        role.ToolTipText: "text",
        role.PlaceholderText: "muted",
        role.Link: "link",
        role.LinkVisited: "link",
        role.Mid: "border",
        role.Midlight: "raised",
    }
    for at, name in colours.items():
        pal.setColor(at, tone(name, dark))
    pal.setColor(role.HighlightedText, QColor("#ffffff"))
    pal.setColor(role.Light, QColor(light_edge))
    pal.setColor(role.Dark, QColor(dark_edge))
    pal.setColor(role.Shadow, QColor("#000000" if dark else "#8a867a"))
    for at in (role.Text, role.ButtonText, role.WindowText):
        pal.setColor(group.Disabled, at, tone("muted", dark))
    return pal
