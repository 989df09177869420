"""The layer rules, proven in fresh interpreters: only `ui` imports Qt; `core` imports
nothing outside the standard library."""

from __future__ import annotations

import ast
import dataclasses
import enum
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import desktop_app
from desktop_app.context.facts import Fact
from desktop_app.core.errors import ErrorKind
from desktop_app.storage.store import ChatStore

NON_UI = sorted(
    m.name
    for m in pkgutil.walk_packages(desktop_app.__path__, "desktop_app.")
    if not m.name.startswith("desktop_app.ui") and m.name != "desktop_app.__main__"
)
CORE = [name for name in NON_UI if name.startswith("desktop_app.core")]


def loaded_after_importing(modules: list[str], watch: list[str]) -> list[str]:
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        f"print(','.join(w for w in {watch!r} if w in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [w for w in out.stdout.strip().split(",") if w]


def test_the_module_list_is_real() -> None:
    assert "desktop_app.core.loop" in NON_UI
    assert "desktop_app.cli.commands" in NON_UI
    assert "desktop_app.core.loop" in CORE


def test_no_non_ui_module_loads_qt() -> None:
    assert loaded_after_importing(NON_UI, ["PySide6", "shiboken6"]) == []


def test_core_loads_only_the_standard_library() -> None:
    heavy = [
        "PySide6",
        "anthropic",
        "sqlite3",
        "keyring",
        "tiktoken",
        "httpx",
        "httpx2",
        "platformdirs",
    ]
    assert loaded_after_importing(CORE, heavy) == []


def test_the_watch_really_sees_imports() -> None:
    assert loaded_after_importing(["json", "sqlite3"], ["sqlite3"]) == ["sqlite3"]


def test_the_backend_defers_the_slow_anthropic_import() -> None:
    """`import anthropic` takes ~2.5 s: it must happen on first use, on the worker thread."""
    modules = [
        "desktop_app.api.backend",
        "desktop_app.api.simulator",
        "desktop_app.app",
        "desktop_app.cli.commands",  # (it loads every command's module)
    ]
    assert loaded_after_importing(modules, ["anthropic", "httpx2"]) == []


def test_the_window_starts_without_the_engine_the_sdk_or_the_encoding() -> None:
    """The frame and the chat list paint from a light read (`chats/first_frame.py`); the
    engine, and what a chat needs, load after them."""
    deferred = [
        # the engine and what the window drives it with: right after the first frame
        "desktop_app.chats.engine",
        "desktop_app.storage.store",
        "desktop_app.context.state",
        "desktop_app.core.blocks",
        "desktop_app.core.messages",
        "desktop_app.ui.chat_list.controller",
        "desktop_app.ui.connection_controller",
        "desktop_app.ui.workers",
        "anthropic",
        "tiktoken",
        "desktop_app.api.backend",
        "desktop_app.context.projection",
        "desktop_app.context.compaction",
        "desktop_app.core.loop",
        "desktop_app.tools.builtin",
        # a chat's own machinery: with the first chat opened, after the first paint
        "desktop_app.chats.chat",
        "desktop_app.core.events",
        "desktop_app.tokens.counter",
        "desktop_app.ui.conversation.session",
        # the conversation's widgets: made right after the first frame
        "desktop_app.ui.conversation.composer",
        "desktop_app.ui.conversation.message_view",
        "desktop_app.ui.context.panel",
        "desktop_app.ui.conversation.approval_card",
        "desktop_app.core.branches",
        # the commands: the window parses its arguments with `cli.parser` alone
        *(
            f"desktop_app.cli.{path.stem}"
            for path in (PACKAGE / "cli").glob("*.py")
            if path.stem not in ("__init__", "parser")
        ),
        "desktop_app.core.repair",
        "logging.handlers",
        "hashlib",
        # the settings and their checks, the errors, the database's migrations, the search:
        # the first frame reads its look and its chat list without them
        "desktop_app.config.settings",
        "desktop_app.core.errors",
        "desktop_app.storage.db",
        "desktop_app.storage.search",
        "datetime",
    ]
    window_path = ["desktop_app.app", "desktop_app.cli.parser", "desktop_app.ui.gui"]
    assert loaded_after_importing(window_path, deferred) == []


# -- the faces reach the engine only through the application layer ----------------------------

