"""`contextdesk context`, `requests`, `branch`: what the next request holds, every request
sent, and the chat's branches."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING

from desktop_app import said
from desktop_app.cli.wording import context_json, which_request
from desktop_app.config.prices import format_money
from desktop_app.core.blocks import block_type
from desktop_app.core.errors import ContextDeskError, ErrorKind

if TYPE_CHECKING:
    from desktop_app.chats import Chat, Engine
    from desktop_app.context.plan import Plan
    from desktop_app.core.messages import Message


def cmd_context(engine: Engine, args: argparse.Namespace) -> int:
    from desktop_app.context.plan import Section

    chat = engine.find(args.chat)
    messages = chat.messages()
    engine.tool_servers.start(wait=True)  # the tools `send` would offer
    if args.request:
        return print_request(
            chat, chat.plans.plan(args.draft, history=messages), messages, args.draft
        )
    plan = chat.plans.plan(history=messages)
    cache = chat.costs.cache_outlook(plan)
    now = engine.clock()
    if args.json:
        out = {**context_json(plan, messages), "cache": cache.to_json(now)}
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    print(
        f"{chat.title}: ≈{plan.estimated_input:,} of {plan.context_window:,} tokens (calibration ×{plan.calibration:.2f}); {plan.forecast}"
    )
    print(said.cache_line(cache, now))
    if plan.stand_in or plan.retries:
        print(which_request(plan))
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


def print_request(chat: Chat, plan: Plan, history: Sequence[Message], draft: str = "") -> int:
    """Print the body of the request `plan` is — the one sending `draft` after `history`
    makes — or, when that send would compact first, say why it cannot be known yet (1)."""
    if chat.plans.compacts_first(plan, draft, history):
        print(
            "The next send compacts older turns first; the summary is not written yet, "
            "so its request cannot be shown exactly. Run `contextdesk compact "
            f"{chat.id}` first to see it.",
            file=sys.stderr,
        )
        return 1
    if plan.stand_in or plan.retries:
        print(which_request(plan), file=sys.stderr)
    print(json.dumps(plan.request.body(), ensure_ascii=False, indent=2))
    return 0


def cmd_requests(engine: Engine, args: argparse.Namespace) -> int:
    if args.find is not None and args.chat is None:
        return _find_everywhere(engine, args.find, as_json=args.json)
    if args.chat is None:
        raise ContextDeskError(
            "Which chat?",
            "Name a chat (or look in every chat with --find TEXT).",
            kind=ErrorKind.USAGE,
        )
    chat = engine.find(args.chat)
    if args.find is not None:
        found = chat.costs.trace(args.find)
        if args.json:
            print(json.dumps(found.to_json(), ensure_ascii=False, indent=2))
            return 0
        total = len(chat.costs.sent_requests())
        print(said.carried(found.text, [c.number for c in found.carriers], total, found.last))
        print(found.why if found.in_next else f"Not in the next request: {found.why}")
        return 0
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


def _find_everywhere(engine: Engine, text: str, *, as_json: bool) -> int:
    """Every chat whose requests carried `text`."""
    found = engine.requests_carrying(text)
    titles = {c.id: c.title for c in engine.list_chats()}
    if as_json:
        listed = [
            {
                "chat": chat_id,
                "title": titles.get(chat_id, ""),
                "requests": [c.number for c in hits],
                "last_sent_at": hits[-1].sent_at,
            }
            for chat_id, hits in found.items()
        ]
        print(json.dumps(listed, ensure_ascii=False, indent=2))
        return 0
    for chat_id, hits in found.items():
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(hits[-1].sent_at))
        numbers = said.request_numbers([c.number for c in hits])
        print(f"{chat_id}  {titles.get(chat_id, '(in the trash)')}  {numbers}  last {when}")
    if not found:
        print(f"No request of any chat carried {text!r}.", file=sys.stderr)
    return 0 if found else 1


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
