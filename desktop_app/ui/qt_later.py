"""`Qt`, Qt's namespace of enums, made on its first use.

Qt for Python makes every one of a type's enums the first time the type is touched: for
`Qt` that is 93 enums, ~35 ms on a slow machine, which a bare window never pays. The
modules the window's first frame loads take `Qt` from here, and the frame itself uses
none of its enums, so they are made after it. (Values Qt hands back are the real ones.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PySide6.QtCore import Qt
else:

    class _Later:
        def __getattr__(self, name: str) -> Any:
            from PySide6.QtCore import Qt as namespace

            try:
                value = vars(namespace)[name]
            except KeyError:
                raise AttributeError(f"Qt has no {name!r}") from None
            setattr(self, name, value)  # found directly from now on
            return value

    Qt = _Later()

__all__ = ["Qt"]
