"""`run`: one command of the `contextdesk` command line, from its parsed arguments.

CHAT is a chat id or a unique prefix of one. Errors print their title and message on
stderr and exit 1 — 2 for a command or value given the wrong way, and for `check` on a
file it cannot read — so scripts can rely on the status.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from desktop_app.cli import chats, context, costs, files, mcp, memory, projects, repl, talk
from desktop_app.core.errors import ContextDeskError, ErrorKind

if TYPE_CHECKING:  # the engine loads only when a command needs it
    from desktop_app.chats import Engine

USAGE_KINDS = (ErrorKind.USAGE, ErrorKind.FORMAT)  # exit 2: the input, not the world


def run(args: argparse.Namespace) -> int:
    if args.command == "check":
        try:
            return files.check(args.file, args.fix)
        except ContextDeskError as exc:
            return _fail(exc, 2)
    from desktop_app.chats import Engine, log_unexpected

    try:
        engine = Engine.open(args.home, demo=args.demo)
    except ContextDeskError as exc:
        return _fail(exc)
    engine.keep_log()
    try:
        return COMMANDS[args.command](engine, args)
    except ContextDeskError as exc:
        return _fail(exc, 2 if exc.kind in USAGE_KINDS else 1)
    except KeyboardInterrupt:
        print("\nStopped.", file=sys.stderr)
        return 130
    except BrokenPipeError:
        raise  # `… | head`: the reader left (app.main says nothing of it)
    except Exception as exc:  # a bug: said plainly, its traceback kept in the log
        log_unexpected(exc, f"contextdesk {args.command}")
        print(
            f"Something went wrong: {type(exc).__name__}: {exc}\n"
            f"The details are in {engine.log_file}; please attach it to a bug report.",
            file=sys.stderr,
        )
        return 1
    finally:
        for notice in engine.take_notices():  # what the engine changed on its own, said once
            print(notice, file=sys.stderr)
        engine.close()


def _fail(exc: ContextDeskError, status: int = 1) -> int:
    print(f"{exc.title}: {exc.message}", file=sys.stderr)
    if exc.info.details:
        print(exc.info.details, file=sys.stderr)
    return status


COMMANDS: dict[str, Callable[[Engine, argparse.Namespace], int]] = {
    "chat": chats.cmd_chat,
    "settings": chats.cmd_settings,
    "send": talk.cmd_send,
    "edit": talk.cmd_edit,
    "regenerate": talk.cmd_regenerate,
    "retry": talk.cmd_retry,
    "repl": repl.cmd_repl,
    "prices": costs.cmd_prices,
    "pin": memory.cmd_pin,
    "facts": memory.cmd_facts,
    "unpin": memory.cmd_unpin,
    "accept": memory.cmd_accept,
    "handoff": memory.cmd_handoff,
    "compact": memory.cmd_compact,
    "exclude": memory.cmd_exclude,
    "include": memory.cmd_exclude,
    "context": context.cmd_context,
    "requests": context.cmd_requests,
    "branch": context.cmd_branch,
    "spend": costs.cmd_spend,
    "export": files.cmd_export,
    "import": files.cmd_import,
    "search": files.cmd_search,
    "mcp": mcp.cmd_mcp,
    "project": projects.cmd_project,
}
