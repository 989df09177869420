"""The structure as drawn from the code's own imports (docs/architecture.md, "Layers"):
no import cycle anywhere — at run time, at type-checking time or inside a function — and
no module grown past the size that keeps it readable."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from collections.abc import Iterable
from pathlib import Path

import desktop_app
from desktop_app.core.errors import ContextDeskError

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


# -- one home per layer for its errors ----------------------------------------------------------

FACES = ("desktop_app.cli", "desktop_app.ui")  # may keep an exception of their own (not ours)


def exception_classes() -> set[type[BaseException]]:
    """Every exception class desktop_app defines, every module imported to find them: each
    module's own, and every ContextDeskError however deep (one made inside a function too)."""
    found: set[type[BaseException]] = set()
    for info in pkgutil.walk_packages(desktop_app.__path__, "desktop_app."):
        if info.name == "desktop_app.__main__":  # (it runs the app)
            continue
        module = importlib.import_module(info.name)
        found |= {
            thing
            for thing in vars(module).values()
            if isinstance(thing, type)
            and issubclass(thing, BaseException)
            and thing.__module__ == info.name
        }
    below = [ContextDeskError]
    while below:
        cls = below.pop()
        found.add(cls)
        below += cls.__subclasses__()
    return {cls for cls in found if cls.__module__.startswith("desktop_app.")}


def misplaced(
    classes: Iterable[type[BaseException]], ours: type[BaseException] = ContextDeskError
) -> list[str]:
    """The classes defined outside a module named `errors.py`: any of `ours`, and any other
    exception class outside the faces."""
    return sorted(
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in classes
        if cls.__module__.rpartition(".")[2] != "errors"
        and (issubclass(cls, ours) or not cls.__module__.startswith(FACES))
    )


def test_every_error_class_lives_in_its_layers_errors_module() -> None:
    """A layer's errors are found in one place, its `errors.py` (core/errors.py,
    storage/errors.py…), and each is defined there once: the modules that raise them
    import them from there."""
    assert misplaced(exception_classes()) == []


def test_the_error_finder_finds_one_elsewhere() -> None:
    classes = exception_classes()
    names = {cls.__name__ for cls in classes}
    assert {"ContextDeskError", "HistoryFormatError", "StorageError", "Cancelled"} <= names
    assert "AttachmentError" in names  # the composer's own: a face may keep one

    class Ours(Exception):
        pass

    def made(name: str, base: type[BaseException], module: str) -> type[BaseException]:
        return type(name, (base,), {"__module__": module})

    strays = [
        made("Home", Ours, "desktop_app.storage.errors"),
        made("Stray", Ours, "desktop_app.tools.run"),
        made("Loose", ValueError, "desktop_app.tokens.encoding"),
        made("Local", ValueError, "desktop_app.ui.view"),
        made("Face", Ours, "desktop_app.cli.talk"),
    ]
    assert misplaced(strays, Ours) == [
        "desktop_app.cli.talk.Face",
        "desktop_app.tokens.encoding.Loose",
        "desktop_app.tools.run.Stray",
    ]
