"""The `contextdesk` command line: a face over the application layer (`desktop_app.chats`).

Everything the window can do to a chat's memory — pin, compact, preview the request,
export — the command line can do too, through the same `Chat` methods; this module only
parses and prints. CHAT is a chat id or a unique prefix of one. Errors print their title
and message on stderr and exit 1 — 2 for a command or value given the wrong way, and for
`check` on a file it cannot read — so scripts can rely on the status.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_app.config.prices import Price, format_money
from desktop_app.config.settings import SETTINGS, Settings
from desktop_app.core.blocks import block_type
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import ContextDeskError, ErrorKind
from desktop_app.core.events import (
    LoopEvent,
    MessageAdded,
    RetryWaiting,
    TextDelta,
    ToolCallStarted,
    TransitionReason,
    TurnFinished,
)
from desktop_app.core.ports import ApprovalDecision, ApprovalRequest
from desktop_app.storage.search import MARK_END, MARK_START

if TYPE_CHECKING:  # the engine loads only when a command needs it
    from desktop_app.chats import Chat, Engine
    from desktop_app.config.prices import Spend
    from desktop_app.context.projection import Plan
    from desktop_app.storage.chat_info import ChatInfo
    from desktop_app.storage.search import SearchHit

USAGE_KINDS = (ErrorKind.USAGE, ErrorKind.FORMAT)  # exit 2: the input, not the world


def run(args: argparse.Namespace) -> int:
    if args.command == "check":
        try:
            return check(args.file, args.fix)
        except ContextDeskError as exc:
            return _fail(exc, 2)
    from desktop_app.chats import Engine, log_unexpected

    try:
        engine = Engine.open(args.home, demo=args.demo)
    except ContextDeskError as exc:
        return _fail(exc)
    engine.keep_log()
    try:
        return _COMMANDS[args.command](engine, args)
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


def key_values(pairs: list[str]) -> dict[str, str]:
    assignments = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ContextDeskError(
                "Not KEY=VALUE", f"{pair!r}: give a value, as in {pair}=…", kind=ErrorKind.USAGE
            )
        assignments[key.strip()] = value
    return assignments


# -- chats ----------------------------------------------------------------------------------


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
            print(json.dumps([_chat_json(c) for c in chats], ensure_ascii=False, indent=2))
        for c in [] if args.json else chats:
            print(f"{c.id}  {c.message_count:>5} messages  {c.model:<22} {c.title}")
    elif args.chat_command == "show":
        chat = engine.find(args.chat)
        messages = chat.messages()
        if args.json:
            shown = {
                **_chat_json(chat.info),
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
                "cost": _spend_json(chat.costs.spend()),
            }
            print(json.dumps(shown, ensure_ascii=False, indent=2))
            return 0
        print(f"{chat.title}  ({chat.id}, {chat.info.model}) — cost: {chat.costs.spend().text()}")
        for m in messages:
            status = "" if m.status.value == "complete" else f" [{m.status.value}]"
            kinds = ", ".join(block_type(b) for b in m.blocks)
            print(f"\n{m.role}{status} ({kinds}):\n{m.text or '(no text)'}")
    elif args.chat_command == "set":
        for note in engine.find(args.chat).setup.change(key_values(args.pairs)):
            print(note, file=sys.stderr)
    elif args.chat_command == "delete":
        chat = engine.find(args.chat)
        chat.delete()
        print(f"Moved {chat.title!r} to the trash.")
    return 0


def _chat_json(chat: ChatInfo) -> dict[str, Any]:
    return {
        "id": chat.id,
        "title": chat.title,
        "model": chat.model,
        "messages": chat.message_count,
        "created_at": chat.created_at,
        "updated_at": chat.updated_at,
        "settings": asdict(chat.settings),
    }


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
    shown = _settings_json(settings)
    if wanted:
        shown = {key: shown[key] for key in wanted}
    if args.json:
        print(json.dumps(shown, ensure_ascii=False, indent=2))
        return 0
    for key, value in shown.items():
        print(f"{key} = {json.dumps(value, ensure_ascii=False)}")
    if changes:
        print(f"Saved to {engine.paths.settings_file}; new chats use it.", file=sys.stderr)
    return 0


def _settings_json(settings: Settings) -> dict[str, Any]:
    values = asdict(settings)
    return {spec.key: values[spec.attr] for spec in SETTINGS}


# -- talking --------------------------------------------------------------------------------


class TerminalApprover:
    """Tools that ask run only when listed with --allow-tools; the rest are refused."""

    def __init__(self, allowed: set[str]) -> None:
        self.allowed = allowed

    def approve(self, request: ApprovalRequest, cancel: CancelToken) -> ApprovalDecision:
        name = request.call.name
        if name in self.allowed:
            return ApprovalDecision.ALLOW_ONCE
        from desktop_app.chats.tool_servers import people_name

        name = people_name(name)
        print(
            f"\n[refused {name}: {request.summary}; allow it with --allow-tools {name}]",
            file=sys.stderr,
        )
        return ApprovalDecision.DENY


def _allowed_tools(names: str) -> set[str]:
    """--allow-tools: built-in tools by name, MCP tools as SERVER.TOOL (or as the model
    sees them)."""
    from desktop_app.chats.tool_servers import api_name

    return {api_name(n.strip()) for n in names.split(",") if n.strip()}


def _printer(quiet: bool) -> Callable[[LoopEvent], None]:
    def show(event: LoopEvent) -> None:
        if quiet:
            return
        if isinstance(event, TextDelta):
            sys.stdout.write(event.text)
            sys.stdout.flush()
        elif isinstance(event, MessageAdded) and event.message.role == "assistant":
            sys.stdout.write("\n")  # each reply on its own lines
        elif isinstance(event, RetryWaiting):
            sys.stderr.write(f"\r[{event.reason}: trying again in {event.seconds:.0f} s] ")
            sys.stderr.flush()
        elif isinstance(event, ToolCallStarted):
            print(
                f"\n[{event.call.name} {json.dumps(event.call.input, ensure_ascii=False)}]",
                file=sys.stderr,
            )

    return show


@contextlib.contextmanager
def _ctrl_c_stops(cancel: CancelToken) -> Iterator[None]:
    """While a reply streams, Ctrl-C stops it the way Stop does in the window (what was
    said is kept, as interrupted); a second Ctrl-C stops at once."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach only the main thread
        return

    def stop(_signum: int, _frame: object) -> None:
        if cancel.cancelled:
            raise KeyboardInterrupt
        cancel.cancel()

    previous = signal.signal(signal.SIGINT, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _send(chat: Chat, text: str, approver: TerminalApprover, quiet: bool) -> TurnFinished:
    cancel = CancelToken()
    with _ctrl_c_stops(cancel):
        return chat.turns.send(text, approver, cancel, on_event=_printer(quiet))


def cmd_send(engine: Engine, args: argparse.Namespace) -> int:
    chat = engine.find(args.chat)
    allowed = _allowed_tools(args.allow_tools)
    engine.connection.backend()  # no key: say so before anything is stored
    engine.tool_servers.start(
        wait=True
    )  # their tools are in the first request, or said to be missing
    finished = _send(chat, args.text, TerminalApprover(allowed), args.json)
    if args.json:
        reply = chat.messages()[-1]
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
    if finished.reason is TransitionReason.CANCELLED:
        print("\nStopped; what was said so far is kept.", file=sys.stderr)
        return 130
    if finished.error:
        print(f"{finished.error.title}: {finished.error.message}", file=sys.stderr)
        return 1
    return 0


REPL_COMMANDS = "/pin /facts /compact /context /request /export /quit"


def cmd_repl(engine: Engine, args: argparse.Namespace) -> int:
    chat = engine.find(args.chat)
    approver = TerminalApprover(_allowed_tools(args.allow_tools))
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
        from desktop_app.cli_parser import parse

        args = parse(argv)
        _COMMANDS[args.command](engine, args)
    elif line.startswith("/"):
        print(f"Unknown command {command}; try {REPL_COMMANDS}")
    else:
        finished = _send(chat, line, approver, quiet=False)
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


# -- memory ----------------------------------------------------------------------------------


def cmd_pin(engine: Engine, args: argparse.Namespace) -> int:
    print(engine.find(args.chat).memory.pin(args.text).id)
    return 0


def cmd_facts(engine: Engine, args: argparse.Namespace) -> int:
    facts = engine.find(args.chat).state.facts
    if args.json:
        listed = [
            {
                "id": f.id,
                "text": f.text,
                "fields": [list(p) for p in f.fields],
                "source": f.source.value,
                "pending": f.pending,
            }
            for f in facts
        ]
        print(json.dumps(listed, ensure_ascii=False, indent=2))
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


def cmd_unpin(engine: Engine, args: argparse.Namespace) -> int:
    chat = engine.find(args.chat)
    fact = chat.memory.fact(args.fact_id)
    chat.memory.unpin(fact)
    print(f"Unpinned: {fact.text}")
    return 0


def cmd_compact(engine: Engine, args: argparse.Namespace) -> int:
    chat = engine.find(args.chat)
    preview = chat.memory.preview_compaction(args.instructions)
    if not args.dry_run:  # applied before anything is printed: `| head` cannot stop it
        chat.memory.apply_compaction(preview)
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


def cmd_context(engine: Engine, args: argparse.Namespace) -> int:
    from desktop_app.context.projection import Section

    chat = engine.find(args.chat)
    messages = chat.messages()
    engine.tool_servers.start(wait=True)  # the tools `send` would offer
    if args.request:
        plan: Plan = chat.plans.plan(args.draft, history=messages)
        if chat.plans.compacts_first(plan, args.draft, messages):
            print(
                "The next send compacts older turns first; the summary is not written yet, "
                "so its request cannot be shown exactly. Run `contextdesk compact "
                f"{chat.id}` first to see it.",
                file=sys.stderr,
            )
            return 1
        if plan.stand_in or plan.retries:
            print(_which_request(plan), file=sys.stderr)
        print(json.dumps(plan.request.body(), ensure_ascii=False, indent=2))
        return 0
    plan = chat.plans.plan(history=messages)
    if args.json:
        print(json.dumps(_context_json(plan, messages), ensure_ascii=False, indent=2))
        return 0
    print(
        f"{chat.title}: ≈{plan.estimated_input:,} of {plan.context_window:,} tokens (calibration ×{plan.calibration:.2f}); {plan.forecast}"
    )
    if plan.stand_in or plan.retries:
        print(_which_request(plan))
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


def _which_request(plan: Plan) -> str:
    if plan.retries:
        return "The last reply did not finish: this is the request `retry` would send."
    return (
        f'No --draft: a one-word message ("{plan.stand_in}") stands for it, so that the '
        "request ends as a sent one does."
    )


def cmd_requests(engine: Engine, args: argparse.Namespace) -> int:
    chat = engine.find(args.chat)
    if args.diff:
        diff = chat.costs.diff_requests(*args.diff)
        if args.json:
            print(json.dumps({"first_change": diff.first_change, "why": diff.why}, indent=2))
        else:
            print(diff.why.capitalize() + ".")
            print("\n".join(diff.lines))
        return 0
    if args.number is not None:
        print(json.dumps(chat.costs.sent_body(args.number), ensure_ascii=False, indent=2))
        return 0
    sent = chat.costs.sent_requests()
    if args.json:
        print(json.dumps([r.to_json() for r in sent], ensure_ascii=False, indent=2))
        return 0
    if not sent:
        print(f"{chat.title}: no requests sent yet.")
        return 0
    prices = engine.prices()
    for r in sent:
        cost = prices.cost(r.model, r.usage) if r.usage else None
        money = format_money(cost, prices.currency) if cost is not None else "—"
        usage = (
            f"in {r.usage.input_tokens:,} · cache write {r.usage.cache_creation_input_tokens:,}"
            f" · cache read {r.usage.cache_read_input_tokens:,} · out {r.usage.output_tokens:,}"
            if r.usage
            else "no usage reported"
        )
        took = f"{r.seconds:.1f} s" if r.seconds is not None else "no reply"
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r.sent_at))
        what = "summary request" if r.purpose == "compaction" else f"{r.message_count} messages"
        print(f"#{r.number:<4} {when}  {r.model}  {what}  {took}  {r.status}  {usage}  {money}")
    print(f"Total: {chat.costs.spend().text()} (prices of {prices.updated})")
    return 0


