"""The context panel's number boxes: a count with its noun ("3 turns"), a plain range
with its unit, and a percent read back as the fraction it stands for."""

from __future__ import annotations

from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QSpinBox


class CountSpin(QSpinBox):
    """A count with its noun, singular or plural as the number needs ("1 turn")."""

    def __init__(self, one: str, many: str) -> None:
        super().__init__()
        self.one, self.many = one, many

    def textFromValue(self, value: int) -> str:
        return f"{value} {self.one if value == 1 else self.many}"

    def valueFromText(self, text: str) -> int:
        digits = "".join(c for c in text if c.isdigit())
        return int(digits) if digits else self.minimum()

    def validate(self, text: str, pos: int) -> tuple[QValidator.State, str, int]:
        digits = "".join(c for c in text if c.isdigit())
        ok = digits and self.minimum() <= int(digits) <= self.maximum()
        state = QValidator.State.Acceptable if ok else QValidator.State.Intermediate
        return (state, text, pos)


def shown_fraction(percent: int, stored: float) -> float:
    """The spin box's percent as a fraction; the stored value itself while the box still
    shows it (0.875 set on the command line is not rounded to 0.88 by another edit)."""
    return stored if percent == round(stored * 100) else percent / 100


def spin_box(low: int, high: int, suffix: str) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(low, high)
    spin.setSuffix(suffix)
    spin.setGroupSeparatorShown(True)  # 250,000 messages, as every number around it
    return spin
