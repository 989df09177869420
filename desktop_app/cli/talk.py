"""`contextdesk send`: a message sent and its reply streamed to the terminal, as the
window's Send does."""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import asdict
from typing import TYPE_CHECKING

from desktop_app.cli.arguments import allowed_tools
from desktop_app.core.cancel import CancelToken
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

if TYPE_CHECKING:
    from desktop_app.chats import Chat, Engine


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


def send(chat: Chat, text: str, approver: TerminalApprover, quiet: bool) -> TurnFinished:
    cancel = CancelToken()
    with _ctrl_c_stops(cancel):
        return chat.turns.send(text, approver, cancel, on_event=_printer(quiet))


def cmd_send(engine: Engine, args: argparse.Namespace) -> int:
    chat = engine.find(args.chat)
    allowed = allowed_tools(args.allow_tools)
    engine.connection.backend()  # no key: say so before anything is stored
    engine.tool_servers.start(
        wait=True
    )  # their tools are in the first request, or said to be missing
    finished = send(chat, args.text, TerminalApprover(allowed), args.json)
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