def cmd_branch(engine: Engine, args: argparse.Namespace) -> int:
    """List a chat's branches (the shown one starred), or show branch N."""
    chat = engine.find(args.chat)
    branches = chat.branches.all()
    if args.number is not None:
        if not 1 <= args.number <= len(branches):
            raise ContextDeskError(
                "No such branch",
                f"{chat.title} has {len(branches)} branch(es): 1 to {len(branches)}.",
                kind=ErrorKind.USAGE,
            )
        chat.branches.show(branches[args.number - 1].leaf)
        branches = chat.branches.all()
    if args.json:
        print(json.dumps([asdict(b) for b in branches], indent=2))
        return 0
    for number, branch in enumerate(branches, 1):
        differs = chat.branches.message(branch.differs_id)
        who = "You" if differs.role == "user" else "Claude"
        words = " ".join(differs.text.split())[:60] or f"({len(differs.blocks)} blocks)"
        print(
            f"{'*' if branch.shown else ' '} {number}  {branch.length} messages · "
            f"message {branch.differs_at}, {who}: {words}"
        )
    return 0


def cmd_spend(engine: Engine, args: argparse.Namespace) -> int:
    """What the requests of every chat cost: today, this month, or all time."""
    now = time.localtime()
    starts = {
        "today": time.mktime((now.tm_year, now.tm_mon, now.tm_mday, 0, 0, 0, 0, 0, -1)),
        "month": time.mktime((now.tm_year, now.tm_mon, 1, 0, 0, 0, 0, 0, -1)),
        "all": None,
    }
    spend = engine.spend(starts[args.period])
    if args.json:
        print(json.dumps({"period": args.period, **_spend_json(spend)}, indent=2))
        return 0
    label = {"today": "Today", "month": "This month", "all": "All time"}[args.period]
    print(f"{label}: {spend.text()} (prices of {engine.prices().updated})")
    return 0


