"""`contextdesk send`, `edit`, `regenerate`, `retry`: a turn started as the window starts
it (`chat.turns.start`) and its reply streamed to the terminal; with --dry-run, the
request it would send, and nothing changed."""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING

from desktop_app.cited import cited_runs, web_step
from desktop_app.cli.arguments import allowed_tools, numbered
from desktop_app.cli.context import print_request
from desktop_app.core.blocks import Block, OpaqueBlock, TextBlock
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import ContextDeskError, ErrorKind
from desktop_app.core.events import (
    BlockFinished,
    LoopEvent,
    MessageAdded,
    RetryWaiting,
    TextDelta,
    ToolCallStarted,
    TransitionReason,
    TurnFinished,
)
from desktop_app.core.messages import Message
from desktop_app.core.ports import ApprovalDecision, ApprovalRequest, Approver

if TYPE_CHECKING:
    from pathlib import Path

    from desktop_app.chats import Chat, Engine, Turn


class TerminalApprover:
    """Tools that ask run only when listed with --allow-tools; the rest are refused."""

    def __init__(self, allowed: set[str]) -> None:
        self.allowed = allowed

    def approve(self, request: ApprovalRequest, cancel: CancelToken) -> ApprovalDecision:
        name = request.call.name
        if name in self.allowed:
            return ApprovalDecision.ALLOW_ONCE
        from desktop_app.chats import people_name

        name = people_name(name)
        print(
            f"\n[refused {name}: {request.summary}; allow it with --allow-tools {name}]",
            file=sys.stderr,
        )
        return ApprovalDecision.DENY


def _printer(quiet: bool) -> Callable[[LoopEvent], None]:
    def show(event: LoopEvent) -> None:
        if quiet:
            return
        if isinstance(event, TextDelta):
            sys.stdout.write(event.text)
            sys.stdout.flush()
        elif isinstance(event, MessageAdded) and event.message.role == "assistant":
            sys.stdout.write("\n")  # each reply on its own lines
            for run in cited_runs(event.message.blocks).values():  # the answer's sources
                for source in run.sources:
                    where = f", {source.where}" if source.where else ""
                    print(f"  [{source.number}] {source.title}{where} {source.url}".rstrip())
        elif isinstance(event, BlockFinished) and isinstance(event.block, OpaqueBlock):
            if step := web_step(event.block):  # a search or a page read, on the API's side
                print(f"\n[{step}]", file=sys.stderr)
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


def send(chat: Chat, text: str, approver: TerminalApprover, quiet: bool) -> TurnFinished:
    cancel = CancelToken()
    with _ctrl_c_stops(cancel):
        return chat.turns.send(text, approver, cancel, on_event=_printer(quiet))


def cmd_send(engine: Engine, args: argparse.Namespace) -> int:
    chat = engine.find(args.chat)
    attached = []  # MCP resources, each as its blocks (its text under its URI, or an image)
    for ref in args.resource:
        server, _, uri = ref.partition(":")
        if not server or not uri:
            raise ContextDeskError(
                "Which resource?",
                f"{ref!r}: give SERVER:URI (see `contextdesk mcp resources`).",
                kind=ErrorKind.USAGE,
            )
        attached += engine.tool_servers.resource_blocks(server, uri)
    for path in args.attach:
        attached.append(_attached(engine, chat, path, args.attach_as))
    message = Message("user", (*attached, TextBlock(args.text)))
    return _answer(
        engine,
        chat,
        args,
        lambda approver: chat.turns.start(message, approver, over_budget=args.over_budget),
    )


def _attached(engine: Engine, chat: Chat, path: Path, how: str) -> Block:
    """A file for the message: a PDF as a document (or its text), a text file quoted; its
    tokens said on stderr before anything is sent."""
    from desktop_app.chats import attach_file, count_document

    block, said = attach_file(chat, path, engine.counter, as_document=how == "document")
    if isinstance(block, OpaqueBlock) and block.type == "document":
        counted = count_document(engine.connection, chat.model, block)
        said += f" · counted by the API: {counted:,} tokens (exact)" if counted is not None else ""
    print(said, file=sys.stderr)
    return block


