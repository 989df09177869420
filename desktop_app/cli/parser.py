"""Reading the `contextdesk` command line: `parse`, over the grammar of the window's
words here and of every other command in `cli/grammar.py`.

Apart from the commands themselves (the other modules of `desktop_app.cli`) so that
starting the window, which parses its arguments here too, loads nothing a command needs
and the window does not: the commands' part of the grammar is in `cli/grammar.py`, read
only when the arguments are not the window's.
"""

from __future__ import annotations

import argparse
import functools

from desktop_app import __version__

WINDOW_WORDS = {"gui", "demo", "--demo", "-v", "--verbose", "--smoke-test"}


def parse(argv: list[str]) -> argparse.Namespace:
    """The arguments, read by the whole grammar — or, when they only open the window,
    by its part of it: the other commands' ~20 parsers cost the window's start ~15 ms,
    and argparse itself ~10 ms more for the plain launch (no arguments, or a folder)."""
    if not argv or (len(argv) == 2 and argv[0] == "--home" and not argv[1].startswith("-")):
        home = argv[1] if argv else None
        return argparse.Namespace(home=home, demo=False, verbose=False, command=None)
    argv = _server_command_marked(argv)
    tail: list[str] = []
    if "--" in argv and "mcp" in argv[: argv.index("--")]:
        # `mcp add NAME -- COMMAND ARGS…`: argparse's subparsers mangle what follows "--"
        argv, tail = argv[: argv.index("--")], argv[argv.index("--") + 1 :]
    grammar = _grammar(commands=not _opens_the_window(argv))
    args = grammar.parse_args(argv)
    if hasattr(args, "server_command"):
        args.server_command = [*args.server_command, *tail]
    elif tail:
        grammar.error(f"unexpected arguments after --: {' '.join(tail)}")
    return args


ADD_OPTIONS = {"--url", "--header", "--env", "--timeout"}  # `mcp add`'s, each with a value


def _server_command_marked(argv: list[str]) -> list[str]:
    """`mcp add NAME npx -y pkg`, as typed without `--`: the command starts at the first
    word after NAME that is not one of `add`'s options (so its own flags stay its own)."""
    for i in range(len(argv) - 2):
        if argv[i : i + 2] == ["mcp", "add"] and "--" not in argv:
            words = iter(range(i + 3, len(argv)))
            for j in words:
                word = argv[j]
                if word in ADD_OPTIONS:
                    next(words, None)  # its value
                elif word.split("=")[0] in ADD_OPTIONS or word in ("-h", "--help"):
                    continue
                else:
                    return [*argv[:j], "--", *argv[j:]]
    return argv


def _opens_the_window(argv: list[str]) -> bool:
    words = iter(argv)
    for word in words:
        if word == "--home":
            next(words, None)  # its value
        elif not (word in WINDOW_WORDS or word.startswith("--home=")):
            return False
    return True


@functools.cache  # built once per process (~20 ms): the repl parses each of its commands
def _grammar(*, commands: bool) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="contextdesk",
        description="A desktop chat client for Claude whose memory is visible and steerable.",
    )
    parser.add_argument("--version", action="version", version=f"ContextDesk {__version__}")
    parser.add_argument(
        "--home", metavar="DIR", help="keep all data under DIR (like CONTEXTDESK_HOME)"
    )
    parser.add_argument(
        "--demo", action="store_true", help="use the offline demo model (no API key needed)"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, text in (
        ("gui", "open the window (the default)"),
        ("demo", "open the window on the offline demo model"),
    ):
        window = sub.add_parser(name, help=text)
        window.add_argument(
            "--smoke-test",
            action="store_true",
            help="open the window, ask the demo model one question that uses a tool, "
            "then quit: exit 0 if it all worked (used to check a build)",
        )

    if not commands:
        return parser
    from desktop_app.cli.grammar import add_commands  # (not on the window's way)

    add_commands(sub)
    return parser