def cmd_prices(engine: Engine, args: argparse.Namespace) -> int:
    """The price table, or one model's price entered."""
    if args.action == "set":
        if not args.model:
            raise ContextDeskError(
                "Which model?", "prices set MODEL input=… output=…", kind=ErrorKind.USAGE
            )
        values = {}
        for key, text in key_values(args.pairs).items():
            try:
                values[key] = float(text)
            except ValueError:
                raise ContextDeskError(
                    "Not a price", f"{key}={text!r}: give a number", kind=ErrorKind.USAGE
                ) from None
        path = engine.set_price(args.model, values)
        price = engine.prices().price(args.model)
        assert price is not None
        print(f"{args.model}: {_price_line(price)} (kept in {path})")
        return 0
    table = engine.prices()
    if args.json:
        models = {name: price.to_json() for name, price in table.models.items()}
        print(
            json.dumps(
                {
                    "updated": table.updated,
                    "currency": table.currency,
                    "per_tokens": table.per_tokens,
                    "models": models,
                },
                indent=2,
            )
        )
        return 0
    print(f"Prices in {table.currency} per {table.per_tokens:,} tokens, of {table.updated}:")
    for name, price in table.models.items():
        print(f"  {name:<22} {_price_line(price)}")
    for problem in table.problems:
        print(f"  ({problem})", file=sys.stderr)
    return 0


