"""`Chat`: one chat, and every action a user can take on it — the one home of each.

The window and the command line both call these methods and keep only widgets and
printing. A `Chat` lives on the thread that owns the database connection (the GUI
thread, or the command line's only thread). The two slow actions come split for a
worker thread too: `planning` and `previewing_compaction` take what they need on the
database thread and return a function to run anywhere.

Context edits (pin, exclude, compact…) made while a turn runs are queued and applied
when it ends: during a turn the loop's planner owns the chat's context state, and
applying them at once would be overwritten by it (docs/architecture.md, "Context edits
during a turn").
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_app.chats.instance import process_alive
from desktop_app.chats.names import CHAT_FIELDS, NEW_CHAT_TITLE, ONE_WORD
from desktop_app.chats.turn import Turn, TurnRecorder
from desktop_app.config.files import write_atomically
from desktop_app.config.settings import typed_value
from desktop_app.context.chat_settings import ContextSettings
from desktop_app.context.facts import Fact
from desktop_app.context.state import ContextState
from desktop_app.core.blocks import Block, ImageBlock, TextBlock
from desktop_app.core.branches import Branch, Siblings
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import ContextDeskError, ErrorKind, file_error
from desktop_app.core.events import LoopEvent, TurnFinished
from desktop_app.core.messages import Message, MessageStatus
from desktop_app.core.ports import Approver
from desktop_app.core.repair import repair
from desktop_app.core.request import RequestExtras
from desktop_app.storage.chat_info import ChatInfo

log = logging.getLogger(__name__)

if TYPE_CHECKING:  # the context engine, the loop and the tools load with the first plan
    from desktop_app.chats.engine import Engine
    from desktop_app.config.prices import Spend
    from desktop_app.context.compaction import CompactionPreview
    from desktop_app.context.planner import ContextPlanner
    from desktop_app.context.project import Project, ProjectLayers
    from desktop_app.context.projection import Plan, Projector
    from desktop_app.core.request_diff import RequestDiff
    from desktop_app.core.thinking import ThinkingOptions
    from desktop_app.storage.ledger import RequestRecorder, SentRequest
    from desktop_app.tokens.counter import TokenCounter
    from desktop_app.tools.mcp_tools import McpOffer
    from desktop_app.tools.registry import ToolRegistry

KEEP_RESULTS_OF_LAST_TURNS = 2  # "clear old tool results" leaves the latest ones

StateChange = Callable[[ContextState], ContextState]


def repaired(messages: Sequence[Message]) -> list[Message]:
    """A stored history made valid for the API (the stored one is never changed)."""
    return list(repair(messages).messages)


class Chat:
    def __init__(self, engine: Engine, info: ChatInfo) -> None:
        self.engine = engine
        self.info = info
        self._state: ContextState | None = None  # read on first use
        self._planner: ContextPlanner | None = None
        self._tools: ToolRegistry | None = None
        self._projector: Projector | None = None  # kept across planners: its view cache
        self._turn: Turn | None = None
        self._queued: list[StateChange] = []
        self._sent: RequestRecorder | None = None  # the ledger's memory of the last request
        # A regeneration under way: (the question answered again, the branch end shown before)
        self._answering_again: tuple[str, str | None] | None = None

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def title(self) -> str:
        return self.info.title

    @property
    def settings(self) -> ContextSettings:
        return self.info.settings

    @property
    def model(self) -> str:
        """The model requests go to (the demo's simulator in demo mode)."""
        return self.engine.model_of(self.info)

    @property
    def busy(self) -> bool:
        """A turn is running: context edits wait for it (see the module's docstring)."""
        return self._turn is not None

    @property
    def state(self) -> ContextState:
        """Pinned facts, summaries, exclusions and the breaker, as the next request uses them."""
        if self._state is None:
            self._state = self.engine.store.context_state(self.id)
        return self._state

    # -- reading ----------------------------------------------------------------------------

    def messages(self) -> list[Message]:
        """The transcript as stored: every message, whatever its state in the context."""
        return self.engine.store.messages(self.id)

    def recent_messages(self, limit: int) -> list[Message]:
        return self.engine.store.recent_messages(self.id, limit)

    def history(self, messages: Sequence[Message] | None = None) -> list[Message]:
        """The transcript (or `messages`, read already) repaired for the API."""
        return repaired(self.messages() if messages is None else messages)

    def reload(self) -> None:
        """Another program changed the chat: read it again (not while a turn runs)."""
        if self.busy:
            return
        self.info = self.engine.store.chat(self.id)
        self._state = None
        self._planner = None

    def refresh_info(self) -> ChatInfo:
        """Re-read the title, counts and settings (after a turn, a rename elsewhere)."""
        self.info = self.engine.store.chat(self.id)
        return self.info

    # -- planning -------------------------------------------------------------------------

    def planner(self) -> ContextPlanner:
        """The chat's planner, with its current state. Built on first use (which loads
        the context engine) and again when a setting it depends on changes."""
        if self._planner is None:
            self._planner, self._tools = self._build_planner()
        elif not self.busy:  # during a turn the loop owns the planner's state
            self._planner.state = self.state
        if not self.busy:  # the server may have changed in Settings
            self._planner.prompt_caching = self.engine.connection.prompt_caching()
        return self._planner

    def settings_changed(self) -> None:
        """Tools, the workspace, the model or the chat's settings changed."""
        if not self.busy:
            self.record_compaction_requests()  # before the planner that holds them goes
            self._planner = self._tools = None

    def _build_planner(self) -> tuple[ContextPlanner, ToolRegistry]:
        from desktop_app.context.compaction import Compactor
        from desktop_app.context.planner import ContextPlanner
        from desktop_app.context.projection import Projector
        from desktop_app.tools.builtin import builtin_tools
        from desktop_app.tools.registry import ToolRegistry

        settings = self.engine.settings
        counter = self.engine.counter
        if self._projector is None:
            self._projector = Projector(counter)
        project = self.engine.projects.project_of(self)
        folder = (project.workspace if project else "") or settings.workspace
        workspace = Path(folder) if folder else None
        offer = self._mcp_tools() if settings.tools_enabled else None
        mcp, unavailable = (offer.tools, offer.note) if offer else ([], "")
        planner = ContextPlanner(
            self._projector,
            Compactor(self.engine.connection.lazy(), counter),
            self.settings,
            self.state,
            model=self.model,
            system="\n\n".join(p for p in (self.info.system_prompt, unavailable) if p),
            workspace=str(workspace) if workspace else None,
            facts=self.engine.model_facts(self.model),
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
        layers = self._project_layers(project, counter)
        planner.project = layers
        if layers is not None and layers.readable and settings.tools_enabled:
            from desktop_app.tools.builtin import read_project_file

            tools = replace(tools, tools=[*tools.tools, read_project_file(layers.readable)])
        extras = RequestExtras.read(self.settings.request_extras) or RequestExtras()
        own = tools.specs()
        taken = {t.name for t in own}
        planner.tools = [*own, *(t for t in extras.tools if t.name not in taken)]
        planner.tool_choice, planner.metadata = extras.tool_choice, extras.metadata
        planner.trim_policies = tools.trim_policies()
        if offer is not None:  # a server that dies mid-turn leaves the next request
            planner.refresh = offer.refresher(tools, self.info.system_prompt, extras.tools)
        return planner, tools

    def _project_layers(
        self, project: Project | None, counter: TokenCounter
    ) -> ProjectLayers | None:
        """The project's layers as this chat sends them (its switches, its window)."""
        if project is None:
            return None
        from desktop_app.context.project import layers_for, switched_off

        off = switched_off(self.settings.project_layers_off)
        return layers_for(project, off, self.settings.context_window, counter.text)

    def _mcp_tools(self) -> McpOffer | None:
        """The MCP tools this chat offers (its `tools_off` left out), and what the model is
        told of servers that are not ready: read again before each request of a turn."""
        hub = self.engine.mcp
        if hub is None:
            return None
        from desktop_app.tools.mcp_tools import McpOffer, parse_off

        return McpOffer(hub, parse_off(self.settings.tools_off))

    def plan(self, draft: str = "", history: Sequence[Message] | None = None) -> Plan:
        """The next request, with `draft` as the user's next message: the one request every
        view of "the next request" shows (`next_planning`)."""
        return self.next_planning(draft, self.messages() if history is None else history)()

    # -- the request ledger ------------------------------------------------------------------

    def sent_requests(self) -> list[SentRequest]:
        """Every request this chat sent, oldest first, with the usage the API reported."""
        from desktop_app.storage import ledger

        return ledger.requests(self.engine.store.db, self.id)

    def sent_body(self, number: int) -> dict[str, Any]:
        """The body of the chat's request `number` (1 = its first), as it was sent."""
        from desktop_app.storage import ledger

        sent = self.sent_requests()
        found = next((r for r in sent if r.number == number), None)
        if found is None:
            raise ContextDeskError(
                "No such request",
                f"This chat has sent {len(sent)} request(s); there is no #{number}.",
                kind=ErrorKind.USAGE,
            )
        return ledger.body(self.engine.store.db, found.id)

    def facts_last_sent(self, facts: Sequence[Fact]) -> dict[str, tuple[int, float]]:
        """Fact id → (request number, time) of the last request that carried it, from the
        ledger (a fact never sent is not in it)."""
        from desktop_app.storage import ledger

        rendered = {f.id: f.render() for f in facts}
        sent = ledger.last_sent_with(self.engine.store.db, self.id, list(rendered.values()))
        return {fid: sent[text] for fid, text in rendered.items() if text in sent}

    def reply_cost(self, reply_id: str) -> str:
        """What the request answered by this reply cost, said: money by the price table, or
        tokens only (no price for the model, or no record of the request)."""
        from desktop_app.config.prices import format_money
        from desktop_app.storage import ledger

        found = ledger.reply_request(self.engine.store.db, reply_id)
        if found is None:
            return ""
        model, usage = found
        if usage is None:
            return ""
        prices = self.engine.prices()
        cost = prices.cost(model, usage)
        tokens = (
            f"in {usage.input_tokens:,} · cache write {usage.cache_creation_input_tokens:,} · "
            f"cache read {usage.cache_read_input_tokens:,} · out {usage.output_tokens:,}"
        )
        money = format_money(cost, prices.currency) if cost is not None else f"no price for {model}"
        return f"Its request: {tokens} tokens (exact) · {money}"

    def cost_of_change(self, before: Plan, after: Plan) -> str:
        """What a change does to the next turn's input cost, said (≈: token estimates),
        with the cache write it causes: everything after the first changed position is
        written to the prompt cache again. "" when the model has no price."""
        from desktop_app.config.prices import format_money
        from desktop_app.context.projection import Section
        from desktop_app.core.request_diff import diff_bodies

        prices = self.engine.prices()
        price = prices.price(self.model)
        if price is None:
            return ""
        per = prices.per_tokens
        old, new = before.estimated_input, after.estimated_input
        if not after.request.prompt_caching:  # no cache: every input token at the input price
            return (
                f"Next turn's input: ≈{format_money(old * price.input / per, prices.currency)} "
                f"→ ≈{format_money(new * price.input / per, prices.currency)}."
            )
        first = diff_bodies(before.request.body(), after.request.body()).first_change
        kept = new
        if first is not None:
            sections = after.sections
            kept = sections[Section.TOOLS] if first != "tools" else 0
            if first.startswith("messages."):
                head = sections[Section.SYSTEM] + sections[Section.FACTS]
                upto = after.request.messages[: int(first.split(".")[1])]
                kept += head + round(after.counter.messages(upto) * after.calibration)
        kept = min(kept, new)
        rewritten = new - kept
        unchanged = old * price.cache_read / per  # as it stands: read from the cache
        changed = (kept * price.cache_read + rewritten * price.cache_write_5m) / per
        return (
            f"Next turn's input: ≈{format_money(unchanged, prices.currency)} as it stands "
            f"(read from the prompt cache) → ≈{format_money(changed, prices.currency)} with the "
            f"change (≈{rewritten:,} tokens written to the cache again)."
        )

    def spend(self) -> Spend:
        """What this chat's requests cost, by the price table (tokens only where a model
        has no price)."""
        return self.engine.spend(chat_id=self.id)

    def diff_requests(self, before: str, after: str) -> RequestDiff:
        """Two requests side by side — each a number from the ledger, or `next` (what a send
        would make now) — and where the prompt cache breaks between them."""
        from desktop_app.core.request_diff import diff_bodies

        names = (f"request {before}", f"request {after}")
        return diff_bodies(self._body_of(before), self._body_of(after), names)

    def _body_of(self, which: str) -> dict[str, Any]:
        if which == "next":  # as it would go: the recorded ones say "stream" too
            return {**self.plan().request.body(), "stream": True}
        if not which.isdigit():
            raise ContextDeskError(
                "Not a request",
                f"{which!r}: give a request number or `next`.",
                kind=ErrorKind.USAGE,
            )
        return self.sent_body(int(which))

    def compacts_first(self, plan: Plan, draft: str = "", history: Sequence[Message] = ()) -> bool:
        """Sending `draft` now would compact first: `plan`'s request is not what goes out."""
        messages = list(history)
        if draft.strip():
            messages.append(Message("user", (TextBlock(draft),)))
        return self.planner().compacts_first(plan, repaired(messages))

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
        messages = list(history)
        if isinstance(draft, str):
            blocks: tuple[Block, ...] = (TextBlock(draft),) if draft.strip() else ()
        else:
            blocks = tuple(draft)
        ids = [m.id for m in messages]
        if beside is not None and beside.id in ids:
            messages = messages[: ids.index(beside.id)]
            with contextlib.suppress(ContextDeskError):  # (an empty edit: nothing to add)
                blocks = self.edited(beside, blocks).blocks
        if blocks:
            messages.append(Message("user", blocks))
        edit_of = beside.id if beside is not None and beside.id in ids else ""
        return lambda: replace(planner.plan(repaired(messages)), edit_of=edit_of)

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
        point = self.retry_point(history)
        if point is not None:
            cut = [m.id for m in history].index(point) + 1
            failed = history[cut].id
            retry = self.planning("", history[:cut], planner=planner)
            return lambda: replace(retry(), retries=failed)
        one_word = self.planning(ONE_WORD, history, planner=planner)
        return lambda: replace(one_word(), stand_in=ONE_WORD)

    def plan_if(
        self,
        history: Sequence[Message],
        *,
        settings: ContextSettings | None = None,
        state: ContextState | None = None,
    ) -> Plan:
        """The next request as it would be after a change, to show its cost first."""
        planner = self.planner()
        changed = replace(
            planner, settings=settings or planner.settings, state=state or planner.state
        )
        return self.next_planning("", history, planner=changed)()

    def counting(self, plan: Plan) -> Callable[[], int | None] | None:
        """The server's own count of `plan`'s request, split for threads as `planning`
        is: call on the database thread; run what it returns on a worker (it connects).
        None when there is nothing to count (a request ends with the user's words)."""
        request = plan.request
        if plan.stand_in or not request.messages or request.messages[-1].role != "user":
            return None  # (a stand-in for an empty composer is not worth a request)
        connection = self.engine.connection

        def count() -> int | None:
            backend = connection.backend()
            try:
                return backend.count_tokens(request)
            finally:
                backend.release_thread()

        return count

    def counted(self, plan: Plan, tokens: int) -> Plan:
        """`plan` with the server's count of its request, marked exact; the local estimate
        learns from it (on the database thread: the calibration is stored)."""
        from desktop_app.tokens.counter import TokenFigure

        self.engine.counter.learn_from_usage(plan.request, tokens)
        return replace(plan, exact_input=TokenFigure(tokens, exact=True))

    def transcript_tokens(self, messages: Sequence[Message]) -> int:
        """The whole transcript's size (≈, calibrated), as the chat list shows it."""
        counter = self.engine.counter
        return counter.calibrated(sum(counter.message(m) for m in messages), self.model)

    def remember_size(self, tokens: int) -> bool:
        """Store the transcript's size for the chat list; True if it changed."""
        if tokens == self.info.token_total:
            return False
        self.engine.store.set_token_total(self.id, tokens)
        self.info = replace(self.info, token_total=tokens)
        return True

    # -- pinned facts ---------------------------------------------------------------------

    def pin(self, text: str) -> Fact:
        """Pin `text`: sent verbatim with every request from now on."""
        text = text.strip()
        if not text:
            raise ContextDeskError("Nothing to pin", "Give the fact's text.", kind=ErrorKind.USAGE)
        fact = Fact(text)
        self._change(lambda s: s.pin(fact))
        return fact

    def fact(self, ref: str) -> Fact:
        """A pinned or suggested fact by its id or a unique prefix of it."""
        matches = [f for f in self.state.facts if f.id.startswith(ref)]
        if len(matches) != 1:
            why = "no fact has this id" if not matches else f"{len(matches)} facts start with it"
            raise ContextDeskError("Fact not found", f"{ref!r}: {why}.", kind=ErrorKind.NOT_FOUND)
        return matches[0]

    def edit_fact(self, fact: Fact, text: str) -> None:
        text = text.strip()
        if text and text != fact.text:
            self._change(lambda s: s.update_fact(fact.edited(text)))

    def unpin(self, fact: Fact) -> None:
        """Delete a pinned fact, or reject one Claude suggested."""
        self._change(lambda s: s.unpin(fact.id))

    def restore_fact(self, fact: Fact, index: int) -> None:
        """Undo a deletion: the fact comes back where it was."""
        self._change(lambda s: s.pin(fact).move_fact(fact.id, index))

    def move_fact(self, fact: Fact, index: int) -> None:
        self._change(lambda s: s.move_fact(fact.id, index))

    def accept_fact(self, fact: Fact, text: str | None = None) -> None:
        """A fact Claude suggested is pinned (as the user edited it, if they did)."""
        edited = fact.edited(text.strip()) if text and text.strip() else fact
        accepted = replace(edited, pending=False)
        self._change(lambda s: s.update_fact(accepted))

    # -- what the next request holds ----------------------------------------------------------

    def is_excluded(self, message: Message) -> bool:
        return message.id in self.state.excluded_messages

    def set_excluded(self, message: Message, excluded: bool) -> None:
        self._change(lambda s: s.exclude_message(message.id, excluded))

    def old_tool_results(self, messages: Sequence[Message]) -> set[str]:
        """The tool results "Clear old tool results" would clear (all but the latest)."""
        from desktop_app.context.policies import old_tool_result_ids

        return old_tool_result_ids(messages, KEEP_RESULTS_OF_LAST_TURNS)

    def clear_tool_results(self, tool_use_ids: set[str]) -> None:
        """Send these results as a short placeholder (the transcript keeps them)."""
        self._change(lambda s: s.clear_results(tool_use_ids))

    def resume_auto_compaction(self) -> None:
        self._change(lambda s: s.resume_auto_compaction())

    # -- compaction ---------------------------------------------------------------------------

    def preview_compaction(self, instructions: str = "") -> CompactionPreview:
        """Ask the model for a summary of the older turns; nothing changes until
        `apply_compaction`."""
        try:
            return self.previewing_compaction(instructions, self.messages())(CancelToken())
        finally:
            self.record_compaction_requests()

    def previewing_compaction(
        self, instructions: str, history: Sequence[Message]
    ) -> Callable[[CancelToken], CompactionPreview]:
        """`preview_compaction`, split for threads: call this on the database thread;
        call what it returns on a worker (then `release_thread` there, and
        `record_compaction_requests` back on the database thread)."""
        planner, state, settings = self.planner(), self.state, self.settings
        messages = list(history)

        def ask(cancel: CancelToken) -> CompactionPreview:
            return planner.compactor.preview(
                repaired(messages),
                state,
                settings,
                model=planner.model,
                cancel=cancel,
                instructions=instructions.strip(),
            )

        return ask

    def compaction_cost(self, preview: CompactionPreview, messages: Sequence[Message]) -> str:
        """What applying `preview` does to the next turn's input cost (see `cost_of_change`)."""
        from desktop_app.context.compaction import apply_preview

        return self.cost_of_state(messages, apply_preview(self.state, preview))

    def cost_of_state(self, messages: Sequence[Message], state: ContextState) -> str:
        """What changing the context state to `state` (an exclusion, an undo…) does to the
        next turn's input cost; "" when the model has no price (then nothing is planned:
        this runs on the GUI thread, on a click)."""
        if self.engine.prices().price(self.model) is None:
            return ""
        before = self.plan(history=messages)
        return self.cost_of_change(before, self.plan_if(messages, state=state))

    def apply_compaction(self, preview: CompactionPreview, text: str | None = None) -> None:
        """The preview's summary (as the user edited it) replaces the turns it covers in
        what is sent; the transcript keeps them, and `undo_compaction` brings them back."""
        from desktop_app.context.compaction import apply_preview

        self.record_compaction_requests()
        self._change(lambda s: apply_preview(s, preview, text))

    def undo_compaction(self) -> None:
        self._change(lambda s: s.undo_summary())

    def release_thread(self) -> None:
        """A worker thread that sent requests for this chat is done: close its connections."""
        self.engine.connection.release_thread()

    # -- the chat itself -------------------------------------------------------------------

    def rename(self, title: str) -> None:
        title = " ".join(title.split())
        if not title:
            raise ContextDeskError("No title", "A chat needs a name.", kind=ErrorKind.USAGE)
        self.info = self.engine.store.update_chat(self.id, title=title)

    def set_settings(self, settings: ContextSettings) -> None:
        self.info = self.engine.store.update_chat(self.id, settings=checked(settings))
        self.settings_changed()

    def set_system_prompt(self, text: str) -> None:
        self.info = self.engine.store.update_chat(self.id, system_prompt=text)
        self.settings_changed()

    def change(self, assignments: dict[str, str]) -> list[str]:
        """`contextdesk chat set`: KEY=VALUE pairs (keys in CHAT_FIELDS), checked together.
        A new model brings its window, its output limit and the thinking it takes (as
        `switch_model`); returns what was adjusted to fit it, said ([] when nothing was)."""
        fields: dict[str, Any] = {}
        values = asdict(self.settings)
        for key, text in assignments.items():
            name = CHAT_FIELDS.get(key)
            if name is None:
                raise ContextDeskError(
                    "Unknown setting",
                    f"{key!r}: use KEY=VALUE with KEY one of {', '.join(CHAT_FIELDS)}.",
                    kind=ErrorKind.USAGE,
                )
            if name in ("title", "model", "system_prompt"):
                fields[name] = text
                continue
            if name == "thinking":
                values.update(thinking_setting(key, text))
                continue
            values[name] = typed_value(key, text, type(values[name]))
        settings = checked(ContextSettings(**values))
        notes: list[str] = []
        model = fields.get("model")
        if model and model != self.info.model:
            settings, notes = self._fitted_to(
                model.strip(), settings, window="context_window" not in assignments
            )
        if "title" in fields:
            self.rename(fields.pop("title"))
        self.info = self.engine.store.update_chat(self.id, settings=settings, **fields)
        self.settings_changed()
        return notes

    def switch_model(self, model: str) -> list[str]:
        """Send this chat's next requests to `model`, with that model's context window,
        output limit and thinking (the transcript stays; the context panel and the meter
        re-plan for it). Returns what had to change to fit the model, said."""
        return self.change({"model": model})

    def _fitted_to(
        self, model: str, settings: ContextSettings, *, window: bool
    ) -> tuple[ContextSettings, list[str]]:
        """`settings` for `model`: its window (unless one was given), a reply no longer
        than it writes, and the thinking it takes (core/thinking.fitted)."""
        from desktop_app.core.thinking import fitted

        facts = self.engine.model_facts(model)
        notes = []
        if window:
            settings = replace(settings, context_window=self.engine.model_window(model))
        if settings.max_tokens > facts.max_output:
            notes.append(
                f"The longest reply is now {facts.max_output:,} tokens (was "
                f"{settings.max_tokens:,}): {facts.display_name} writes no more."
            )
            settings = replace(settings, max_tokens=facts.max_output)
        choice, moved = fitted(facts, settings.thinking_choice)
        if moved:
            notes.append(moved[0].upper() + moved[1:])
        return checked(settings.with_thinking(choice)), notes

    def thinking_options(self) -> ThinkingOptions:
        """What this chat's thinking can be on its model (for the chat bar's menu)."""
        from desktop_app.core.thinking import options

        return options(self.engine.model_facts(self.info.model))

    def fit_to_model(self) -> str:
        """A chat stored with a thinking setting its model does not take (a budget from
        before adaptive thinking) moves to what the model takes, once: said here, and
        saved, so it is not said again."""
        from desktop_app.core.thinking import fitted

        facts = self.engine.model_facts(self.info.model)
        choice, moved = fitted(facts, self.settings.thinking_choice)
        if not moved:
            return ""
        try:
            self.info = self.engine.store.update_chat(
                self.id, settings=self.settings.with_thinking(choice)
            )
        except ContextDeskError:  # (a busy or read-only database: the request is right anyway)
            log.warning("could not save chat %s's thinking setting", self.id, exc_info=True)
            return ""
        return f"“{self.title}”: {moved}"

    def fork(self, through: Message) -> Chat:
        """A new chat with the messages up to and including `through`, and the facts."""
        info = self.engine.store.fork(self.id, through.id, f"{self.title} (fork)")
        return self.engine.chat(info.id)

    # -- branches (core/branches.py) ---------------------------------------------------------

    def edited(self, message: Message, new: str | Sequence[Block]) -> Message:
        """`message` as the user rewrote it — its images kept, then what they wrote (text,
        or blocks: attachments and text) — to send as its alternative:
        `start_turn(edited, approver, beside=message.id)` makes the new branch."""
        blocks = [TextBlock(new.strip())] if isinstance(new, str) else list(new)
        blocks = [b for b in blocks if not (isinstance(b, TextBlock) and not b.text.strip())]
        if not blocks:
            raise ContextDeskError(
                "Nothing to send", "The edited message is empty.", kind=ErrorKind.USAGE
            )
        images = tuple(b for b in message.blocks if isinstance(b, ImageBlock))
        return Message("user", (*images, *blocks))

    def message(self, message_id: str) -> Message:
        """One message of the chat, on whichever branch."""
        return self.engine.store.message(self.id, message_id)

    def messages_after(self, message_id: str | None) -> list[Message]:
        """The branch shown after one of its messages (all of it for None)."""
        return self.engine.store.messages_after(self.id, message_id)

    def prompt_of(self, reply: Message, messages: Sequence[Message]) -> Message:
        """The user's message a reply answers (tool results are part of Claude's turn)."""
        ids = [m.id for m in messages]
        if reply.id not in ids:
            raise ContextDeskError(
                "Message not found", "It is not in this chat.", kind=ErrorKind.NOT_FOUND
            )
        for message in reversed(messages[: ids.index(reply.id)]):
            if message.role == "user" and not message.is_tool_results:
                return message
        raise ContextDeskError(
            "Nothing to regenerate",
            "No message of yours comes before this reply.",
            kind=ErrorKind.NOTHING_TO_RETRY,
        )

    def branch_points(self) -> dict[str, Siblings]:
        """The messages of the branch shown that have alternatives, with them."""
        if not self.info.branched:  # (kept current: a turn, a switch refresh it)
            return {}
        tree = self.engine.store.tree(self.id)
        found = {}
        if tree.branched:
            for message_id in tree.path(self.info.leaf_id):
                siblings = tree.siblings(message_id)
                if siblings is not None:
                    found[message_id] = siblings
        return found

    def branches(self) -> list[Branch]:
        """Every branch of the chat, oldest first: where it ends and where it leaves the
        others (the command line numbers them)."""
        tree = self.engine.store.tree(self.id)
        shown = tree.path(self.info.leaf_id)[-1:]
        branches = []
        for leaf in tree.leaves():
            path = tree.path(leaf)
            # where it differs: its last message that has alternatives
            differs = max(
                (n for n, m in enumerate(path, 1) if tree.siblings(m) is not None), default=1
            )
            branches.append(Branch(leaf, len(path), differs, path[differs - 1], [leaf] == shown))
        return branches

    def show_branch(self, message_id: str, *, exactly: bool = False) -> None:
        """Show the branch through `message_id` (as it was left, or ending there).
        The context, the meter and the next request follow it."""
        if self.busy:
            raise ContextDeskError(
                "Claude is still answering",
                "Wait for the reply to finish, or stop it, then switch branches.",
                kind=ErrorKind.USAGE,
            )
        self._check_no_turn_elsewhere()
        self.engine.store.show_branch(self.id, message_id, exactly=exactly)
        self.refresh_info()
        self._state = None  # which summaries stand for this branch (`off_branch`)
        if self._planner is not None:
            self._planner.state = self.state

    def show_branch_holding(self, message_id: str) -> bool:
        """Show the branch a message is on, when it is not the one shown (a search hit
        in another version); False when nothing had to change."""
        if not self.info.branched:
            return False
        tree = self.engine.store.tree(self.id)
        if message_id in tree.path(self.info.leaf_id):
            return False
        self.show_branch(message_id)
        return True

    def set_pinned(self, pinned: bool) -> None:
        """Keep the chat on top of the chat list (or let it go back to its date)."""
        self.info = self.engine.store.set_pinned(self.id, pinned)

    def set_archived(self, archived: bool) -> None:
        """Take the chat out of the list without deleting it (or bring it back)."""
        self.info = self.engine.store.set_archived(self.id, archived)

    def delete(self) -> None:
        """Move to the trash (the chat list offers Undo: `Engine.restore_chat`)."""
        self.engine.store.delete_chat(self.id)
        self.engine.forget(self.id)

    def export(self, fmt: str = "json", *, with_requests: bool = False) -> str:
        """The chat as JSON (contextdesk.chat, with the request its next turn would send,
        and on request every request it sent, from the ledger) or as Markdown."""
        from desktop_app.storage.chat_export import export_chat, export_markdown

        store = self.engine.store
        if fmt == "md":
            return export_markdown(store, self.id)
        messages = self.messages()
        body = self.planning("", messages)().request.body()  # the history as it stands
        doc = export_chat(store, self.id, body, self.engine.counter.blocks_of, messages)
        if with_requests:
            doc["requests"] = self._ledger_export()
        return json.dumps(doc, ensure_ascii=False, indent=2, allow_nan=False) + "\n"

    def _ledger_export(self) -> list[dict[str, Any]]:
        from desktop_app.storage import ledger

        db = self.engine.store.db
        return [{**r.to_json(), "body": ledger.body(db, r.id)} for r in self.sent_requests()]

    def export_to(self, path: Path, fmt: str = "json", *, with_requests: bool = False) -> None:
        """Write the export to `path` whole or not at all."""
        data = self.export(fmt, with_requests=with_requests).encode("utf-8")
        try:
            write_atomically(path, data)
        except OSError as exc:
            raise file_error("Export failed", path, exc) from exc

    # -- turns ------------------------------------------------------------------------------

    def start_turn(
        self,
        message: Message | None,
        approver: Approver,
        *,
        beside: str | None = None,
        after: str | None = None,
    ) -> Turn:
        """Store the user's `message` (when this returns it is on disk) and make the turn
        that answers it; `beside` another message, it is that one's alternative (an
        edit: a new branch). With no message, retry: answer the history as it stands,
        leaving a failed or interrupted last reply out of the context (the transcript
        keeps it) — or, `after` a message of the user's, answer it again beside the
        replies it has (regenerate: a new branch). A failed write raises and changes
        nothing."""
        from desktop_app.core.loop import LoopConfig, LoopPorts, LoopState

        if beside is not None and message is None:
            raise ValueError("an alternative to a message needs the message")
        if self.busy:
            raise ContextDeskError(
                "Claude is still answering",
                "Wait for the reply to finish, or stop it, then send.",
                kind=ErrorKind.USAGE,
            )
        store = self.engine.store
        self._check_no_turn_elsewhere()
        self._state = store.context_state(self.id)  # as another program may have left it
        planner = self.planner()
        store.turn_started(self.id, os.getpid())  # first: if the disk is full, nothing is stored
        try:
            if after is not None:  # until the new answer is stored, the old one stays shown
                self._answering_again = (after, store.chat(self.id).leaf_id)
                self.show_branch(after, exactly=True)
            if message is not None:
                store.append_message(self.id, message, beside=beside)
                self._name_after(message)
            if beside is not None:  # a new branch: its own summaries only
                self._state = planner.state = store.context_state(self.id)
            history = self.history() if message is not None else self._prepare_retry()
        except BaseException:
            with contextlib.suppress(ContextDeskError):
                self._show_old_answer_if_none_came()
                store.turn_ended(self.id, os.getpid())
            raise
        assert self._tools is not None  # built with the planner
        ports = LoopPorts(
            backend=self.engine.connection.lazy(),
            planner=planner,
            approver=approver,
            tools=self._tools,
            counter=self.engine.counter,
        )
        self._turn = Turn(
            self,
            LoopState(history),
            ports,
            LoopConfig(context_window=self.settings.context_window),
            TurnRecorder(
                store,
                self.id,
                self.engine.counter,
                server=self.engine.connection.server(),
                requests=self._request_recorder(),
            ),
        )
        return self._turn

    def record_compaction_requests(self) -> None:
        """Put the summary requests compaction sent into the ledger (on the thread that
        owns the database; compaction itself runs on a worker). A failed write loses the
        record, never the chat."""
        if self._planner is None:
            return
        sent = self._planner.compactor.take_sent()
        if not sent:
            return
        from desktop_app.storage import ledger

        db, server = self.engine.store.db, self.engine.connection.server()
        try:
            for summary in sent:
                body = {**summary.request.body(), "stream": True}  # as the backend sends it
                row = ledger.record(
                    db, self.id, body, server=server, sent_at=summary.sent_at, purpose="compaction"
                )
                ledger.finish(
                    db, row, seconds=summary.seconds, usage=summary.usage, status=summary.status
                )
        except sqlite3.Error:
            log.warning("could not record a summary request in the ledger", exc_info=True)

    def _request_recorder(self) -> RequestRecorder:
        if self._sent is None:
            from desktop_app.storage.ledger import RequestRecorder

            self._sent = RequestRecorder()
        return self._sent

    def _check_no_turn_elsewhere(self) -> None:
        """Another process (the window, or the command line beside it) may be in the
        middle of this chat's turn: a message or a context edit made now would land
        inside it, or be overwritten when it ends."""
        pid = self.engine.store.answering_pid(self.id)
        if pid is None or pid == os.getpid() or not process_alive(pid):
            return  # none, ours, or left by a process that has died
        raise ContextDeskError(
            "This chat is answering elsewhere",
            f"ContextDesk (process {pid}) is in the middle of a reply in this chat. Let it "
            "finish (or stop it there), then try again.",
            kind=ErrorKind.ALREADY_RUNNING,
        )

    def retry_point(self, messages: Sequence[Message]) -> str | None:
        """Where a retry answers from: after a failed or interrupted reply, the message
        before it — the new answer is stored beside the failed one, as a version of it
        (‹1/2›, as a regeneration is), never as a second reply under it; None when the
        last message is the user's own (answered as it stands)."""
        kept = _without_failed_replies(messages)
        if len(kept) == len(messages) or not kept or kept[-1].role != "user":
            return None
        return kept[-1].id

    def _prepare_retry(self) -> list[Message]:
        """The history a retry answers: the stored one without its failed or interrupted
        last replies, which leave the context too (read before any repair: a repair
        would merge them into the reply before them)."""
        messages = self.messages()
        kept = _without_failed_replies(messages)
        state = self.state
        for failed in messages[len(kept) :]:
            state = state.exclude_message(failed.id)
        messages = kept
        if not messages or messages[-1].role != "user":
            raise ContextDeskError(
                "Nothing to retry",
                "The last reply finished; send a new message instead.",
                kind=ErrorKind.NOTHING_TO_RETRY,
            )
        self._save_state(state)
        return self.history(messages)

    def send(
        self,
        message: str | Sequence[Block],
        approver: Approver,
        cancel: CancelToken | None = None,
        on_event: Callable[[LoopEvent], None] | None = None,
    ) -> TurnFinished:
        """Send a message and answer it on this thread, persisting every event."""
        blocks = (TextBlock(message),) if isinstance(message, str) else tuple(message)
        turn = self.start_turn(Message("user", blocks), approver)
        finished: TurnFinished | None = None
        try:
            for event in turn.events(cancel or CancelToken()):
                turn.record(event)
                if on_event is not None:
                    on_event(event)
                if isinstance(event, TurnFinished):
                    finished = event
        finally:
            turn.finish()
            turn.release_thread()
        assert finished is not None  # run_turn always ends with TurnFinished
        return finished

    def _name_after(self, message: Message) -> None:
        """A new chat is named after its first message (rename it any time)."""
        self.info = self.engine.store.chat(self.id)
        if self.title != NEW_CHAT_TITLE or self.info.message_count != 1 or not message.text:
            return
        from desktop_app.core.titles import title_from

        # What was typed goes last (after attachments and paste cards): it names the chat
        typed = next(
            (b.text for b in reversed(message.blocks) if isinstance(b, TextBlock) and b.text),
            "",
        )
        title = title_from(typed, NEW_CHAT_TITLE)
        try:
            self.rename(title)
        except ContextDeskError:
            return  # the name is a nicety; the message is already stored

    def _state_changed_by_turn(self, state: ContextState) -> None:
        self.engine.store.save_context_state(self.id, state)
        self._state = state

    def _turn_ended(self, turn: Turn) -> None:
        if self._turn is not turn:
            return
        self._turn = None
        self.record_compaction_requests()  # auto-compaction's, if it ran
        state = self._planner.state if self._planner is not None else self.state
        queued, self._queued = self._queued, []
        for change in queued:
            state = change(state)
        self._state = state  # shown even if saving fails below; the error says so
        try:
            self._save_state(state)
            self._show_old_answer_if_none_came()
            self.refresh_info()
        finally:
            self.engine.store.turn_ended(self.id, os.getpid())

    def _show_old_answer_if_none_came(self) -> None:
        """A regeneration stopped or failed before its first word stored nothing: the
        branch shown ends at the question still, so the answer it had comes back."""
        if self._answering_again is None:
            return
        question, was_shown = self._answering_again
        self._answering_again = None
        if self.engine.store.chat(self.id).leaf_id == question:  # (any new message clears it)
            self.engine.store.show_end(self.id, was_shown)
            self.refresh_info()
            self._state = None  # its summaries again

    # -- state changes ------------------------------------------------------------------------

    def _change(self, change: StateChange) -> None:
        """Apply a context edit now — to the state as stored, so an edit made by another
        program meanwhile is kept — or, during our own turn, when it ends."""
        if self.busy:
            self._queued.append(change)
            return
        self._check_no_turn_elsewhere()
        self._save_state(change(self.engine.store.context_state(self.id)))

    def _save_state(self, state: ContextState) -> None:
        """Saved first, then kept: a failed write leaves the chat as it was."""
        self.engine.store.save_context_state(self.id, state)
        self._state = state
        if self._planner is not None and not self.busy:
            self._planner.state = state


def can_retry(messages: Sequence[Message]) -> bool:
    """Is there something to answer again: a last user message, once any failed or
    interrupted replies after it are left out? (Reads from the end: no copy.)"""
    for message in reversed(messages):
        if message.role == "user":
            return True
        if message.status is MessageStatus.COMPLETE:
            return False
    return False


def _without_failed_replies(messages: Sequence[Message]) -> list[Message]:
    kept = list(messages)
    while kept and kept[-1].role == "assistant" and kept[-1].status is not MessageStatus.COMPLETE:
        kept.pop()
    return kept


def checked(settings: ContextSettings) -> ContextSettings:
    """`settings`, if a chat can work with them; else a usage error that says why."""
    problems = settings.problems()
    if problems:
        raise ContextDeskError("Bad value", "; ".join(problems) + ".", kind=ErrorKind.USAGE)
    return settings


THINKING_FIELDS = ("thinking", "thinking_budget", "effort")  # what `thinking=` sets


def thinking_setting(key: str, text: str) -> dict[str, Any]:
    """`thinking=…` (`chat set`, a project's defaults) as the settings it changes; a
    usage error that says what is taken otherwise."""
    from desktop_app.context.chat_settings import thinking_fields

    try:
        return dict(thinking_fields(text))
    except ValueError as exc:
        raise ContextDeskError("Bad value", f"{key}: {exc}.", kind=ErrorKind.USAGE) from None
