"""ContextDesk's visual language (ui/theme.py, docs/visual-language.md): its own tones in
light and dark, legible colours for every part of a request, and a type scale that
follows the text size the user picks."""

from __future__ import annotations

from functools import partial

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from desktop_app.chats import Engine
from desktop_app.context.plan import Section
from desktop_app.ui import theme
from desktop_app.ui.gui import make_app
from desktop_app.ui.main_window import MainWindow
from tests.ui.conftest import open_demo


def contrast(a: QColor, b: QColor) -> float:
    """WCAG 2 contrast ratio of two colours."""

    def luminance(colour: QColor) -> float:
        def channel(value: float) -> float:
            return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

        r, g, b = (channel(c) for c in (colour.redF(), colour.greenF(), colour.blueF()))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_light_and_dark_are_our_warm_tones_not_fusions_grey() -> None:
    app = make_app()
    try:
        for appearance, dark in (("light", False), ("dark", True)):
            theme.choose(app, appearance, 0)
            palette = app.palette()
            assert theme.is_dark() is dark
            for role, tone in (
                (QPalette.ColorRole.Window, "window"),
                (QPalette.ColorRole.Base, "page"),
                (QPalette.ColorRole.Text, "text"),
                (QPalette.ColorRole.Highlight, "accent"),
            ):
                assert palette.color(role) == theme.tone(tone, dark), (appearance, role)
            window, text = (
                palette.color(QPalette.ColorRole.Window),
                palette.color(QPalette.ColorRole.Text),
            )
            assert window.red() > window.blue() if not dark else window.red() >= window.blue()
            assert contrast(text, palette.color(QPalette.ColorRole.Base)) >= 12  # body text
            muted = palette.color(QPalette.ColorRole.PlaceholderText)
            assert contrast(muted, palette.color(QPalette.ColorRole.Base)) >= 4.5  # meta lines
    finally:
        theme.choose(app, "system", 0)


def test_every_part_of_a_request_has_a_colour_that_stands_out_in_both_schemes() -> None:
    """The meter, its legend and every other drawing of a request take a section's colour
    from one table: each section has one, distinct from the others, and each is at least
    3:1 against the page (WCAG's contrast for graphics)."""
    drawn = {str(section) for section in Section} - {"free"}
    assert drawn <= set(theme.SECTION_COLOURS)
    for dark in (False, True):
        page = theme.tone("page", dark)
        colours = [theme.section_colour(section, dark) for section in drawn]
        assert all(c is not None and contrast(c, page) >= 3 for c in colours), dark
        assert len({c.name() for c in colours if c is not None}) == len(drawn)
    assert theme.section_colour("free", dark=False) is None  # drawn as the empty bar


def title_is(title: QLabel, points: float) -> bool:
    return title.font().pointSizeF() == points


def test_the_type_scale_follows_the_text_size(
    window: MainWindow, engine: Engine, qtbot: QtBot
) -> None:
    open_demo(window, engine, qtbot, planned=False)
    app = make_app()
    try:
        for size in (9, 15):
            theme.choose(app, "system", size)  # as Settings → Text size does
            window.restyle()
            base = app.font()
            assert theme.font(base, "title").pointSizeF() == size * theme.TYPE_SCALE["title"]
            assert theme.font(base, "title").bold()
            assert theme.font(base, "meta").pointSizeF() == size * theme.TYPE_SCALE["meta"]
            assert theme.font(base, "body").pointSizeF() == size
            mono = theme.font(base, "mono")
            assert mono.pointSizeF() == size * theme.TYPE_SCALE["mono"]
            assert mono.family() == theme.monospace().family()  # the system's fixed-width font
            title = window.pane.header.title  # (fonts change by events)
            qtbot.waitUntil(partial(title_is, title, size * theme.TYPE_SCALE["title"]))
    finally:
        theme.choose(app, "system", 0)
    assert theme.space(3) == 12  # spacing on the 4 px grid
