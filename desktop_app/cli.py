"""The `contextdesk` command line: the same engine as the GUI (`services.Services`).

Everything the GUI can do to a chat's memory — pin, compact, preview the request,
export — the command line can do too. CHAT is a chat id or a unique prefix of one.
Errors print their title and message on stderr and exit 1 (2 for usage and unreadable
input), so scripts can rely on the status.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_app import __version__
from desktop_app.config.files import write_atomically, write_json_atomically
from desktop_app.context.compaction import apply_preview
from desktop_app.context.facts import Fact
from desktop_app.context.projection import Plan, Section
from desktop_app.context.state import ContextSettings
from desktop_app.core.blocks import block_type
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import ContextDeskError, HistoryFormatError
from desktop_app.core.events import (
    LoopEvent,
    MessageAdded,
    TextDelta,
    ToolCallStarted,
    TurnFinished,
)
from desktop_app.core.ports import ApprovalDecision, ApprovalRequest
from desktop_app.core.protocol import validate
from desktop_app.core.repair import repair
from desktop_app.core.wire import messages_from_api

if TYPE_CHECKING:  # services pulls in the whole engine: only when a command needs it
    from desktop_app.services import Services

MAX_CHECK_BYTES = 256 * 1024 * 1024
SETTABLE = {
    "title": "title",
    "model": "model",
    "system": "system_prompt",
    "context_window": "context_window",
    "threshold": "compaction_threshold",
    "keep_recent": "keep_recent_turns",
    "max_tokens": "max_tokens",
    "auto_compact": "auto_compact",
    "keep_first": "keep_first_message",
    "max_messages": "max_context_messages",
    "tool_result_cap": "tool_result_cap",
}


def parse(argv: list[str]) -> argparse.Namespace:
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
    listing = chat.add_parser("list", help="chats by last activity")
    listing.add_argument("--json", action="store_true")
    show = chat.add_parser("show", help="a chat and its messages")
    show.add_argument("chat")
    show.add_argument("--json", action="store_true")
    change = chat.add_parser(
        "set", help=f"change a chat: KEY=VALUE with KEY in {', '.join(SETTABLE)}"
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
        "--allow-tools", default="", metavar="NAME,…", help="tools that ask may run without asking"
    )
    repl = sub.add_parser(
        "repl", help="talk in the terminal (/pin /facts /compact /context /request /export /quit)"
    )
    repl.add_argument("chat")

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

    export = sub.add_parser("export", help="a chat as JSON (contextdesk.chat) or Markdown")
    export.add_argument("chat")
    export.add_argument(
        "-o", "--output", type=Path, help="write here (atomically) instead of stdout"
    )
    export.add_argument("--format", choices=("json", "md"), default="json")
    importing = sub.add_parser(
        "import",
        help="import a contextdesk.chat file or a Messages API request body; prints the new id",
    )
    importing.add_argument("file", type=Path)

    check = sub.add_parser(
        "check",
        help="check a Messages-API history file and show its repair",
        description="FILE holds a `messages` array or a whole request body. Exit status: 0 valid, 1 problems found, 2 unreadable.",
    )
    check.add_argument("file", type=Path)
    check.add_argument("--fix", type=Path, metavar="OUT", help="write the repaired JSON to OUT")
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> int:
    if args.command == "check":
        try:
            return check(args.file, args.fix)
        except ContextDeskError as exc:
            return _fail(exc, 2)
    from desktop_app.services import Services

    try:
        services = Services.open(args.home, demo=args.demo)
    except ContextDeskError as exc:
        return _fail(exc)
    try:
        return _COMMANDS[args.command](services, args)
    except ContextDeskError as exc:
        return _fail(exc, 2 if isinstance(exc, HistoryFormatError) else 1)
    except KeyboardInterrupt:
        print("\nStopped.", file=sys.stderr)
        return 130
    finally:
        services.close()


def _fail(exc: ContextDeskError, status: int = 1) -> int:
    print(f"{exc.title}: {exc.message}", file=sys.stderr)
    if exc.info.details:
        print(exc.info.details, file=sys.stderr)
    return status


# -- chats ----------------------------------------------------------------------------------


def cmd_chat(services: Services, args: argparse.Namespace) -> int:
    store = services.store
    if args.chat_command == "new":
        settings = services.settings
        chat_settings = ContextSettings(max_tokens=settings.max_tokens)
        overrides = {
            "context_window": args.context_window,
            "compaction_threshold": args.threshold,
            "keep_recent_turns": args.keep_recent,
        }
        chat_settings = replace(
            chat_settings, **{k: v for k, v in overrides.items() if v is not None}
        )
        chat = store.create_chat(
            args.title,
            args.model or settings.model,
            args.system or settings.system_prompt,
            chat_settings,
        )
        print(chat.id)
    elif args.chat_command == "list":
        chats = store.list_chats()
        if args.json:
            print(json.dumps([_chat_json(c) for c in chats], ensure_ascii=False, indent=2))
        for c in [] if args.json else chats:
            print(f"{c.id}  {c.message_count:>5} messages  {c.model:<22} {c.title}")
    elif args.chat_command == "show":
        chat = store.find_chat(args.chat)
        messages = store.messages(chat.id)
        if args.json:
            print(
                json.dumps(
                    {
                        **_chat_json(chat),
                        "system_prompt": chat.system_prompt,
                        "messages": [
                            {
                                "id": m.id,
                                "role": m.role,
                                "status": m.status.value,
                                "content": m.to_api()["content"],
                            }
                            for m in messages
                        ],
                    },
                    ensure_ascii=False,
                    indent=2,
                )
            )
            return 0
        print(f"{chat.title}  ({chat.id}, {chat.model})")
        for m in messages:
            status = "" if m.status.value == "complete" else f" [{m.status.value}]"
            kinds = ", ".join(block_type(b) for b in m.blocks)
            print(f"\n{m.role}{status} ({kinds}):\n{m.text or '(no text)'}")
    elif args.chat_command == "set":
        chat = store.find_chat(args.chat)
        store.update_chat(chat.id, **_changes(chat, args.pairs))
    elif args.chat_command == "delete":
        chat = store.find_chat(args.chat)
        store.delete_chat(chat.id)
        print(f"Moved {chat.title!r} to the trash.")
    return 0


def _changes(chat: Any, pairs: Sequence[str]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    settings = asdict(chat.settings)
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in SETTABLE:
            raise ContextDeskError(
                "Unknown setting",
                f"{pair!r}: use KEY=VALUE with KEY one of {', '.join(SETTABLE)}.",
                kind="usage",
            )
        name = SETTABLE[key]
        if name in ("title", "model", "system_prompt"):
            fields[name] = value
            continue
        kind = type(settings[name])
        try:
            settings[name] = (
                value.lower() in ("1", "true", "yes", "on") if kind is bool else kind(value)
            )
        except ValueError:
            raise ContextDeskError(
                "Bad value", f"{key} must be a {kind.__name__}, not {value!r}.", kind="usage"
            ) from None
    return {**fields, "settings": ContextSettings(**settings)}


def _chat_json(chat: Any) -> dict[str, Any]:
    return {
        "id": chat.id,
        "title": chat.title,
        "model": chat.model,
        "messages": chat.message_count,
        "created_at": chat.created_at,
        "updated_at": chat.updated_at,
    }


# -- talking --------------------------------------------------------------------------------


class TerminalApprover:
    """Tools that ask run only when listed with --allow-tools; the rest are refused."""

    def __init__(self, allowed: set[str]) -> None:
        self.allowed = allowed

    def approve(self, request: ApprovalRequest, cancel: CancelToken) -> ApprovalDecision:
        if request.call.name in self.allowed:
            return ApprovalDecision.ALLOW_ONCE
        print(
            f"\n[refused {request.call.name}: {request.summary}; allow it with --allow-tools {request.call.name}]",
            file=sys.stderr,
        )
        return ApprovalDecision.DENY


def _printer(quiet: bool) -> Any:
    def show(event: LoopEvent) -> None:
        if quiet:
            return
        if isinstance(event, TextDelta):
            sys.stdout.write(event.text)
            sys.stdout.flush()
        elif isinstance(event, MessageAdded) and event.message.role == "assistant":
            sys.stdout.write("\n")  # each reply on its own lines
        elif isinstance(event, ToolCallStarted):
            print(
                f"\n[{event.call.name} {json.dumps(event.call.input, ensure_ascii=False)}]",
                file=sys.stderr,
            )

    return show


def cmd_send(services: Services, args: argparse.Namespace) -> int:
    chat = services.store.find_chat(args.chat)
    allowed = {t for t in args.allow_tools.split(",") if t}
    services.backend()  # no key: say so before anything is stored
    finished: TurnFinished = services.send(
        chat.id, args.text, TerminalApprover(allowed), on_event=_printer(args.json)
    )
    if args.json:
        reply = services.store.messages(chat.id)[-1]
        print(
            json.dumps(
                {
                    "reason": finished.reason.value,
                    "turns": finished.turn_count,
                    "reply": reply.text,
                    "error": asdict(finished.error) if finished.error else None,
                },
                ensure_ascii=False,
                indent=2,
            )
        )
    if finished.error:
        print(f"{finished.error.title}: {finished.error.message}", file=sys.stderr)
        return 1
    return 0


def cmd_repl(services: Services, args: argparse.Namespace) -> int:
    chat = services.store.find_chat(args.chat)
    print(f"{chat.title} — type a message; /pin /facts /compact /context /request /export /quit")
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
        command, _, rest = line.partition(" ")
        namespace = argparse.Namespace(
            chat=chat.id,
            json=False,
            request=False,
            text=rest,
            instructions=rest,
            dry_run=False,
            output=Path(rest) if rest else None,
            format="json",
            allow_tools="",
        )
        handlers = {
            "/pin": cmd_pin,
            "/facts": cmd_facts,
            "/compact": cmd_compact,
            "/context": cmd_context,
            "/request": lambda s, a: cmd_context(
                s, argparse.Namespace(**{**vars(a), "request": True})
            ),
            "/export": cmd_export,
        }
        try:
            if command in handlers:
                handlers[command](services, namespace)
            elif line.startswith("/"):
                print(
                    f"Unknown command {command}; try /pin /facts /compact /context /request /export /quit"
                )
            else:
                finished = services.send(
                    chat.id, line, TerminalApprover(set()), on_event=_printer(False)
                )
                print()
                if finished.error:
                    print(f"{finished.error.title}: {finished.error.message}")
        except ContextDeskError as exc:
            print(f"{exc.title}: {exc.message}")


# -- memory ----------------------------------------------------------------------------------


def cmd_pin(services: Services, args: argparse.Namespace) -> int:
    chat = services.store.find_chat(args.chat)
    if not args.text.strip():
        raise ContextDeskError("Nothing to pin", "Give the fact's text.", kind="usage")
    fact = Fact(args.text)
    services.store.save_context_state(chat.id, services.store.context_state(chat.id).pin(fact))
    print(fact.id)
    return 0


def cmd_facts(services: Services, args: argparse.Namespace) -> int:
    chat = services.store.find_chat(args.chat)
    facts = services.store.context_state(chat.id).facts
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "id": f.id,
                        "text": f.text,
                        "fields": [list(p) for p in f.fields],
                        "source": f.source.value,
                        "pending": f.pending,
                    }
                    for f in facts
                ],
                ensure_ascii=False,
                indent=2,
            )
        )
        return 0
    for f in facts:
        origin = (
            "suggested by Claude, not yet accepted"
            if f.pending
            else ("you" if f.source.value == "user" else "Claude")
        )
        print(f"{f.id}  [{origin}]  {f.text}")
    if not facts:
        print("No pinned facts.")
    return 0


def cmd_unpin(services: Services, args: argparse.Namespace) -> int:
    chat = services.store.find_chat(args.chat)
    state = services.store.context_state(chat.id)
    matches = [f for f in state.facts if f.id.startswith(args.fact_id)]
    if len(matches) != 1:
        why = "no fact has this id" if not matches else f"{len(matches)} facts start with it"
        raise ContextDeskError("Fact not found", f"{args.fact_id!r}: {why}.", kind="not_found")
    services.store.save_context_state(chat.id, state.unpin(matches[0].id))
    print(f"Unpinned: {matches[0].text}")
    return 0


def cmd_compact(services: Services, args: argparse.Namespace) -> int:
    chat = services.store.find_chat(args.chat)
    planner, _ = services.planner(chat)
    history = list(repair(services.store.messages(chat.id)).messages)
    preview = planner.compactor.preview(
        history,
        planner.state,
        chat.settings,
        model=planner.model,
        cancel=CancelToken(),
        instructions=args.instructions,
    )
    if not args.dry_run:  # applied before anything is printed: `| head` cannot stop it
        services.store.save_context_state(chat.id, apply_preview(planner.state, preview))
    a, b = preview.span.turns
    print(
        f"Summary of turns {a}–{b} ({len(preview.span.covers)} messages): ≈{preview.tokens_before:,} → ≈{preview.tokens_after:,} tokens\n"
    )
    print(preview.text)
    if preview.missing:
        print("\nNot in the summary or the pinned facts (pin them to keep them):")
        for item in preview.missing:
            print(f"  - {item}")
    if args.dry_run:
        print("\n(dry run: nothing was changed)")
    else:
        print("\nApplied. Undo is available in the context panel.")
    return 0


def cmd_context(services: Services, args: argparse.Namespace) -> int:
    chat = services.store.find_chat(args.chat)
    plan: Plan = services.plan(chat.id)
    if args.request:
        print(json.dumps(plan.request.body(), ensure_ascii=False, indent=2))
        return 0
    messages = services.store.messages(chat.id)
    if args.json:
        print(
            json.dumps(
                {
                    "window": plan.context_window,
                    "estimated_input": plan.estimated_input,
                    "calibration": plan.calibration,
                    "compaction_due": plan.compaction_due,
                    "forecast": plan.forecast,
                    "sections": {s.value: v for s, v in plan.sections.items()},
                    "messages": [
                        {
                            "id": m.id,
                            "role": m.role,
                            "blocks": [
                                {
                                    "type": block_type(b),
                                    "tokens": st.tokens,
                                    "sent_tokens": st.sent_tokens,
                                    "state": st.label,
                                }
                                for b, st in (
                                    (b, plan.block_status(m, j)) for j, b in enumerate(m.blocks)
                                )
                            ],
                        }
                        for m in messages
                    ],
                },
                ensure_ascii=False,
                indent=2,
            )
        )
        return 0
    print(
        f"{chat.title}: ≈{plan.estimated_input:,} of {plan.context_window:,} tokens (calibration ×{plan.calibration:.2f}); {plan.forecast}"
    )
    for section in Section:
        print(f"  {section.value:<16} {plan.sections[section]:>9,}")
    print()
    for m in messages:
        states = [plan.block_status(m, j) for j in range(len(m.blocks))]
        detail = ", ".join(
            f"{block_type(b)} {s.tokens:,} ({s.label})"
            for b, s in zip(m.blocks, states, strict=True)
        )
        print(f"{m.role:<9} {detail}")
    return 0


# -- files -----------------------------------------------------------------------------------


def cmd_export(services: Services, args: argparse.Namespace) -> int:
    chat = services.store.find_chat(args.chat)
    text = services.export_text(chat.id, args.format)
    if args.output:
        write_atomically(args.output, text.encode("utf-8"))
        print(f"Exported {chat.title!r} to {args.output}")
    else:
        sys.stdout.write(text)
    return 0


def cmd_import(services: Services, args: argparse.Namespace) -> int:
    from desktop_app.storage.exchange import MAX_IMPORT_BYTES, ImportFailed, import_chat

    try:
        size = args.file.stat().st_size
        if size > MAX_IMPORT_BYTES:
            raise ImportFailed(
                "File too large",
                f"{args.file} is {size / 1e6:.0f} MB; the limit is {MAX_IMPORT_BYTES // 2**20} MB.",
            )
        raw = args.file.read_bytes()
    except OSError as exc:
        raise ContextDeskError(
            "Cannot read the file", f"{args.file}: {exc.strerror or exc}", kind="io"
        ) from exc
    result = import_chat(services.store, raw)
    for change in result.repairs:
        print(f"repaired: {change}", file=sys.stderr)
    print(result.chat.id)
    return 0


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


_COMMANDS: dict[str, Callable[[Services, argparse.Namespace], int]] = {
    "chat": cmd_chat,
    "send": cmd_send,
    "repl": cmd_repl,
    "pin": cmd_pin,
    "facts": cmd_facts,
    "unpin": cmd_unpin,
    "compact": cmd_compact,
    "context": cmd_context,
    "export": cmd_export,
    "import": cmd_import,
}
