"""`Chat`: one chat, and every action a user can take on it — the one home of each.

A small facade: the actions live in its parts, each in a module of its own building on
the chat's shared core (`chat_core.ChatCore`) —

- `chat.plans`    the planner and the next request (`planning.Planning`)
- `chat.memory`   pinned facts, exclusions, cleared results, compaction (`memory.Memory`)
- `chat.costs`    the ledger and what requests and changes cost (`costs.Costs`)
- `chat.branches` versions and the branch shown (`branches.Branches`)
- `chat.turns`    sending, editing, retrying, regenerating (`turns.Turns`)
- `chat.setup`    its settings, system prompt and model (`setup.Setup`)

— and what is the chat itself (its name, its place in the list, export, deletion) is
here. The window and the command line call these and keep only widgets and printing.
A `Chat` lives on the thread that owns the database connection (the GUI thread, or the
command line's only thread); its slow actions (a turn, a compaction preview, the
server's count) run their network part on a worker (`slow.SlowAction`).
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from desktop_app.chats.branches import Branches
from desktop_app.chats.changes import Changes
from desktop_app.chats.chat_core import ChatCore
from desktop_app.chats.costs import Costs
from desktop_app.chats.host import ChatHost
from desktop_app.chats.memory import Memory
from desktop_app.chats.planning import Planning
from desktop_app.chats.setup import Setup
from desktop_app.chats.turns import Turns
from desktop_app.config.files import atomic_file
from desktop_app.context.chat_settings import ContextSettings
from desktop_app.context.state import ContextState
from desktop_app.core.errors import file_error
from desktop_app.core.messages import Message
from desktop_app.storage.chat_info import ChatInfo

if TYPE_CHECKING:  # (the context engine loads with the first plan)
    from desktop_app.context.planner import ContextPlanner


class Chat:
    def __init__(self, host: ChatHost, info: ChatInfo) -> None:
        self._core = core = ChatCore(host, info)
        self.plans = Planning(core)
        self.costs = Costs(core, self.plans)
        self.memory = Memory(core, self.plans, self.costs)
        self.branches = Branches(core)
        self.turns = Turns(core, self.plans, self.branches)
        self.setup = Setup(core, self.plans)

    @property
    def info(self) -> ChatInfo:
        return self._core.info

    @property
    def id(self) -> str:
        return self._core.id

    @property
    def title(self) -> str:
        return self._core.title

    @property
    def settings(self) -> ContextSettings:
        return self._core.settings

    @property
    def model(self) -> str:
        """The model requests go to (the demo's simulator in demo mode)."""
        return self._core.model

    @property
    def busy(self) -> bool:
        """A turn is running: context edits wait for it (chat_core's docstring)."""
        return self._core.answering

    @property
    def state(self) -> ContextState:
        """Pinned facts, summaries, exclusions and the breaker, as the next request uses them."""
        return self._core.state

    # -- reading ----------------------------------------------------------------------------

    def messages(self) -> Sequence[Message]:
        """The transcript as stored: every message, whatever its state in the context."""
        return self._core.messages()

    def recent_messages(self, limit: int) -> list[Message]:
        return self._core.host.store.recent_messages(self.id, limit)

    def history(self, messages: Sequence[Message] | None = None) -> list[Message]:
        """The transcript (or `messages`, read already) repaired for the API."""
        return self._core.history(messages)

    def reload(self) -> None:
        """Another program changed the chat: read it again (not while a turn runs)."""
        if self.busy:
            return
        self._core.planner = None
        self._core.refresh_info()
        self._core.forget_state()

    def refresh_info(self) -> ChatInfo:
        """Re-read the title, counts and settings (after a turn, a rename elsewhere)."""
        return self._core.refresh_info()

    # -- the chat itself --------------------------------------------------------------------

    def rename(self, title: str) -> Changes:
        return self._core.rename(title)

    @property
    def draft(self) -> str:
        """The unsent draft kept with the chat ("": none): the composer's text when the
        window last kept it, over a restart too."""
        return self._core.host.store.draft(self.id)

    def keep_draft(self, text: str) -> None:
        """Keep the composer's unsent text with the chat ("" once it is sent)."""
        self._core.host.store.set_draft(self.id, text)

    def set_pinned(self, pinned: bool) -> Changes:
        """Keep the chat on top of the chat list (or let it go back to its date)."""
        self._core.info = self._core.host.store.set_pinned(self.id, pinned)
        return Changes(info=self._core.info)

    def set_archived(self, archived: bool) -> Changes:
        """Take the chat out of the list without deleting it (or bring it back)."""
        self._core.info = self._core.host.store.set_archived(self.id, archived)
        return Changes(info=self._core.info)

    def delete(self) -> None:
        """Move to the trash (the chat list offers Undo: `Engine.restore_chat`)."""
        self._core.host.store.delete_chat(self.id)
        self._core.host.forget(self.id)

    def export(self, fmt: str = "json", *, with_requests: bool = False) -> str:
        """The chat as JSON (contextdesk.chat, with the request its next turn would send,
        and on request every request it sent, from the ledger) or as Markdown."""
        out = io.StringIO()
        self.write_export(out, fmt, with_requests=with_requests)
        return out.getvalue()

    def export_to(
        self,
        path: Path,
        fmt: str = "json",
        *,
        with_requests: bool = False,
        planner: ContextPlanner | None = None,
    ) -> None:
        """Write the export to `path` whole or not at all, message by message: a
        100,000-message chat is never one string (~100 MB) in memory."""
        try:
            with atomic_file(path) as raw:
                out = io.TextIOWrapper(raw, encoding="utf-8", newline="")
                self.write_export(out, fmt, with_requests=with_requests, planner=planner)
                out.flush()
                out.detach()  # (the file is the atomic writer's to close)
        except OSError as exc:
            raise file_error("Export failed", path, exc) from exc

    def exporting(self, path: Path, fmt: str = "json") -> Callable[[], None]:
        """`export_to`, split for threads: call this on the database thread (it takes
        the planner as it is now, as a plan does); call what it returns on any thread."""
        planner = self.plans.planner() if fmt == "json" else None
        return functools.partial(self.export_to, path, fmt, planner=planner)

    def write_export(
        self,
        out: IO[str],
        fmt: str = "json",
        *,
        with_requests: bool = False,
        planner: ContextPlanner | None = None,
    ) -> None:
        """`export` written to `out` as it is made, message by message (`contextdesk
        export` to the terminal: a long chat is never one string). What it holds is read
        at one moment, on a connection of its own: a branch chosen or a message sent
        meanwhile (it may write on a worker while the window goes on) is in it whole,
        or not at all."""
        from desktop_app.storage.chat_export import export_document, export_markdown, write_json

        host = self._core.host
        with host.transcript_at_one_moment(self.id) as (store, messages):
            if fmt == "md":
                out.write(export_markdown(store, self.id, messages))
                return
            plan = self.plans.planning("", messages, planner=planner)()
            body = plan.request.body()
            doc = export_document(store, self.id, body, host.counter.blocks_of, messages)
        if with_requests:
            doc["requests"] = self.costs.ledger_export()
        write_json(out, doc)

    def release_thread(self) -> None:
        """A worker thread that sent requests for this chat is done: close its connections."""
        self._core.host.connection.release_thread()


@dataclass(frozen=True, slots=True)
class Imported:
    chat: Chat
    repairs: tuple[str, ...]  # what the import repaired, one line each
