"""`contextdesk export`, `search`, `import`, `check`: chats as files, and found again."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from desktop_app.cli.wording import hit_json, one_line
from desktop_app.config.prices import format_money

if TYPE_CHECKING:
    from desktop_app.chats import Engine


def cmd_export(engine: Engine, args: argparse.Namespace) -> int:
    chat = engine.find(args.chat)
    if args.output:
        chat.export_to(args.output, args.format, with_requests=args.with_requests)
        print(f"Exported {chat.title!r} to {args.output}")
    else:
        chat.write_export(sys.stdout, args.format, with_requests=args.with_requests)
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
    progress = _ProgressOnStderr()
    try:
        batch = engine.import_path(
            args.file, chosen=args.source, model=args.model, progress=progress
        )
    finally:
        progress.end()  # (what follows, an error too, starts a line of its own)
    if args.json:
        if batch.source == "contextdesk" and len(batch.chats) == 1:  # one chat, as before
            (one,) = batch.chats
            shown = {"id": one.chat.id, "title": one.chat.title, "repairs": list(one.report)}
            print(json.dumps(shown, ensure_ascii=False, indent=2))
            return 0
        chats = [
            {
                "id": c.chat.id,
                "title": c.chat.title,
                "model": c.chat.model,
                "source_model": c.source_model or None,
                "messages": c.messages,
                "versions": c.versions,
                "hidden": c.hidden,
                "next_request_tokens": c.next_tokens,
                "next_request_cost": c.next_cost,
                "report": list(c.report),
            }
            for c in batch.chats
        ]
        out = {
            "source": batch.source,
            "chats": chats,
            "skipped": batch.skipped,
            "memories": list(batch.memories),
        }
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    for imported in batch.chats:
        for line in imported.report:
            print(
                f"{'repaired' if batch.source == 'contextdesk' else 'note'}: {line}",
                file=sys.stderr,
            )
        print(imported.chat.id)
    if batch.source != "contextdesk":
        currency = engine.prices().currency
        costs = [c.next_cost for c in batch.chats if c.next_cost is not None]
        print(
            f"Imported {len(batch.chats)} chat(s) from {batch.source_name}"
            + (" before you stopped it" if batch.cancelled else "")
            + (f", {batch.skipped} already here" if batch.skipped else "")
            + (
                f"; going on with all of them costs ≈{format_money(sum(costs), currency)} "
                "for their next requests' input"
                if costs
                else ""
            ),
            file=sys.stderr,
        )
        for line in batch.memories:
            print(line, file=sys.stderr)
    return 0


class _ProgressOnStderr:
    """How far a long import is, on stderr: one line redrawn on a terminal, else a line
    at each tenth. (Ctrl-C stops it; the chats stored by then stay.)"""

    def __init__(self) -> None:
        self.live = sys.stderr.isatty()
        self.words, self.tenth, self.drawn = "", -1, False

    def __call__(self, words: str, share: float) -> bool:
        tenth = int(share * 10)
        if self.live:
            print(f"\r{words} {share:4.0%}", end="", file=sys.stderr, flush=True)
            self.drawn = True
        elif words.split()[0] != self.words or tenth != self.tenth:
            print(f"{words.split('…')[0]}… {tenth * 10}%", file=sys.stderr)
        self.words, self.tenth = words.split()[0], tenth
        return True

    def end(self) -> None:
        """End the redrawn line, if one was drawn."""
        if self.drawn:
            print(file=sys.stderr, flush=True)
            self.drawn = False


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