PACKAGE = Path(desktop_app.__file__).parent
# The faces: the command line, the window, and the words for values they share (`said`:
# a face too, so it is held to the same rule).
FACES = [
    PACKAGE / "said.py",
    PACKAGE / "cited.py",
    *sorted((PACKAGE / "cli").rglob("*.py")),
    *sorted((PACKAGE / "ui").rglob("*.py")),
]
# Modules of plain values (blocks, messages, events, errors, ports, facts, context state,
# prices and how money is written): the faces may use anything in them.
VALUE_MODULES = {
    "desktop_app",
    "desktop_app.bundled",
    "desktop_app.config.prices",
    "desktop_app.core.blocks",
    "desktop_app.core.cancel",
    "desktop_app.core.errors",
    "desktop_app.core.events",
    "desktop_app.core.messages",
    "desktop_app.core.ports",
    "desktop_app.core.request",
    "desktop_app.core.transcript",  # (a list of messages never changed, and its lineage)
    "desktop_app.context.chat_settings",
    "desktop_app.context.facts",
    "desktop_app.context.state",
}


def runtime_imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) of every `desktop_app` import outside `if TYPE_CHECKING:`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
        for statement in block.body
        for node in ast.walk(statement)
    }
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("desktop_app"):
            found.append((node.lineno, node.module or "", [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [
                (node.lineno, a.name, []) for a in node.names if a.name.startswith("desktop_app")
            ]
    return found


def is_value(thing: object) -> bool:
    """A constant, or a class that only carries data (frozen dataclass, named tuple, enum,
    error)."""
    if not callable(thing):
        return True
    if not isinstance(thing, type):
        return False
    frozen = dataclasses.is_dataclass(thing) and thing.__dataclass_params__.frozen
    named_tuple = issubclass(thing, tuple) and hasattr(thing, "_fields")
    return bool(frozen) or named_tuple or issubclass(thing, (enum.Enum, Exception))


def test_the_faces_use_the_engine_only_through_the_application_layer() -> None:
    wrong = []
    for path in FACES:
        for line, module, names in runtime_imports(path):
            if module in VALUE_MODULES or module.startswith(
                (
                    "desktop_app.chats",
                    "desktop_app.ui",
                    "desktop_app.cli",
                    "desktop_app.said",
                    "desktop_app.cited",
                )
            ):  # (the faces may use each other: cli*, said, cited)
                continue
            loaded = importlib.import_module(module)
            engine_names = [n for n in names if not is_value(getattr(loaded, n))] or (
                [] if names else [module]
            )
            wrong += [f"{path.name}:{line} {module}.{n}" for n in engine_names]
    assert wrong == []


def test_the_faces_import_the_application_layer_from_its_face_only() -> None:
    """`desktop_app.chats` is curated: a face imports what it lists (its `__all__`), never
    one of its modules — so the layer's insides can move without the faces noticing."""
    import desktop_app.chats as chats

    wrong = []
    for path in FACES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom | ast.Import):
                continue
            modules = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
            )
            for module in modules:
                if module.startswith("desktop_app.chats."):
                    wrong.append(f"{path.name}:{node.lineno} {module}")
                elif module == "desktop_app.chats" and isinstance(node, ast.ImportFrom):
                    wrong += [
                        f"{path.name}:{node.lineno} {a.name} (not in chats.__all__)"
                        for a in node.names
                        if a.name not in chats.__all__
                    ]
    assert wrong == []
    assert all(getattr(chats, name) is not None for name in chats.__all__)  # each resolves


def test_the_faces_check_imports_for_real() -> None:
    run = PACKAGE / "cli" / "commands.py"
    assert run in FACES
    assert PACKAGE / "said.py" in FACES  # (it exists: read, not skipped)
    assert any(m == "desktop_app.config.prices" for _, m, _ in runtime_imports(FACES[0]))
    assert any(m == "desktop_app.chats" for _, m, _ in runtime_imports(run))
    assert is_value(ErrorKind.AUTH)
    assert is_value(Fact)
    assert not is_value(ChatStore)


def test_no_backend_is_probed_with_getattr() -> None:
    """Ports declare what is called (close, release_thread, models): no `getattr` guesses."""
    probed = [
        f"{path.relative_to(PACKAGE)}:{n}"
        for path in [*FACES, *(PACKAGE / "chats").glob("*.py")]
        for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "getattr(" in text
    ]
    assert probed == []
