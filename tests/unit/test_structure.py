"""The structure as drawn from the code's own imports (docs/architecture.md, "Layers"):
no import cycle anywhere — at run time, at type-checking time or inside a function — and
no module grown past the size that keeps it readable."""

from __future__ import annotations

import ast
from pathlib import Path

import desktop_app

PACKAGE = Path(desktop_app.__file__).parent
LONGEST = 700  # lines: past this a module holds more than one concern
# The two classes every feature passed through, kept small (issue 31)
KEPT_SMALL = {"ui/main_window.py": 500, "chats/chat.py": 300}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module → the modules of ours it imports, by any import statement in it."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}

    def ours(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            for target in targets:
                found = ours(target)
                if found is not None and found != name:
                    graph[name].add(found)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_anywhere() -> None:
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_one() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert "desktop_app.chats.chat" in import_graph()["desktop_app.chats.engine"]


def test_no_module_is_too_long_to_read() -> None:
    lengths = {
        path.relative_to(PACKAGE).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.rglob("*.py")
    }
    too_long = {name: n for name, n in lengths.items() if n > KEPT_SMALL.get(name, LONGEST)}
    assert too_long == {}
    assert set(KEPT_SMALL) <= set(lengths)
