"""Render resources/icons/contextdesk.svg to the PNG sizes desktops ask for.

.venv/bin/python packaging/make_icons.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ICONS = Path(__file__).resolve().parents[1] / "resources" / "icons"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def main() -> int:
    app = QGuiApplication(sys.argv[:1])  # noqa: F841 — Qt needs it to paint
    renderer = QSvgRenderer(str(ICONS / "contextdesk.svg"))
    if not renderer.isValid():
        print("contextdesk.svg is not a valid SVG", file=sys.stderr)
        return 1
    for size in SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        image.save(str(ICONS / f"contextdesk-{size}.png"))
    print(f"wrote {len(SIZES)} PNGs to {ICONS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