def _price_line(price: Price) -> str:
    line = (
        f"in {price.input:g} · out {price.output:g} · cache write {price.cache_write_5m:g} (5 min) "
        f"/ {price.cache_write_1h:g} (1 h) · cache read {price.cache_read:g}"
    )
    if price.above is not None:
        line += f" · over {price.above[0]:,} prompt tokens: in {price.above[1].input:g} · out {price.above[1].output:g}"
    return line


def _spend_json(spend: Spend) -> dict[str, Any]:
    return {
        "amount": round(spend.cost, 6),
        "currency": spend.currency,
        "requests": spend.requests,
        "priced_requests": spend.priced,
        "models_without_a_price": list(spend.unpriced_models),
    }


def _context_json(plan: Plan, messages: list[Any]) -> dict[str, Any]:
    return {
        "window": plan.context_window,
        "estimated_input": plan.estimated_input,
        "calibration": plan.calibration,  # scales the totals; block tokens are unscaled
        "calibration_by_kind": plan.counter.calibration.factors(plan.request.model),
        "compaction_due": plan.compaction_due,
        "forecast": plan.forecast,
        "sections": {s.value: v for s, v in plan.sections.items()},
        "stand_in": plan.stand_in,  # the words standing for an empty draft ("": none)
        "retries": plan.retries,  # the unfinished reply Retry answers again ("": none)
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
                    for b, st in ((b, plan.block_status(m, j)) for j, b in enumerate(m.blocks))
                ],
            }
            for m in messages
        ],
    }


