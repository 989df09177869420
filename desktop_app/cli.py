"""The `contextdesk` command line.

For now: `contextdesk` (the window), `--version`, and `check FILE`, which validates a
Messages-API history or request body against the API's rules and shows, or writes, its
repair. The full chat commands arrive with the storage issue.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from desktop_app import __version__
from desktop_app.config.files import write_json_atomically
from desktop_app.core.errors import ContextDeskError
from desktop_app.core.protocol import validate
from desktop_app.core.repair import repair
from desktop_app.core.wire import messages_from_api

MAX_CHECK_BYTES = 256 * 1024 * 1024


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="contextdesk",
        description="A desktop chat client for Claude whose memory is visible and steerable.",
    )
    parser.add_argument("--version", action="version", version=f"ContextDesk {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("gui", help="open the window (the default)")
    check = sub.add_parser(
        "check",
        help="check a Messages-API history against the API's rules and show its repair",
        description="FILE holds a `messages` array or a whole request body "
        '({"model", "messages", …}). Exit status: 0 valid, 1 problems found, 2 unreadable.',
    )
    check.add_argument("file", type=Path)
    check.add_argument("--fix", type=Path, metavar="OUT", help="write the repaired JSON to OUT")
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> int:
    if args.command == "check":
        try:
            return check(args.file, args.fix)
        except ContextDeskError as exc:
            print(f"{exc.title}: {exc.message}", file=sys.stderr)
            if exc.info.details:
                print(exc.info.details, file=sys.stderr)
            return 2
    raise AssertionError(f"unhandled command {args.command}")


def check(path: Path, fix: Path | None) -> int:
    data = _read_json(path)
    body: dict[str, Any] | None = data if isinstance(data, dict) else None
    raw_messages = body.get("messages") if body is not None else data
    messages = messages_from_api(raw_messages)
    problems = validate(messages)
    if not problems:
        print(f"{path}: valid — {len(messages)} messages follow the Messages API's rules.")
        return 0
    print(f"{path}: {len(problems)} problem(s) the API would reject:")
    for problem in problems:
        print(f"  {problem}")
    result = repair(messages)
    print(f"\nThe repair makes {len(result.repairs)} change(s), keeping all content:")
    for change in result.repairs:
        print(f"  {change}")
    if fix is not None:
        repaired: Any = [m.to_api() for m in result.messages]
        if body is not None:
            repaired = {**body, "messages": repaired}
        write_json_atomically(fix, repaired)
        print(f"\nWrote the repaired JSON to {fix}")
    return 1


def _read_json(path: Path) -> Any:
    try:
        size = path.stat().st_size
        if size > MAX_CHECK_BYTES:
            raise ContextDeskError(
                "File too large", f"{path} is {size / 1e6:.0f} MB; the limit is 256 MB."
            )
        return json.loads(path.read_bytes())
    except OSError as exc:
        raise ContextDeskError("Cannot read the file", f"{path}: {exc.strerror or exc}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ContextDeskError("Not JSON", f"{path} is not valid JSON: {exc}") from exc
