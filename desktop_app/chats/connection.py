"""The backend in use: Claude through the API key, or the offline demo's simulator.

One `Connection` per app. It connects on the first request (so a chat opens and plans
without a key, and without importing the SDK), is replaced when the key, the server or
demo mode changes, and hands every turn a `LazyBackend` that finds the current backend
when it sends.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from desktop_app.config.secrets import SecretStore
from desktop_app.config.settings import Settings
from desktop_app.core.errors import ContextDeskError, ErrorKind

if TYPE_CHECKING:
    # Types only: the loop's events and requests load with the first chat; the SDK
    # adapter on first use (~0.2 s, and the SDK ~2.5 s).
    from desktop_app.api.simulator import SimulatorServer
    from desktop_app.core.cancel import CancelToken
    from desktop_app.core.events import StreamEvent
    from desktop_app.core.ports import ModelInfo, ServerBackend
    from desktop_app.core.request import ChatRequest

DEMO_KEY = "contextdesk-offline-demo"


class Connection:
    def __init__(
        self,
        secrets: SecretStore,
        settings: Callable[[], Settings],
        *,
        demo: bool,
        demo_cache: Path | None = None,
    ) -> None:
        self.secrets = secrets
        self.demo = demo
        self.demo_cache = demo_cache  # the demo simulator's prompt cache, between runs
        self._settings = settings  # read at connect time: Settings may change the server
        self._backend: ServerBackend | None = None
        self._made: list[ServerBackend] = []  # every backend yet: threads release on each
        self.simulator: SimulatorServer | None = None  # the demo's local server, once it runs
        self._lock = threading.Lock()  # a turn and the background thread may both connect

    def server(self) -> str:
        """Where requests go, as the ledger names it: the base URL (or the offline demo)."""
        if self.demo:
            return "offline demo (simulator)"
        from desktop_app.api.backend import ANTHROPIC_HOST

        return self._base_url() or f"https://{ANTHROPIC_HOST}"

    def server_tools(self) -> bool:
        """May requests offer the API's own tools (web search, web fetch)? Anthropic's
        API runs them, and the offline simulator plays them; other servers refuse them."""
        return self._anthropic_only(self._settings().server_tools)

    def prompt_caching(self) -> bool:
        """Will requests carry `cache_control`? Decided as the backend decides it (only
        Anthropic's API takes the markers), from the settings, without connecting."""
        if self.demo:
            return True  # the offline simulator keeps a prompt cache as the API does
        return self._anthropic_only(self._settings().prompt_cache)

    def _anthropic_only(self, choice: str) -> bool:
        """A setting of "auto" (Anthropic's API — or the demo that plays it — only), "on"
        (the server set too: a proxy that passes it on) or "off"."""
        if choice != "auto":
            return choice == "on"
        if self.demo:
            return True
        from desktop_app.api.backend import is_anthropic

        return is_anthropic(self._base_url())

    def _base_url(self) -> str | None:
        """The server Settings name, else ANTHROPIC_BASE_URL (None: Anthropic's API)."""
        return self._settings().base_url or os.environ.get("ANTHROPIC_BASE_URL")

    def backend(self) -> ServerBackend:
        """Connect if not yet connected. Raises `auth` when there is no key."""
        with self._lock:
            if self._backend is None:
                self._backend = self._connect()
                self._made.append(self._backend)
            return self._backend

    def _connect(self) -> ServerBackend:
        from desktop_app.api.backend import AnthropicBackend, Deadlines

        settings = self._settings()
        deadlines = Deadlines(
            first_event_s=settings.first_word_timeout, idle_s=settings.quiet_timeout
        )
        if self.demo:
            from desktop_app.api.simulator import SimulatorServer

            self.simulator = SimulatorServer(cache_file=self.demo_cache, recording=False).start()
            return AnthropicBackend(
                DEMO_KEY,
                self.simulator.base_url,
                deadlines=replace(deadlines, retries=0),
                prompt_caching=True,
            )
        key = self.secrets.get()
        if key is None:
            raise ContextDeskError(
                "No API key",
                "Set ANTHROPIC_API_KEY, store a key with the GUI's Settings, or try "
                "`contextdesk demo` for the offline demo model.",
                kind=ErrorKind.AUTH,
            )
        return AnthropicBackend(
            key.value,
            settings.base_url or None,
            deadlines=deadlines,
            prompt_caching=self.prompt_caching(),
        )

    def models(self) -> list[ModelInfo]:
        """The server's models (its list, or the built-in table when it has none). Call
        on a worker thread: it connects, and it closes what it opened there."""
        backend = self.backend()
        try:
            return backend.models()
        finally:
            backend.release_thread()

    def release_thread(self) -> None:
        """A worker thread is done sending: close what it opened, on every backend it may
        have used (the key or the server may have changed while it ran)."""
        with self._lock:
            made = list(self._made)
        for backend in made:
            backend.release_thread()

    def reconnect(self, *, demo: bool | None = None) -> None:
        """The key, the server or demo mode changed: the next request connects afresh."""
        with self._lock:
            self._disconnect()
            if demo is not None:
                self.demo = demo

    def close(self) -> None:
        with self._lock:
            self._disconnect()

    def _disconnect(self) -> None:
        if self._backend is not None:
            self._backend.close()
        if self.simulator is not None:
            self.simulator.stop()
        self._backend = self.simulator = None

    def lazy(self) -> LazyBackend:
        return LazyBackend(self)


class LazyBackend:
    """A `ChatBackend` that connects on its first request, so a missing key becomes the
    turn's error rather than a failure to open the chat."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    def stream(self, request: ChatRequest, cancel: CancelToken) -> Iterator[StreamEvent]:
        return self.connection.backend().stream(request, cancel)

    def release_thread(self) -> None:
        self.connection.release_thread()

    def close(self) -> None:
        self.connection.release_thread()
