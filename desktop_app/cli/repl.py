"""`contextdesk repl`: talking in the terminal, with the memory commands as /commands."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

from desktop_app.cli import context, files, memory
from desktop_app.cli.arguments import allowed_tools
from desktop_app.cli.talk import TerminalApprover, send
from desktop_app.core.errors import ContextDeskError

if TYPE_CHECKING:
    from desktop_app.chats import Chat, Engine


REPL_COMMANDS = "/pin /facts /compact /context /request /export /quit"


def cmd_repl(engine: Engine, args: argparse.Namespace) -> int:
    chat = engine.find(args.chat)
    approver = TerminalApprover(allowed_tools(args.allow_tools))
    engine.tool_servers.start(wait=True)
    print(f"{chat.title} — type a message; {REPL_COMMANDS}")
    while True:
        try:
            line = input("> ").strip()
        except EOFError:
            print()
            return 0
        if not line:
            continue
        if line in ("/quit", "/exit"):
            return 0
        try:
            _repl_line(engine, chat, line, approver)
        except ContextDeskError as exc:
            print(f"{exc.title}: {exc.message}")
        except SystemExit:
            pass  # a command's arguments were wrong: argparse said how; the repl goes on
        except Exception as exc:  # a bug: said plainly, its traceback kept in the log
            from desktop_app.chats import log_unexpected

            log_unexpected(exc, f"contextdesk repl: {line.partition(' ')[0]}")
            print(f"Something went wrong: {type(exc).__name__}: {exc} (see {engine.log_file})")


def _repl_line(engine: Engine, chat: Chat, line: str, approver: TerminalApprover) -> None:
    command, _, rest = line.partition(" ")
    argv = _repl_command_line(chat.id, command, rest.strip())
    if argv is not None:
        from desktop_app.cli.parser import parse

        args = parse(argv)
        REPL_RUNS[args.command](engine, args)
    elif line.startswith("/"):
        print(f"Unknown command {command}; try {REPL_COMMANDS}")
    else:
        finished = send(chat, line, approver, quiet=False)
        print()
        if finished.error:
            print(f"{finished.error.title}: {finished.error.message}")


def _repl_command_line(chat_id: str, command: str, rest: str) -> list[str] | None:
    """A repl command as the command line that does the same: read by the same grammar,
    so the two cannot drift apart (a hand-made Namespace lacked `draft`, and `/request`
    ended the repl)."""
    optional = {
        "/compact": ["--instructions", rest],
        "/request": ["--draft", rest],
        "/export": ["--output", rest],
    }
    command_lines = {
        "/pin": ["pin", chat_id, rest],
        "/facts": ["facts", chat_id],
        "/compact": ["compact", chat_id],
        "/context": ["context", chat_id],
        "/request": ["context", chat_id, "--request"],
        "/export": ["export", chat_id],
    }
    if command not in command_lines:
        return None
    return command_lines[command] + (optional.get(command, []) if rest else [])


# What a repl command line runs (`_repl_command_line` makes only these)
REPL_RUNS: dict[str, Callable[[Engine, argparse.Namespace], int]] = {
    "pin": memory.cmd_pin,
    "facts": memory.cmd_facts,
    "compact": memory.cmd_compact,
    "context": context.cmd_context,
    "export": files.cmd_export,
}