# -- files -----------------------------------------------------------------------------------


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
        print(json.dumps([_hit_json(hit) for hit in hits], ensure_ascii=False, indent=2))
    bold = sys.stdout.isatty()
    for hit in [] if args.json else hits:
        where = "#" if hit.message_id is None else f"#{hit.position + 1}"
        print(f"{hit.chat_id}  {hit.chat_title}  {where}  {_one_line(hit.snippet, bold=bold)}")
    if not hits:
        print(f"Nothing matches {args.text!r}.", file=sys.stderr)
    return 0 if hits else 1


def _hit_json(hit: SearchHit) -> dict[str, Any]:
    return {
        "chat_id": hit.chat_id,
        "chat_title": hit.chat_title,
        "message_id": hit.message_id,
        "message_number": hit.position + 1 if hit.message_id else None,
        "snippet": _one_line(hit.snippet, bold=False),
    }


def _one_line(snippet: str, *, bold: bool) -> str:
    """The snippet on one line, its match in bold on a terminal (plain for a pipe)."""
    start, end = ("\033[1m", "\033[0m") if bold else ("", "")
    text = " ".join(snippet.split())
    return text.replace(MARK_START, start).replace(MARK_END, end)


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
    from desktop_app.chats.checking import check_file

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


def cmd_project(engine: Engine, args: argparse.Namespace) -> int:
    from desktop_app import cli_project

    return cli_project.cmd_project(engine, args)


def cmd_mcp(engine: Engine, args: argparse.Namespace) -> int:
    from desktop_app import cli_mcp

    return cli_mcp.cmd_mcp(engine, args)


_COMMANDS: dict[str, Callable[[Engine, argparse.Namespace], int]] = {
    "chat": cmd_chat,
    "settings": cmd_settings,
    "send": cmd_send,
    "repl": cmd_repl,
    "prices": cmd_prices,
    "pin": cmd_pin,
    "facts": cmd_facts,
    "unpin": cmd_unpin,
    "compact": cmd_compact,
    "context": cmd_context,
    "requests": cmd_requests,
    "branch": cmd_branch,
    "spend": cmd_spend,
    "export": cmd_export,
    "import": cmd_import,
    "search": cmd_search,
    "mcp": cmd_mcp,
    "project": cmd_project,
}
