"""`contextdesk export`, `search`, `import`, `check`: chats as files, and found again."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from desktop_app.cli.wording import hit_json, one_line

if TYPE_CHECKING:
    from desktop_app.chats import Engine


def cmd_export(engine: Engine, args: argparse.Namespace) -> int:
    chat = engine.find(args.chat)
    if args.output:
        chat.export_to(args.output, args.format, with_requests=args.with_requests)
        print(f"Exported {chat.title!r} to {args.output}")
    else:
        sys.stdout.write(chat.export(args.format, with_requests=args.with_requests))
    return 0


def cmd_search(engine: Engine, args: argparse.Namespace) -> int:
    chat_id = engine.find(args.chat).id if args.chat else None
    hits = engine.search(args.text, chat_id=chat_id, limit=max(1, args.limit))
    if args.json:
        print(json.dumps([hit_json(hit) for hit in hits], ensure_ascii=False, indent=2))
    bold = sys.stdout.isatty()
    for hit in [] if args.json else hits:
        where = "#" if hit.message_id is None else f"#{hit.position + 1}"
        print(f"{hit.chat_id}  {hit.chat_title}  {where}  {one_line(hit.snippet, bold=bold)}")
    if not hits:
        print(f"Nothing matches {args.text!r}.", file=sys.stderr)
    return 0 if hits else 1


def cmd_import(engine: Engine, args: argparse.Namespace) -> int:
    imported = engine.import_file(args.file)
    if args.json:
        shown = {"id": imported.chat.id, "title": imported.chat.title}
        print(
            json.dumps({**shown, "repairs": list(imported.repairs)}, ensure_ascii=False, indent=2)
        )
        return 0
    for change in imported.repairs:
        print(f"repaired: {change}", file=sys.stderr)
    print(imported.chat.id)
    return 0


def check(path: Path, fix: Path | None) -> int:
    from desktop_app.chats import check_file

    report = check_file(path, fix)
    if not report.problems:
        print(f"{path}: valid — {report.messages} messages follow the Messages API's rules.")
        return 0
    print(f"{path}: {len(report.problems)} problem(s) the API would reject:")
    for problem in report.problems:
        print(f"  {problem}")
    print(f"\nThe repair makes {len(report.repairs)} change(s), keeping all content:")
    for change in report.repairs:
        print(f"  {change}")
    if report.remaining:
        print("\nWhat the repair cannot fix:")
        for problem in report.remaining:
            print(f"  {problem}")
    if report.written:
        print(f"\nWrote the repaired JSON to {fix}")
    elif fix is not None:
        print(f"\nNothing was written to {fix}: the repaired JSON would still be rejected.")
    return 1
