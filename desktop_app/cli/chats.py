"""`contextdesk chat …` and `contextdesk settings`: chats created, listed, shown, changed,
moved and trashed; the app's settings."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from desktop_app.chats import handoff_links
from desktop_app.cli.arguments import key_values
from desktop_app.cli.wording import chat_json, settings_json, spend_json
from desktop_app.config.settings import CHAT_DEFAULTS, SETTINGS
from desktop_app.core.blocks import block_type
from desktop_app.core.errors import ContextDeskError, ErrorKind

if TYPE_CHECKING:
    from desktop_app.chats import Engine


def cmd_chat(engine: Engine, args: argparse.Namespace) -> int:
    if args.chat_command == "new":
        overrides = {
            "context_window": args.context_window,
            "compaction_threshold": args.threshold,
            "keep_recent_turns": args.keep_recent,
        }
        options = {k: v for k, v in overrides.items() if v is not None}
        if args.project:
            chat = engine.projects.new_chat(
                args.project,
                args.title,
                model=args.model,
                system_prompt=args.system or None,
                **options,
            )
        else:
            chat = engine.new_chat(
                args.title, model=args.model, system_prompt=args.system or None, **options
            )
        print(chat.id)
    elif args.chat_command == "move":
        if bool(args.project) == bool(args.none):
            raise ContextDeskError(
                "Where to?",
                "Name the project, or give --none to take the chat out of its project.",
                kind=ErrorKind.USAGE,
            )
        moved = engine.projects.move(engine.find(args.chat), None if args.none else args.project)
        print(f"Moved into {moved.name} ({moved.id})." if moved else "Moved out of its project.")
    elif args.chat_command == "list":
        chats = engine.list_chats()
        if args.json:
            print(json.dumps([chat_json(c) for c in chats], ensure_ascii=False, indent=2))
        for c in [] if args.json else chats:
            print(f"{c.id}  {c.message_count:>5} messages  {c.model:<22} {c.title}")
    elif args.chat_command == "show":
        chat = engine.find(args.chat)
        messages = chat.messages()
        before, after = handoff_links(engine.store, chat.id)
        if args.json:
            shown = {
                **chat_json(chat.info),
                "continued_from": {"id": before.id, "title": before.title} if before else None,
                "continued_in": [{"id": c.id, "title": c.title} for c in after],
                "system_prompt": chat.info.system_prompt,
                "messages": [
                    {
                        "id": m.id,
                        "role": m.role,
                        "status": m.status.value,
                        "content": m.to_api()["content"],
                    }
                    for m in messages
                ],
                "cost": spend_json(chat.costs.spend()),
            }
            print(json.dumps(shown, ensure_ascii=False, indent=2))
            return 0
        print(f"{chat.title}  ({chat.id}, {chat.info.model}) — cost: {chat.costs.spend().text()}")
        if before is not None:
            print(f"Continued from “{before.title}” ({before.id})")
        for later in after:
            print(f"Continued in “{later.title}” ({later.id})")
        for number, m in enumerate(messages, 1):  # the numbers `edit`, `exclude`… take
            status = "" if m.status.value == "complete" else f" [{m.status.value}]"
            kinds = ", ".join(block_type(b) for b in m.blocks)
            print(f"\n#{number} {m.role}{status} ({kinds}):\n{m.text or '(no text)'}")
    elif args.chat_command == "set":
        for note in engine.find(args.chat).setup.change(key_values(args.pairs)).notes:
            print(note, file=sys.stderr)
    elif args.chat_command == "delete":
        chat = engine.find(args.chat)
        chat.delete()
        print(f"Moved {chat.title!r} to the trash.")
    return 0


def cmd_settings(engine: Engine, args: argparse.Namespace) -> int:
    wanted = [p for p in args.pairs if "=" not in p]
    changes = key_values([p for p in args.pairs if "=" in p])
    known = [spec.key for spec in SETTINGS]
    unknown = [key for key in wanted if key not in known]
    if unknown:  # before anything is changed
        raise ContextDeskError(
            "Unknown setting",
            f"{unknown[0]!r}: the settings are {', '.join(known)}.",
            kind=ErrorKind.USAGE,
        )
    settings = engine.change_settings(changes) if changes else engine.settings
    shown = settings_json(settings)
    if wanted:
        shown = {key: shown[key] for key in wanted}
    if args.json:
        print(json.dumps(shown, ensure_ascii=False, indent=2))
        return 0
    for key, value in shown.items():
        print(f"{key} = {json.dumps(value, ensure_ascii=False)}")
    if changes:
        print(f"Saved to {engine.paths.settings_file}; {_when_applied(changes)}.", file=sys.stderr)
    return 0


def _when_applied(changes: dict[str, str]) -> str:
    """Which of the settings changed new chats start with, and which every chat uses now."""
    attrs = {spec.key: spec.attr for spec in SETTINGS}
    later = [key for key in changes if attrs.get(key) in CHAT_DEFAULTS]
    now = [key for key in changes if key not in later]
    said = [f"new chats start with {', '.join(later)} (a chat keeps its own)"] if later else []
    return "; ".join([*said, *([f"every chat uses {', '.join(now)} now"] if now else [])])
