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
    from desktop_app.config.privacy import protect_process

    args = parse(list(sys.argv[1:] if argv is None else argv))
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if args.command in (None, "gui", "demo"):
        from desktop_app.ui.qt_loading import load_qt

        # A command the model runs cannot read our memory or environment: made so on a
        # thread while Qt loads, before the application is made (`qt_loading`)
        load_qt(make_private=protect_process)
        from desktop_app.ui.gui import run_gui

        smoke_test = getattr(args, "smoke_test", False)
        return run_gui(args.home, demo=args.demo or args.command == "demo", smoke_test=smoke_test)
    from desktop_app.cli.commands import run

    protect_process()  # (the command line's: before any command runs)

    try:
        return run(args)
    except BrokenPipeError:  # `contextdesk … | head`: the reader left; that is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
