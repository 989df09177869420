"""A chat's planning (`chat.plans`): its planner, the next request with a draft, what-if
plans (a change's cost shown before it is made), the server's count of a request.

The slow part comes split for threads: `planning` takes the planner and the state on
the database thread and returns a function a worker runs (it reads no database).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from desktop_app.chats.branches import edited
from desktop_app.chats.chat_core import ChatCore, retry_point
from desktop_app.chats.names import ONE_WORD
from desktop_app.context.chat_settings import ContextSettings
from desktop_app.context.state import ContextState
from desktop_app.core.blocks import Block, TextBlock
from desktop_app.core.errors import ContextDeskError
from desktop_app.core.messages import Message
from desktop_app.core.request import RequestExtras, ToolSpec
from desktop_app.core.transcript import Continued, transcript_of

if TYPE_CHECKING:  # the context engine and the tools load with the first plan
    from desktop_app.chats.changes import Changes
    from desktop_app.chats.connection import Connection
    from desktop_app.context.plan import Plan
    from desktop_app.context.planner import ContextPlanner
    from desktop_app.context.project import Project, ProjectLayers
    from desktop_app.core.cancel import CancelToken
    from desktop_app.tokens.counter import TokenCounter
    from desktop_app.tools.mcp_tools import McpOffer
    from desktop_app.tools.registry import Tool, ToolRegistry

log = logging.getLogger(__name__)


class Planning:
    def __init__(self, core: ChatCore) -> None:
        self._core = core

    def planner(self) -> ContextPlanner:
        """The chat's planner, with its current state. Built on first use (which loads
        the context engine) and again when a setting it depends on changes."""
        core = self._core
        if core.planner is None:
            core.planner, core.tools = self._build_planner()
        elif not core.answering:  # during a turn the loop owns the planner's state
            core.planner.state = core.state
        if not core.answering:  # the server may have changed in Settings
            core.planner.prompt_caching = core.host.connection.prompt_caching()
        return core.planner

    def tools(self) -> ToolRegistry:
        """The tools the chat's planner offers (built with it)."""
        self.planner()
        assert self._core.tools is not None
        return self._core.tools

    def settings_changed(self) -> None:
        """Tools, the workspace, the model or the chat's settings changed."""
        if not self._core.answering:
            self.record_compaction_requests()  # before the planner that holds them goes
            self._core.planner = self._core.tools = None

    def _build_planner(self) -> tuple[ContextPlanner, ToolRegistry]:
        from desktop_app.context.compaction import Compactor
        from desktop_app.context.planner import ContextPlanner
        from desktop_app.context.projection import Projector
        from desktop_app.tools.builtin import builtin_tools
        from desktop_app.tools.registry import ToolRegistry

        core = self._core
        settings = core.host.settings
        counter = core.host.counter
        if core.projector is None:
            core.projector = Projector(counter)
        project = self._project()
        folder = (project.workspace if project else "") or settings.workspace
        workspace = Path(folder) if folder else None
        offer = self._mcp_tools() if settings.tools_enabled else None
        mcp, unavailable = (offer.tools, offer.note) if offer else ([], "")
        planner = ContextPlanner(
            core.projector,
            Compactor(core.host.connection.lazy(), counter),
            core.settings,
            core.state,
            model=core.model,
            system="\n\n".join(p for p in (core.info.system_prompt, unavailable) if p),
            workspace=str(workspace) if workspace else None,
            facts=core.host.model_facts(core.model),
            auto_pin=settings.auto_pin,
        )
        tools = ToolRegistry(
            [
                *builtin_tools(files=workspace is not None, commands=settings.run_command_enabled),
                *mcp,
            ]
            if settings.tools_enabled
            else [],
            workspace=workspace,
            on_pin=planner.propose_fact,
            command_env=tuple(n.strip() for n in settings.command_env.split(",") if n.strip()),
        )
        if settings.tools_enabled and core.settings.search_chats != "off":
            searching = self._search_chats_tool(project)
            if searching is not None:
                tools = replace(tools, tools=[*tools.tools, searching])
        layers = self._project_layers(project, counter)
        planner.project = layers
        if layers is not None and layers.readable and settings.tools_enabled:
            from desktop_app.tools.builtin import read_project_file

            tools = replace(tools, tools=[*tools.tools, read_project_file(layers.readable)])
        extras = RequestExtras.read(core.settings.request_extras) or RequestExtras()
        own = tools.specs()
        taken = {t.name for t in own}
        beside = (*extras.tools, *self._web_tools())  # the import's own; the API's
        planner.tools = [*own, *(t for t in beside if t.name not in taken)]
        planner.tool_choice, planner.metadata = extras.tool_choice, extras.metadata
        planner.trim_policies = tools.trim_policies()
        if offer is not None:  # a server that dies mid-turn leaves the next request
            planner.refresh = offer.refresher(tools, core.info.system_prompt, beside)
        return planner, tools

    def _web_tools(self) -> tuple[ToolSpec, ...]:
        """Web search and fetch, run by the API itself, where the chat turns them on and
        the server is Anthropic's (another server would refuse them)."""
        core = self._core
        choice = core.settings.web_choice
        if not (choice.search or choice.fetch) or not core.host.connection.server_tools():
            return ()
        from desktop_app.core.server_tools import web_tools

        return web_tools(choice, core.host.model_facts(core.model))

    def _search_chats_tool(self, project: Project | None) -> Tool | None:
        """`search_chats` as this chat offers it: over its project's other chats, or every
        other chat; none when it is limited to a project the chat is not in."""
        from desktop_app.chats.past_chats import scope_words, search_chats_tool
        from desktop_app.storage import projects

        core = self._core
        mode = core.settings.search_chats
        if mode == "project" and project is None:
            return None
        within = set(projects.chats_of(core.host.store.db, project.id)) if project else None
        scope = scope_words(mode, project.name if project else None)
        return search_chats_tool(
            core.host.store, core.id, within if mode == "project" else None, scope
        )

    def _project(self) -> Project | None:
        from desktop_app.storage import projects

        db = self._core.host.store.db
        project_id = projects.chat_project(db, self._core.id)
        return projects.get(db, project_id) if project_id else None

    def _project_layers(
        self, project: Project | None, counter: TokenCounter
    ) -> ProjectLayers | None:
        """The project's layers as this chat sends them (its switches, its window)."""
        if project is None:
            return None
        from desktop_app.context.project import layers_for

        settings = self._core.settings
        off = settings.project_layers_off
        return layers_for(project, off, settings.context_window, counter.text)

    def _mcp_tools(self) -> McpOffer | None:
        """The MCP tools this chat offers (its `tools_off` left out), and what the model is
        told of servers that are not ready: read again before each request of a turn."""
        hub = self._core.host.mcp
        if hub is None:
            return None
        from desktop_app.tools.mcp_tools import McpOffer

        return McpOffer(hub, frozenset(self._core.settings.tools_off))

    # -- the next request -----------------------------------------------------------------

    def plan(self, draft: str = "", history: Sequence[Message] | None = None) -> Plan:
        """The next request, with `draft` as the user's next message: the one request every
        view of "the next request" shows (`next_planning`)."""
        messages = self._core.messages() if history is None else history
        return self.next_planning(draft, messages)()

    def planning(
        self,
        draft: str | Sequence[Block],
        history: Sequence[Message],
        *,
        beside: Message | None = None,
        planner: ContextPlanner | None = None,
    ) -> Callable[[], Plan]:
        """`plan`, split for threads: call this on the database thread (it takes the
        planner and the state as they are now); call what it returns on any thread.
        `draft` is the user's next message: its text, or its blocks (attachments too).
        `beside` a message of the user's being edited: the draft is its new version, so
        the request is the branch Send will make — what came before that message, then
        the edit (`edited`: its images kept), nothing after it. With no draft the
        request is the history as it stands (it may end with a reply: see
        `next_planning` for one that can be sent)."""
        planner = planner or self.planner()
        history = transcript_of(history)  # (a plain list is copied: it may change later)
        if isinstance(draft, str):
            blocks: tuple[Block, ...] = (TextBlock(draft),) if draft.strip() else ()
        else:
            blocks = tuple(draft)
        cut = _position(history, beside.id) if beside is not None else None
        if beside is not None and cut is not None:
            planner = _leaving(planner, history[cut:])  # the old version's branch, once sent
            history = history.prefix(cut)
            with contextlib.suppress(ContextDeskError):  # (an empty edit: nothing to add)
                blocks = edited(beside, blocks).blocks
        # (the draft after the history, not a copy of it with the draft: `Continued`)
        messages = Continued(history, (Message("user", blocks),)) if blocks else history
        edit_of = beside.id if beside is not None and cut is not None else ""
        return lambda: replace(planner.plan(self._core.repaired_history(messages)), edit_of=edit_of)

    def next_planning(
        self,
        draft: str | Sequence[Block],
        history: Sequence[Message],
        *,
        beside: Message | None = None,
        planner: ContextPlanner | None = None,
    ) -> Callable[[], Plan]:
        """`planning` of a request that can be sent: the one the meter, the Overview, the
        Request tab and `contextdesk context` all show. With an empty composer the
        history ends with a reply, which a request never does — so after a failed or
        interrupted reply it is the request Retry would make (`retries` names the reply
        answered again, beside it); else a one-word message (`ONE_WORD`) stands for the
        draft (`stand_in`)."""
        wrote = bool(draft.strip()) if isinstance(draft, str) else bool(draft)
        if wrote or beside is not None or (history and history[-1].role == "user"):
            return self.planning(draft, history, beside=beside, planner=planner)
        point = retry_point(history)
        if point is not None:
            failed = history[_index(history, point) + 1].id
            retry = self.answering_again(point, history, planner=planner)
            return lambda: replace(retry(), retries=failed)
        one_word = self.planning(ONE_WORD, history, planner=planner)
        return lambda: replace(one_word(), stand_in=ONE_WORD)

    def answering_again(
        self,
        question_id: str,
        history: Sequence[Message],
        *,
        planner: ContextPlanner | None = None,
    ) -> Callable[[], Plan]:
        """`planning` of the request that answers a message of the user's again —
        `turns.start(None, …, after=question_id)`: Regenerate, or Retry beside a failed
        reply — the branch shown up to that message; the replies after it go to a
        branch of their own."""
        cut = _index(history, question_id) + 1
        planner = _leaving(planner or self.planner(), history[cut:])
        return self.planning("", transcript_of(history).prefix(cut), planner=planner)

    def plan_if(
        self,
        history: Sequence[Message],
        *,
        settings: ContextSettings | None = None,
        state: ContextState | None = None,
    ) -> Plan:
        """The next request as it would be after a change, to show its cost first."""
        planner = self.planner()
        settings, state = settings or planner.settings, state or planner.state
        projector = planner.projector.for_preview(state, settings, planner.trim_policies)
        changed = replace(planner, settings=settings, state=state, projector=projector)
        return self.next_planning("", history, planner=changed)()

    def compacts_first(self, plan: Plan, draft: str = "", history: Sequence[Message] = ()) -> bool:
        """Sending `draft` now would compact first: `plan`'s request is not what goes out."""
        messages = list(history)
        if draft.strip():
            messages.append(Message("user", (TextBlock(draft),)))
        return self.planner().compacts_first(plan, self._core.repaired_history(messages))

    # -- counting ---------------------------------------------------------------------------

    def counting(self, plan: Plan) -> ServerCount | None:
        """The server's own count of `plan`'s request, as a slow action (chats/slow.py):
        it connects, so it runs on a worker. None when there is nothing to count (a
        request ends with the user's words)."""
        request = plan.request
        if plan.stand_in or not request.messages or request.messages[-1].role != "user":
            return None  # (a stand-in for an empty composer is not worth a request)
        return ServerCount(plan, self._core.host.connection, self.counted)

    def counted(self, plan: Plan, tokens: int) -> Plan:
        """`plan` with the server's count of its request, marked exact; the local estimate
        learns from it (on the database thread: the calibration is stored)."""
        from desktop_app.tokens.counter import TokenFigure

        self._core.host.counter.learn_from_usage(plan.request, tokens)
        return replace(plan, exact_input=TokenFigure(tokens, exact=True))

    def transcript_tokens(self, messages: Sequence[Message]) -> int:
        """The whole transcript's size (≈, calibrated), as the chat list shows it."""
        counter, projector = self._core.host.counter, self._core.projector
        if projector is not None and projector.counter is counter:  # (summed as it planned)
            return counter.calibrated(projector.transcript_raw(messages), self._core.model)
        return counter.calibrated(counter.messages(messages), self._core.model)

    def remember_size(self, tokens: int) -> bool:
        """Store the transcript's size for the chat list; True if it changed."""
        core = self._core
        if tokens == core.info.token_total:
            return False
        core.host.store.set_token_total(core.id, tokens)
        core.info = replace(core.info, token_total=tokens)
        return True

    # -- what the planner sent on its own ------------------------------------------------------

    def record_compaction_requests(self) -> None:
        """Put the summary requests compaction sent into the ledger (on the thread that
        owns the database; compaction itself runs on a worker). A failed write loses the
        record, never the chat."""
        core = self._core
        if core.planner is None:
            return
        sent = core.planner.compactor.take_sent()
        if not sent:
            return
        from desktop_app.storage import ledger

        db, server = core.host.store.db, core.host.connection.server()
        try:
            for summary in sent:
                body = {**summary.request.body(), "stream": True}  # as the backend sends it
                row = ledger.record(
                    db, core.id, body, server=server, sent_at=summary.sent_at, purpose="compaction"
                )
                ledger.finish(
                    db, row, seconds=summary.seconds, usage=summary.usage, status=summary.status
                )
        except sqlite3.Error:
            log.warning("could not record a summary request in the ledger", exc_info=True)


