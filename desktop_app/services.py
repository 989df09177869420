"""The engine both faces (CLI and GUI) share: one place that wires paths, settings, the
store, secrets, the token counter, a backend, tools and a chat's planner together, and
runs one user message through the loop with every event persisted.

Persistence rules (architecture.md): the user's message is stored before anything is
sent; a streaming reply is checkpointed at most about once a second (never per token);
every finished message is stored when the loop announces it; context-state changes
(compaction, breaker, suggested facts) are saved in one transaction.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_app.config.paths import AppPaths, app_paths
from desktop_app.config.secrets import SecretStore
from desktop_app.config.settings import Settings, load
from desktop_app.context.state import ContextState
from desktop_app.core.blocks import TextBlock
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import ContextDeskError
from desktop_app.core.events import (
    ContextStateChanged,
    LoopEvent,
    MessageAdded,
    MessageStarted,
    RequestStarted,
    StreamEvent,
    TextDelta,
    TurnFinished,
)
from desktop_app.core.messages import Message, MessageStatus, user_text
from desktop_app.core.ports import Approver, ChatBackend
from desktop_app.core.repair import repair
from desktop_app.core.request import ChatRequest
from desktop_app.storage.store import ChatInfo, ChatStore
from desktop_app.tokens.calibration import Calibration
from desktop_app.tokens.counter import TokenCounter

if TYPE_CHECKING:  # the context engine, the loop and the tools load on first use, after
    # the window's first paint (their imports cost ~0.2 s of a 1 s start-up budget)
    from desktop_app.context.planner import ContextPlanner
    from desktop_app.context.projection import Plan
    from desktop_app.core.loop import LoopConfig, LoopPorts, LoopState
    from desktop_app.tools.registry import ToolRegistry

CHECKPOINT_EVERY_S = 1.0
DEMO_KEY = "contextdesk-offline-demo"
DEMO_MODEL = "contextdesk-demo"


@dataclass
class Services:
    paths: AppPaths
    settings: Settings
    store: ChatStore
    secrets: SecretStore
    demo: bool = False
    _counter: TokenCounter | None = field(default=None, init=False, repr=False)
    _backend: ChatBackend | None = field(default=None, init=False, repr=False)
    _simulator: object | None = field(default=None, init=False, repr=False)
    _connecting: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @classmethod
    def open(cls, home: str | Path | None = None, *, demo: bool = False) -> Services:
        paths = app_paths(home).ensure()
        settings = load(paths.settings_file, Settings)
        store = ChatStore.open(paths.database)
        store.recover()
        secrets = SecretStore(paths.config, plaintext_opt_in=settings.plaintext_key_opt_in)
        return cls(paths, settings, store, secrets, demo)

    def close(self) -> None:
        with self._connecting:
            self._disconnect()
        self.store.close()

    # -- parts, made on first use ------------------------------------------------------------

    @property
    def counter(self) -> TokenCounter:
        if self._counter is None:
            self._counter = TokenCounter(calibration=Calibration(self.store))
        return self._counter

    @property
    def simulator(self) -> Any:
        """The demo's local server (a `SimulatorServer`) once it runs, else None."""
        return self._simulator

    def backend(self) -> ChatBackend:
        """The demo model (a local simulator) or the real API with the key in use."""
        with self._connecting:  # the turn and the background thread may both ask first
            return self._connect()

    def _connect(self) -> ChatBackend:
        if self._backend is None:
            from desktop_app.api.backend import AnthropicBackend  # ~0.2 s: only when needed

            if self.demo:
                from desktop_app.api.simulator import SimulatorServer

                simulator = SimulatorServer().start()
                self._simulator = simulator
                self._backend = AnthropicBackend(DEMO_KEY, simulator.base_url, max_retries=0)
            else:
                key = self.secrets.get()
                if key is None:
                    raise ContextDeskError(
                        "No API key",
                        "Set ANTHROPIC_API_KEY, store a key with the GUI's Settings, or try "
                        "`contextdesk demo` for the offline demo model.",
                        kind="auth",
                    )
                self._backend = AnthropicBackend(key.value, self.settings.base_url or None)
        return self._backend

    def planner(
        self, chat: ChatInfo, backend: ChatBackend | None = None
    ) -> tuple[ContextPlanner, ToolRegistry]:
        """A chat's planner (with its saved context state) and its tools. Without a
        `backend` the planner connects on first use, so planning never needs a key."""
        from desktop_app.context.compaction import Compactor
        from desktop_app.context.planner import ContextPlanner
        from desktop_app.context.projection import Projector
        from desktop_app.tools.builtin import builtin_tools
        from desktop_app.tools.registry import ToolRegistry

        workspace = Path(self.settings.workspace) if self.settings.workspace else None
        projector = Projector(self.counter)
        planner = ContextPlanner(
            projector,
            Compactor(backend or _LazyBackend(self), self.counter),
            chat.settings,
            self.store.context_state(chat.id),
            model=self.model_of(chat),
            system=chat.system_prompt,
            workspace=str(workspace) if workspace else None,
            thinking_budget=self.settings.thinking_budget or None,
            auto_pin=self.settings.auto_pin,
        )
        tools = ToolRegistry(
            builtin_tools(files=workspace is not None, commands=self.settings.run_command_enabled)
            if self.settings.tools_enabled
            else [],
            workspace=workspace,
            on_pin=planner.propose_fact,
        )
        planner.tools = tools.specs()
        planner.trim_policies = tools.trim_policies()
        return planner, tools

    def model_of(self, chat: ChatInfo) -> str:
        return DEMO_MODEL if self.demo else chat.model

    def plan(self, chat_id: str, draft: str = "", stored: Sequence[Message] | None = None) -> Plan:
        """What the next request would be (with `draft` as the user's next message);
        `stored` is the chat's messages when the caller has loaded them already."""
        chat = self.store.chat(chat_id)
        planner, _ = self.planner(chat, backend=_NoBackend())
        history = list(repair(self.store.messages(chat_id) if stored is None else stored).messages)
        return planner.plan([*history, user_text(draft)] if draft else history)

    def export_text(self, chat_id: str, fmt: str) -> str:
        """A chat as JSON (with the request its next turn would send) or as Markdown."""
        from desktop_app.storage.exchange import export_chat, export_markdown

        if fmt == "md":
            return export_markdown(self.store, chat_id)
        messages = self.store.messages(chat_id)
        plan = self.plan(chat_id, stored=messages)
        doc = export_chat(
            self.store, chat_id, plan.request.body(), self.counter.blocks_of, messages
        )
        return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"

    def reconnect(self, *, demo: bool | None = None) -> None:
        """The key, the server or demo mode changed: the next request connects afresh."""
        with self._connecting:
            self._disconnect()
        if demo is not None:
            self.demo = demo

    def _disconnect(self) -> None:
        close = getattr(self._backend, "close", None)
        if close is not None:
            close()
        stop = getattr(self._simulator, "stop", None)
        if stop is not None:
            stop()
        self._backend = self._simulator = None

    # -- one turn -------------------------------------------------------------------------------

    def start_turn(
        self,
        chat_id: str,
        message: Message | None,
        approver: Approver,
        parts: tuple[ContextPlanner, ToolRegistry] | None = None,
    ) -> Turn:
        """Store the user's `message` (acknowledged: it is on disk) and make the turn that
        answers it; with no message, retry: answer the history as it stands, leaving a
        failed or interrupted last reply out of the context (it stays in the transcript).
        `parts` is a planner and tools the caller keeps (the GUI keeps one per open chat);
        otherwise fresh ones are made."""
        from desktop_app.core.loop import LoopConfig, LoopPorts, LoopState

        chat = self.store.chat(chat_id)
        backend = _LazyBackend(self)
        planner, tools = parts or self.planner(chat, backend)
        if message is not None:
            self.store.append_message(chat_id, message)
        history = list(repair(self.store.messages(chat_id)).messages)
        if message is None:
            while (
                history
                and history[-1].role == "assistant"
                and history[-1].status is not MessageStatus.COMPLETE
            ):
                planner.state = planner.state.exclude_message(history.pop().id)
            if not history or history[-1].role != "user":
                raise ContextDeskError(
                    "Nothing to retry", "The last reply finished; send a new message instead."
                )
            self.store.save_context_state(chat_id, planner.state)
        ports = LoopPorts(
            backend=backend, planner=planner, approver=approver, tools=tools, counter=self.counter
        )
        return Turn(
            self.store,
            chat_id,
            LoopState(history),
            ports,
            LoopConfig(context_window=chat.settings.context_window),
            planner,
            TurnRecorder(self.store, chat_id, self.counter),
        )

    def send(
        self,
        chat_id: str,
        text: str,
        approver: Approver,
        cancel: CancelToken | None = None,
        on_event: Callable[[LoopEvent], None] | None = None,
    ) -> TurnFinished:
        """Store `text` as the user's message, run the loop, persist what it says."""
        turn = self.start_turn(chat_id, user_text(text), approver)
        finished: TurnFinished | None = None
        for event in turn.events(cancel or CancelToken()):
            turn.record(event)
            if on_event is not None:
                on_event(event)
            if isinstance(event, TurnFinished):
                finished = event
        turn.finish()
        assert finished is not None  # run_turn always ends with TurnFinished
        return finished