def cmd_edit(engine: Engine, args: argparse.Namespace) -> int:
    """Message N rewritten: a new branch beside it, answered (the window's Edit)."""
    chat = engine.find(args.chat)
    messages = chat.messages()
    message = _yours(messages, args.number)
    edited = chat.branches.edited(message, args.text)  # an empty edit: said before anything
    if args.dry_run:
        engine.tool_servers.start(wait=True)  # the tools the request offers
        plan = chat.plans.planning(args.text, messages, beside=message)()
        return print_request(chat, plan, [*messages[: args.number - 1], edited])
    return _answer(
        engine,
        chat,
        args,
        lambda approver: chat.turns.start(
            edited, approver, beside=message.id, over_budget=args.over_budget
        ),
    )


def cmd_regenerate(engine: Engine, args: argparse.Namespace) -> int:
    """The question reply N answers, answered again beside it (the window's Regenerate)."""
    chat = engine.find(args.chat)
    messages = chat.messages()
    question = chat.branches.prompt_of(_reply(messages, args.number), messages)
    if args.dry_run:
        engine.tool_servers.start(wait=True)
        plan = chat.plans.answering_again(question.id, messages)()
        answered = messages[: [m.id for m in messages].index(question.id) + 1]
        return print_request(chat, plan, answered)
    return _answer(
        engine,
        chat,
        args,
        lambda approver: chat.turns.start(
            None, approver, after=question.id, over_budget=args.over_budget
        ),
    )


def cmd_retry(engine: Engine, args: argparse.Namespace) -> int:
    """The last message answered again after a failed or interrupted reply, beside it
    (the window's Retry)."""
    from desktop_app.chats import can_retry, retry_point

    chat = engine.find(args.chat)
    messages = chat.messages()
    if not args.dry_run:  # (with nothing to retry, `turns.start` says so)
        after = retry_point(messages)
        return _answer(
            engine,
            chat,
            args,
            lambda approver: chat.turns.start(
                None, approver, after=after, over_budget=args.over_budget
            ),
        )
    if not can_retry(messages):  # as `turns.start` would refuse it
        raise ContextDeskError(
            "Nothing to retry",
            "The last reply finished; send a new message instead.",
            kind=ErrorKind.NOTHING_TO_RETRY,
        )
    engine.tool_servers.start(wait=True)
    return print_request(chat, chat.plans.next_planning("", messages)(), messages)


def _answer(
    engine: Engine, chat: Chat, args: argparse.Namespace, start: Callable[[Approver], Turn]
) -> int:
    """Start a turn as the window does (`start` stores what it answers) and answer it
    here, the reply streaming to stdout (or, with --json, its result at the end)."""
    approver = TerminalApprover(allowed_tools(args.allow_tools))
    engine.connection.backend()  # no key: say so before anything is stored
    engine.tool_servers.start(wait=True)  # their tools are in the first request, or said missing
    cancel = CancelToken()
    with _ctrl_c_stops(cancel):
        finished = chat.turns.answer(start(approver), cancel, on_event=_printer(args.json))
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


def _yours(messages: Sequence[Message], number: int) -> Message:
    """Message N, which must be one the user wrote (an edit is of their words)."""
    message = numbered(messages, number)
    if message.role != "user" or message.is_tool_results:
        whose = "a tool's result" if message.role == "user" else "Claude's reply"
        raise ContextDeskError(
            "Not your message",
            f"Message {number} is {whose}: only a message you wrote can be edited "
            "(a reply is answered again with `regenerate`).",
            kind=ErrorKind.USAGE,
        )
    return message


def _reply(messages: Sequence[Message], number: int | None) -> Message:
    """Reply N (Claude's), or the last reply when no number is given."""
    if number is not None:
        message = numbered(messages, number)
        if message.role != "assistant":
            raise ContextDeskError(
                "Not a reply",
                f"Message {number} is yours: regenerate takes a reply of Claude's "
                "(a message of yours is rewritten with `edit`).",
                kind=ErrorKind.USAGE,
            )
        return message
    replies = [m for m in messages if m.role == "assistant"]
    if not replies:
        raise ContextDeskError(
            "Nothing to regenerate",
            "Claude has not replied in this chat yet.",
            kind=ErrorKind.NOTHING_TO_RETRY,
        )
    return replies[-1]
