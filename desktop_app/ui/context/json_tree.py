"""A request body as a tree a person can read: each part folds, its fold line saying what
it holds (and, for the request's sections, its tokens); a long string shows its start and
opens whole on a click; Find walks every match, opening the folds on the way.

Children are made when a fold opens: a long chat's request holds thousands of messages,
and a tree item for each of their parts would take longer than the JSON text does."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

from desktop_app.ui import theme

SHORT = 120  # characters of a long string shown folded
PATH = Qt.ItemDataRole.UserRole  # an item's path in the body: a tuple of keys and indices
PLACEHOLDER = "…"


def fold_line(key: str, value: Any, tokens: int | None = None) -> str:
    """What a part holds, folded: `messages  [120 items] · ≈1,685 tokens`."""
    counted = f" · ≈{tokens:,} tokens" if tokens else ""
    if isinstance(value, dict):
        kind = value.get("type") or value.get("role") or value.get("name")
        said = f" {kind}" if isinstance(kind, str) else ""
        fields = f"{len(value):,} field{'s' if len(value) != 1 else ''}"
        return f"{key}{said}  {{{fields}}}{counted}"
    if isinstance(value, list):
        return f"{key}  [{len(value):,} item{'s' if len(value) != 1 else ''}]{counted}"
    if isinstance(value, str) and len(value) > SHORT:
        return (
            f"{key}: {json.dumps(value[:SHORT], ensure_ascii=False)[:-1]}…  "
            f"(+{len(value) - SHORT:,} characters — click to show all)"
        )
    return f"{key}: {json.dumps(value, ensure_ascii=False)}"


class JsonTree(QTreeWidget):
    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("requestTree")
        self.setHeaderHidden(True)
        self.setWordWrap(True)
        self.setUniformRowHeights(False)
        self.setFont(theme.font(self.font(), "mono"))
        self.body: Any = None
        self.tokens: Mapping[str, int] = {}
        self._matches: Iterator[tuple[Any, ...]] | None = None
        self._needle = ""
        self.itemExpanded.connect(self._on_item_expanded)
        self.itemClicked.connect(self._on_item_clicked)

    def show_body(self, body: Any, tokens: Mapping[str, int]) -> None:
        """`tokens`: the fold lines' counts, by top-level key (system, tools, messages)."""
        if body == self.body and tokens == self.tokens:
            return
        self.body, self.tokens = body, dict(tokens)
        self._matches = None
        self.clear()
        if isinstance(body, dict):
            for key, value in body.items():
                self.addTopLevelItem(self._item(str(key), value, (key,), tokens.get(key)))

    def _item(
        self, key: str, value: Any, path: tuple[Any, ...], tokens: int | None = None
    ) -> QTreeWidgetItem:
        item = QTreeWidgetItem([fold_line(key, value, tokens)])
        item.setData(0, PATH, path)
        if isinstance(value, (dict, list)) and value:
            QTreeWidgetItem(item, [PLACEHOLDER])  # opened: `_on_item_expanded` fills it
        return item

    def value_at(self, path: tuple[Any, ...]) -> Any:
        value = self.body
        for step in path:
            value = value[step]
        return value

    @Slot(QTreeWidgetItem)
    def _on_item_expanded(self, item: QTreeWidgetItem) -> None:
        first = item.child(0) if item.childCount() == 1 else None
        if first is not None and first.text(0) == PLACEHOLDER:
            item.takeChild(0)
            path = item.data(0, PATH)
            value = self.value_at(path)
            pairs = value.items() if isinstance(value, dict) else enumerate(value)
            for key, child in pairs:
                item.addChild(
                    self._item(f"[{key}]" if isinstance(key, int) else key, child, (*path, key))
                )

    @Slot(QTreeWidgetItem, int)
    def _on_item_clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        """A long string, clicked: whole (and folded again on the next click)."""
        path = item.data(0, PATH)
        if path is None:
            return
        value = self.value_at(path)
        if isinstance(value, str) and len(value) > SHORT:
            key = str(path[-1]) if not isinstance(path[-1], int) else f"[{path[-1]}]"
            whole = f"{key}: {json.dumps(value, ensure_ascii=False)}"
            item.setText(0, fold_line(key, value) if item.text(0) == whole else whole)

    def find_next(self, needle: str) -> bool:
        """Select the next part whose key or value holds `needle` (from the top again
        after the last), opening the folds on its way. False: none holds it."""
        if not needle or self.body is None:
            return False
        if needle != self._needle or self._matches is None:
            self._needle, self._matches = needle, _paths_holding(self.body, needle.lower())
        path = next(self._matches, None)
        if path is None:  # round again
            self._matches = _paths_holding(self.body, needle.lower())
            path = next(self._matches, None)
            if path is None:
                return False
        item = self._open_to(path)
        if item is not None:
            self.setCurrentItem(item)
            self.scrollToItem(item)
        return True

    def _open_to(self, path: tuple[Any, ...]) -> QTreeWidgetItem | None:
        items = [self.topLevelItem(i) for i in range(self.topLevelItemCount())]
        found = None
        for depth in range(1, len(path) + 1):
            found = next(
                (i for i in items if i is not None and i.data(0, PATH) == path[:depth]), None
            )
            if found is None:
                return None
            if depth < len(path):
                found.setExpanded(True)  # (fills it)
                items = [found.child(i) for i in range(found.childCount())]
        return found


def _paths_holding(
    value: Any, needle: str, path: tuple[Any, ...] = ()
) -> Iterator[tuple[Any, ...]]:
    """Every path, in order, whose key or scalar value holds `needle` (lower case)."""
    if isinstance(value, dict):
        for key, child in value.items():
            if needle in str(key).lower() and not isinstance(child, (dict, list)):
                yield (*path, key)
            else:
                yield from _paths_holding(child, needle, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths_holding(child, needle, (*path, index))
    elif path and needle in json.dumps(value, ensure_ascii=False).lower():
        yield path