@dataclass
class Turn:
    """One user message being answered, split so two threads can share the work:
    `events` runs the loop (a worker thread may iterate it); `record` and `finish`
    persist (on the thread that owns the database connection)."""

    store: ChatStore
    chat_id: str
    state: LoopState
    ports: LoopPorts
    config: LoopConfig
    planner: ContextPlanner
    recorder: TurnRecorder

    def events(self, cancel: CancelToken) -> Iterator[LoopEvent]:
        from desktop_app.core.loop import run_turn

        return run_turn(self.state, self.ports, cancel, self.config)

    def release_thread(self) -> None:
        """Call on the thread that iterated `events`, when it is done with them."""
        release = getattr(self.ports.backend, "release_thread", None)
        if release is not None:
            release()

    def record(self, event: LoopEvent) -> None:
        self.recorder.record(event)
        if isinstance(event, ContextStateChanged) and isinstance(event.state, ContextState):
            self.store.save_context_state(self.chat_id, event.state)

    def finish(self) -> None:
        """The loop has ended: keep what the planner learned (suggested facts, breaker)."""
        self.store.save_context_state(self.chat_id, self.planner.state)


@dataclass
class TurnRecorder:
    """Persists the loop's events: streaming checkpoints and finished messages."""

    store: ChatStore
    chat_id: str
    counter: TokenCounter
    streaming_id: str | None = None
    text: list[str] = field(default_factory=list)
    last_checkpoint: float = 0.0
    last_request: ChatRequest | None = None

    def record(self, event: LoopEvent) -> None:
        if isinstance(event, RequestStarted):
            self.last_request = event.request
        elif isinstance(event, MessageStarted):
            self.streaming_id, self.text = event.message_id, []
            self.last_checkpoint = 0.0  # the first words are saved at once, then ~1/s
        elif isinstance(event, TextDelta) and event.message_id == self.streaming_id:
            self.text.append(event.text)
            self.checkpoint()
        elif isinstance(event, MessageAdded):
            message = event.message
            if message.id == self.streaming_id:
                self.streaming_id = None
                self.store.checkpoint(self.chat_id, message)  # replaces the partial row
                self.learn(message)
            else:
                self.store.append_message(self.chat_id, message)

    def checkpoint(self) -> None:
        now = time.monotonic()
        if self.streaming_id is None or now - self.last_checkpoint < CHECKPOINT_EVERY_S:
            return
        text = "".join(self.text)
        if not text.strip():
            return  # nothing said yet: an empty row would only need cleaning up
        self.last_checkpoint = now
        partial = Message(
            "assistant", (TextBlock(text),), id=self.streaming_id, status=MessageStatus.STREAMING
        )
        self.store.checkpoint(self.chat_id, partial)

    def learn(self, message: Message) -> None:
        """The API's count of the prompt just sent calibrates the local estimate."""
        if self.last_request is not None and message.usage and message.usage.prompt_tokens:
            self.counter.learn_from_usage(self.last_request, message.usage.prompt_tokens)


class _LazyBackend:
    """Connects on the first request, so a chat can be opened and planned without a key
    (and without importing the SDK); a missing key becomes the turn's error."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self._used: list[ChatBackend] = []  # what this turn's thread opened connections on

    def stream(self, request: ChatRequest, cancel: CancelToken) -> Iterator[StreamEvent]:
        backend = self.services.backend()
        if backend not in self._used:
            self._used.append(backend)
        return backend.stream(request, cancel)

    def release_thread(self) -> None:
        """Release on the backends actually used: the key may have changed meanwhile."""
        for backend in self._used:
            release = getattr(backend, "release_thread", None)
            if release is not None:
                release()
        self._used.clear()


class _NoBackend:
    """For planning without a network: a preview never sends anything."""

    def stream(self, request: ChatRequest, cancel: CancelToken) -> Iterator[StreamEvent]:
        raise ContextDeskError("Not connected", "Previewing does not send anything.")