def _leaving(planner: ContextPlanner, messages: Sequence[Message]) -> ContextPlanner:
    """`planner` as it will plan once `messages` (the end of the branch shown) are on a
    branch beside the one a turn makes: a summary standing for any of them no longer
    applies (`ContextState.off_branch`, as the store reads it after the turn starts)."""
    state = planner.state
    if not messages or not state.summaries:
        return planner
    off = state.off_branch | {m.id for m in messages}
    return replace(planner, state=replace(state, off_branch=off))


@dataclass
class ServerCount:
    """The server's count of a plan's request (count_tokens; None where the server has
    no such endpoint). Recorded, it makes `counted`: the plan, marked exact."""

    plan: Plan
    connection: Connection
    mark_exact: Callable[[Plan, int], Plan]  # `Planning.counted`
    counted: Plan | None = None

    def events(self, cancel: CancelToken) -> Iterator[int | None]:
        from desktop_app.core.server_tools import is_server_tool

        if any(is_server_tool(t) for t in self.plan.request.tools):
            yield None  # count_tokens refuses the API's own tools: the estimate stands
            return
        yield self.connection.backend().count_tokens(self.plan.request)

    def release_thread(self) -> None:
        self.connection.release_thread()

    def record(self, event: int | None) -> None:
        if event is not None:
            self.counted = self.mark_exact(self.plan, event)

    def finish(self) -> Changes:
        from desktop_app.chats.changes import Changes

        return Changes()


def _position(messages: Sequence[Message], message_id: str) -> int | None:
    """Where a message is in `messages` (looked for from the newest: an edit, a retry is
    near the end of a long chat), None if not there."""
    return next((i for i in range(len(messages) - 1, -1, -1) if messages[i].id == message_id), None)


def _index(messages: Sequence[Message], message_id: str) -> int:
    """`_position`, of a message that must be there."""
    at = _position(messages, message_id)
    if at is None:
        raise ValueError(f"{message_id} is not in the history")
    return at
