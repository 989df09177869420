"""The composition root: parse the command line, then start the GUI or run a command.

Nothing heavy is imported here: Qt is loaded only when a window is wanted, so commands
stay fast and the first window is not delayed by modules it does not need.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    from desktop_app.cli.parser import parse

    args = parse(list(sys.argv[1:] if argv is None else argv))
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if args.command in (None, "gui", "demo"):
        from desktop_app.ui.qt_loading import load_qt

        load_qt()
        from desktop_app.ui.gui import run_gui

        smoke_test = getattr(args, "smoke_test", False)
        # (The window makes the process private as its engine opens: `open_engine`.)
        return run_gui(args.home, demo=args.demo or args.command == "demo", smoke_test=smoke_test)
    from desktop_app.cli.commands import run
    from desktop_app.config.privacy import protect_process

    protect_process()  # a command the model runs cannot read our memory or environment

    try:
        return run(args)
    except BrokenPipeError:  # `contextdesk … | head`: the reader left; that is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
