"""`contextdesk pin`, `facts`, `unpin`, `compact`, `exclude`, `include`: what a chat
remembers for the model."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from desktop_app import said
from desktop_app.cli.arguments import numbered
from desktop_app.cli.context import print_request

if TYPE_CHECKING:
    from desktop_app.chats import Engine, FactChoice, Handoff, HandoffPreview
    from desktop_app.config.prices import CacheOutlook


def cmd_pin(engine: Engine, args: argparse.Namespace) -> int:
    pinned = engine.find(args.chat).memory.pin(args.text)
    assert pinned.fact is not None  # (pinning makes one)
    print(pinned.fact.id)
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
        who = said.fact_author(f)
        origin = f"suggested by {who}, not yet accepted" if f.pending else who
        print(f"{f.id}  [{origin}]  {f.text}")
    if not facts:
        print("No pinned facts.")
    return 0


def cmd_accept(engine: Engine, args: argparse.Namespace) -> int:
    """A suggested fact pinned, as suggested or with the words given."""
    chat = engine.find(args.chat)
    fact = chat.memory.fact(args.fact_id)
    if not fact.pending:
        print(f"Already pinned: {fact.text}")
        return 0
    chat.memory.accept_fact(fact, args.text)
    print(f"Pinned: {args.text.strip() if args.text and args.text.strip() else fact.text}")
    return 0


def cmd_unpin(engine: Engine, args: argparse.Namespace) -> int:
    chat = engine.find(args.chat)
    fact = chat.memory.fact(args.fact_id)
    chat.memory.unpin(fact)
    print(f"{'Rejected' if fact.pending else 'Unpinned'}: {fact.text}")
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


def cmd_exclude(engine: Engine, args: argparse.Namespace) -> int:
    """`exclude CHAT N` leaves message N out of the context (the transcript keeps it);
    `include CHAT N` puts it back. With --dry-run, the next request as it would be."""
    excluded = args.command == "exclude"
    chat = engine.find(args.chat)
    messages = chat.messages()
    message = numbered(messages, args.number)
    changed = chat.state.exclude_message(message.id, excluded)
    if args.dry_run:  # as the window's cost preview plans it
        engine.tool_servers.start(wait=True)  # the tools the request offers
        return print_request(chat, chat.plans.plan_if(messages, state=changed), messages)
    cost = chat.memory.set_excluded(message, excluded, history=messages).cost
    done = "left out of the context" if excluded else "back in the context"
    print(f"Message {args.number} is {done}." + (f" {said.input_cost(cost)}" if cost else ""))
    return 0


def cmd_handoff(engine: Engine, args: argparse.Namespace) -> int:
    """Continue the chat in a new one; with --dry-run, only say what it would start with."""
    from desktop_app.chats import FactChoice, hand_off, preview_handoff

    chat = engine.find(args.chat)
    preview = preview_handoff(chat, args.keep_turns, use_model=not args.no_model)
    default = FactChoice.MOVE if args.move_facts else FactChoice.COPY
    dropped = {chat.memory.fact(ref).id for ref in args.drop_fact}
    choices = {f.id: FactChoice.DROP if f.id in dropped else default for f in preview.facts}
    if args.dry_run:
        _print_handoff(preview, choices, None, as_json=args.json)
        return 0
    old_next = chat.costs.cache_outlook(chat.plans.plan())  # (before moved facts leave it)
    made = hand_off(engine, chat, preview, choices=choices)
    first = made.chat.costs.cache_outlook(made.chat.plans.plan())
    _print_handoff(
        preview, choices, (made, first, old_next, engine.prices().currency), as_json=args.json
    )
    return 0


def _print_handoff(
    preview: HandoffPreview,
    choices: dict[str, FactChoice],
    made: tuple[Handoff, CacheOutlook, CacheOutlook, str] | None,
    *,
    as_json: bool,
) -> None:
    facts = [{"id": f.id, "text": f.text, "choice": choices[f.id].value} for f in preview.facts]
    if as_json:
        out: dict[str, Any] = {
            "from": preview.chat_id,
            "summary": preview.summary,
            "summary_by": "model" if preview.by_model else "digest",
            "kept_messages": len(preview.kept),
            "facts": facts,
            "missing": list(preview.missing),
        }
        if made is not None:
            new, first, old, _ = made
            out |= {
                "id": new.chat.id,
                "title": new.chat.title,
                "dropped": list(new.dropped),
                "missing": list(new.missing),
                "first_request": {"tokens": first.input_tokens, "cost": first.now},
                "old_next_request": {"tokens": old.input_tokens, "cost": old.now},
            }
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return
    by = "the model's" if preview.by_model else "a digest (no request)"
    print(f"Continue “{preview.title}” in a new chat:")
    for f in facts:
        print(f"  fact ({f['choice']}): {f['text']}")
    print(f"  summary, {by}:" if preview.summary else "  no summary: every turn is carried")
    for line in preview.summary.splitlines():
        print(f"    {line}")
    print(f"  the last turns, verbatim: {len(preview.kept)} messages")
    if made is None:
        print("(dry run: nothing was made)")
        return
    new, first, old, currency = made
    print(new.chat.id)
    print(
        f"“{new.chat.title}”: its first request ≈{first.input_tokens:,} tokens "
        f"({said.estimated_money(first.now, currency)}); the old chat's next "
        f"≈{old.input_tokens:,} tokens ({said.estimated_money(old.now, currency)})"
    )
    if new.dropped:
        print("Not carried (you left them): " + "; ".join(new.dropped))
    if new.missing:
        print(
            "In the old turns, but in neither the summary nor a carried fact: "
            + ", ".join(new.missing)
        )
