"""The `contextdesk` command line's grammar: every command, option and help text.

Apart from the commands themselves (`cli.py`) so that starting the window, which parses
its arguments here too, loads nothing a command needs and the window does not.
"""

from __future__ import annotations

import argparse
import functools
from pathlib import Path

from desktop_app import __version__
from desktop_app.chats.names import CHAT_FIELDS
from desktop_app.config.settings import SETTINGS

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
    chat = sub.add_parser("chat", help="create, list, show, change or delete chats").add_subparsers(
        dest="chat_command", metavar="ACTION", required=True
    )
    new = chat.add_parser("new", help="create a chat; prints its id")
    new.add_argument("--title", default="New chat")
    new.add_argument("--model")
    new.add_argument("--system", default="")
    new.add_argument("--context-window", type=int)
    new.add_argument(
        "--threshold", type=float, help="auto-compaction threshold, 0–1 (default 0.87)"
    )
    new.add_argument("--keep-recent", type=int, help="recent turns kept whole (default 10)")
    new.add_argument("--project", help="in this project (its id, an id prefix, or its name)")
    move = chat.add_parser("move", help="move a chat into a project (or out: --none)")
    move.add_argument("chat")
    move.add_argument("project", nargs="?")
    move.add_argument("--none", action="store_true", help="out of its project")
    listing = chat.add_parser("list", help="chats by last activity")
    listing.add_argument("--json", action="store_true")
    show = chat.add_parser("show", help="a chat and its messages")
    show.add_argument("chat")
    show.add_argument("--json", action="store_true")
    change = chat.add_parser(
        "set", help=f"change a chat: KEY=VALUE with KEY in {', '.join(CHAT_FIELDS)}"
    )
    change.add_argument("chat")
    change.add_argument("pairs", nargs="+", metavar="KEY=VALUE")
    delete = chat.add_parser("delete", help="move a chat to the trash")
    delete.add_argument("chat")

    send = sub.add_parser("send", help="send one message; the reply streams to stdout")
    send.add_argument("chat")
    send.add_argument("text")
    send.add_argument("--json", action="store_true", help="print the turn's result as JSON")
    send.add_argument(
        "--allow-tools",
        default="",
        metavar="NAME,…",
        help="tools that ask may run without asking (an MCP tool as SERVER.TOOL)",
    )
    repl = sub.add_parser(
        "repl", help="talk in the terminal (/pin /facts /compact /context /request /export /quit)"
    )
    repl.add_argument("chat")
    repl.add_argument(
        "--allow-tools",
        default="",
        metavar="NAME,…",
        help="tools that ask may run without asking (an MCP tool as SERVER.TOOL)",
    )

    pin = sub.add_parser("pin", help="pin a fact: sent verbatim with every message")
    pin.add_argument("chat")
    pin.add_argument("text")
    facts = sub.add_parser("facts", help="the chat's pinned facts")
    facts.add_argument("chat")
    facts.add_argument("--json", action="store_true")
    unpin = sub.add_parser("unpin", help="remove a pinned fact")
    unpin.add_argument("chat")
    unpin.add_argument("fact_id")

    compact = sub.add_parser("compact", help="summarize older turns (preview with --dry-run)")
    compact.add_argument("chat")
    compact.add_argument(
        "--instructions", default="", help='what the summary should focus on, e.g. "the SQL schema"'
    )
    compact.add_argument(
        "--dry-run",
        action="store_true",
        help="show the preview and the fidelity warnings; change nothing",
    )
    context = sub.add_parser(
        "context", help="what the next request holds: sections, and every block's tokens and state"
    )
    context.add_argument("chat")
    context.add_argument("--json", action="store_true")
    context.add_argument("--request", action="store_true", help="print the exact next request body")
    context.add_argument(
        "--draft",
        default="",
        metavar="TEXT",
        help="with --request: the body `send CHAT TEXT` would send",
    )

    requests = sub.add_parser(
        "requests", help="every request the chat sent, as sent, with the usage reported"
    )
    requests.add_argument("chat")
    requests.add_argument("number", nargs="?", type=int, help="print this request's body")
    requests.add_argument(
        "--diff",
        nargs=2,
        metavar=("A", "B"),
        help="two requests side by side (numbers, or `next` for the one a send would make)",
    )
    requests.add_argument("--json", action="store_true")

    branch = sub.add_parser(
        "branch",
        help="a chat's branches (its edited messages and regenerated replies), or show one",
    )
    branch.add_argument("chat")
    branch.add_argument("number", nargs="?", type=int, help="show this branch (as numbered)")
    branch.add_argument("--json", action="store_true")

    spend = sub.add_parser("spend", help="what the requests of every chat cost, by the price table")
    spend.add_argument("period", nargs="?", choices=("today", "month", "all"), default="month")
    spend.add_argument("--json", action="store_true")

    prices = sub.add_parser(
        "prices",
        help="the price table (per million tokens), or enter a model's price",
        description="With no ACTION, every model's price and the table's date and source. "
        "`prices set MODEL input=… output=… [cache_write_5m=… cache_write_1h=… cache_read=… "
        "batch_input=… batch_output=…]` enters or corrects one model's price (kept in "
        "prices.json in the config folder, over the bundled table); cache rates left out "
        "follow the API's multipliers.",
    )
    prices.add_argument("action", nargs="?", choices=("set",))
    prices.add_argument("model", nargs="?")
    prices.add_argument("pairs", nargs="*", metavar="KEY=VALUE")
    prices.add_argument("--json", action="store_true")

    export = sub.add_parser("export", help="a chat as JSON (contextdesk.chat) or Markdown")
    export.add_argument("chat")
    export.add_argument(
        "-o", "--output", type=Path, help="write here (atomically) instead of stdout"
    )
    export.add_argument("--format", choices=("json", "md"), default="json")
    export.add_argument(
        "--with-requests",
        action="store_true",
        help="JSON only: every request the chat sent, as sent, with its usage",
    )
    search = sub.add_parser(
        "search",
        help="find text in every chat's titles and messages (exit 1 when nothing matches)",
        description="One line per hit: the chat's id, its title, the message's number in the "
        "chat (# for a title) and the text around the match. Across chats the newest "
        "messages come first; within one chat (--chat), in order. Messages are searched "
        "for pieces of 3 or more characters; shorter text matches titles only.",
    )
    search.add_argument("text")
    search.add_argument("--chat", help="search this chat only")
    search.add_argument("--json", action="store_true")
    search.add_argument("--limit", type=int, default=200, help="at most this many hits (200)")
    importing = sub.add_parser(
        "import",
        help="import a contextdesk.chat file or a Messages API request body; prints the new id",
    )
    importing.add_argument("file", type=Path)
    importing.add_argument(
        "--json", action="store_true", help="print the new chat and every repair as JSON"
    )

    settings = sub.add_parser(
        "settings",
        help="show or change the settings (what the Settings dialog has)",
        description="With no KEY, every setting; KEY shows one; KEY=VALUE changes it (checked "
        "as the Settings dialog checks it). Keys: "
        + ", ".join(f"{spec.key} ({spec.help})" for spec in SETTINGS)
        + ".",
    )
    settings.add_argument("pairs", nargs="*", metavar="KEY[=VALUE]")
    settings.add_argument("--json", action="store_true")

    from desktop_app.cli_mcp import add_parser as add_mcp_parser
    from desktop_app.cli_project import add_parser as add_project_parser

    add_mcp_parser(sub)
    add_project_parser(sub)

    check = sub.add_parser(
        "check",
        help="check a Messages-API history file and show its repair",
        description="FILE holds a `messages` array or a whole request body. Exit status: 0 valid, 1 problems found, 2 unreadable.",
    )
    check.add_argument("file", type=Path)
    check.add_argument("--fix", type=Path, metavar="OUT", help="write the repaired JSON to OUT")
    return parser
