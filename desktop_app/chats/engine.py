"""`Engine`: the one place that opens ContextDesk's parts — the data folder, the settings,
the chat store, the key, the token counter and the connection — and hands out one `Chat`
object per chat.

Nothing heavy loads here: the context engine, the loop, the tools and the SDK load with
the first plan or the first request, after the window's first paint.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import InitVar, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_app.chats.connection import Connection
from desktop_app.chats.instance import InstanceLock, process_alive
from desktop_app.chats.names import NEW_CHAT_TITLE
from desktop_app.config.errors import BadSetting
from desktop_app.config.logfile import log_to_file
from desktop_app.config.paths import AppPaths, app_paths
from desktop_app.config.secrets import SecretStore
from desktop_app.config.settings import (
    Settings,
    faults,
    load,
    problems,
    save,
    with_values,
)
from desktop_app.config.window_state import AppState
from desktop_app.context.chat_settings import ContextSettings
from desktop_app.core.errors import ContextDeskError, ErrorKind, file_error
from desktop_app.core.messages import Message
from desktop_app.storage.chat_info import ChatInfo
from desktop_app.storage.db import BACKUPS
from desktop_app.storage.errors import ImportFailed
from desktop_app.storage.kept_transcripts import KeptTranscripts
from desktop_app.storage.search import Hits, SearchHit
from desktop_app.storage.store import ChatStore

if TYPE_CHECKING:  # a chat's machinery loads with the first chat, after the first paint
    from desktop_app.chats.budgets import Budget
    from desktop_app.chats.chat import Chat, Imported
    from desktop_app.chats.imports import ImportBatch
    from desktop_app.chats.projects import Projects
    from desktop_app.chats.tool_servers import ToolServers
    from desktop_app.chats.usage import UsageReport
    from desktop_app.config.mcp_servers import McpConfig
    from desktop_app.config.prices import PriceTable, Spend
    from desktop_app.core.model_facts import ModelFacts
    from desktop_app.core.ports import ModelInfo
    from desktop_app.storage.exchange import ImportResult
    from desktop_app.storage.ledger import Carrier
    from desktop_app.tokens.counter import TokenCounter
    from desktop_app.tools.mcp_hub import McpHub

log = logging.getLogger(__name__)

DEMO_MODEL = "contextdesk-demo"


def _how_to_reach(settings: Settings) -> tuple[str, int, int, str, str]:
    """What the connection is made from: a change means connecting afresh."""
    return (
        settings.base_url,
        settings.first_word_timeout,
        settings.quiet_timeout,
        settings.prompt_cache,
        settings.server_tools,
    )


@dataclass
class Engine:
    paths: AppPaths
    settings: Settings
    store: ChatStore
    secrets: SecretStore
    demo_mode: InitVar[bool] = False
    window_open: bool = False  # a window holds this data folder (we are the command line)
    connection: Connection = field(init=False)
    _counter: TokenCounter | None = field(default=None, init=False, repr=False)
    _prices: PriceTable | None = field(default=None, init=False, repr=False)
    _chats: dict[str, Chat] = field(default_factory=dict, init=False, repr=False)
    _seen_version: int = field(default=0, init=False, repr=False)
    _settings_stamp: int | None = field(default=None, init=False, repr=False)
    _listed: dict[str, ModelInfo] = field(default_factory=dict, init=False, repr=False)
    _mcp: McpHub | None = field(default=None, init=False, repr=False)
    _mcp_made: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    notices: list[str] = field(default_factory=list, init=False, repr=False)  # take_notices
    # The time now, for what expires (the prompt cache); tests set their own clock.
    clock: Callable[[], float] = field(default=time.time, init=False, repr=False)

    def __post_init__(self, demo_mode: bool) -> None:
        # The server is read when connecting: Settings may have changed it by then.
        self.connection = Connection(
            self.secrets,
            lambda: self.settings,
            demo=demo_mode,
            demo_cache=self.paths.data / "demo-prompt-cache.json",
        )
        self._seen_version = self.store.data_version()
        self._settings_stamp = self._stamp()

    @classmethod
    def open(
        cls,
        home: str | Path | AppPaths | None = None,
        *,
        demo: bool = False,
        holds_folder: bool = False,
    ) -> Engine:
        """Open the data folder (`home`, else CONTEXTDESK_HOME, else the platform's; or
        its paths, made already), creating it on first use. `holds_folder`: the caller
        (the window) holds the folder's `InstanceLock`. Leftover streaming replies
        become interrupted — unless a window that is not us holds the folder: its reply
        may be streaming right now."""
        paths = home if isinstance(home, AppPaths) else app_paths(home).ensure()
        settings = load(paths.settings_file, Settings)
        window_open = not holds_folder and InstanceLock(paths.data).held_elsewhere()
        store = ChatStore.open(paths.database, kept=KeptTranscripts())
        try:
            if not window_open:  # and not in a chat another process is answering in
                running = store.running_turns().items()
                store.recover(live=[chat for chat, pid in running if process_alive(pid)])
            if settings.thinking == "budget" and settings.thinking_budget:
                # chats made before thinking was a chat setting had Settings' budget
                store.fill_in_setting("thinking_budget", settings.thinking_budget)
        except ContextDeskError:
            store.close()
            raise
        secrets = SecretStore(paths.config, plaintext_opt_in=settings.plaintext_key_opt_in)
        return cls(paths, settings, store, secrets, demo, window_open)

    def close(self) -> None:
        if self._mcp is not None:
            self._mcp.close()  # their processes end with us
        self.connection.close()
        try:
            if self._counter is not None:
                self._counter.take_lessons()  # (a command's reply, with no plan after it)
        except ContextDeskError as exc:  # a calibration not kept: the next reply teaches it
            log.warning("the last reply's calibration was not saved: %s", exc)
        finally:
            self.store.close()

    # -- MCP servers ----------------------------------------------------------------------------

    def mcp_config(self) -> McpConfig:
        from desktop_app.config.mcp_servers import McpConfig

        return McpConfig(self.paths.config)

    @property
    def mcp(self) -> McpHub | None:
        """The MCP servers' connections; None while none is configured (then nothing of
        MCP is loaded)."""
        with self._mcp_made:  # the window's background thread may be making it too
            if self._mcp is None:
                config = self.mcp_config()
                if not config.path.exists():
                    return None
                from desktop_app.tools.mcp_hub import McpHub

                self._mcp = McpHub(config, self.paths.logs, counter=self.counter)
        return self._mcp

    def project_names(self) -> dict[str, str]:
        """Every project's name by its id: all the chat list needs of them."""
        return self.store.project_names()

    @property
    def projects(self) -> Projects:
        """Projects: memory shared across chats."""
        from desktop_app.chats.projects import Projects

        return Projects(self)

    @property
    def tool_servers(self) -> ToolServers:
        """The MCP servers as the faces use them (configure, start, look, turn off)."""
        from desktop_app.chats.tool_servers import ToolServers

        return ToolServers(self)

    def mcp_changed(self) -> None:
        """The servers or their states changed: chats plan again with the tools there are
        now. Call on the database thread."""
        for chat in self._chats.values():
            chat.plans.settings_changed()

    @property
    def log_file(self) -> Path:
        return self.paths.log_file

    def keep_log(self) -> None:
        """Warnings, errors and bugs' tracebacks go to the log file too (to attach to a
        bug report); what the user sees stays short."""
        log_to_file(self.log_file)

    @property
    def demo(self) -> bool:
        return self.connection.demo

    @property
    def counter(self) -> TokenCounter:
        """Local token estimates, calibrated by what the API reports (made on first use:
        its encoding loads in ~0.3 s)."""
        if self._counter is None:
            from desktop_app.tokens.calibration import Calibration
            from desktop_app.tokens.counter import TokenCounter

            self._counter = TokenCounter(calibration=Calibration(self.store))
        return self._counter

    def prices(self) -> PriceTable:
        """The price table (bundled, with the user's `prices.json` over it), read once."""
        if self._prices is None:
            from desktop_app.config.prices import PriceTable

            self._prices = PriceTable.load(self.paths.config)
        return self._prices

    def set_price(self, model: str, values: dict[str, float]) -> Path:
        """Enter or correct one model's price (per million tokens, in the table's
        currency): `input` and `output` are needed unless the table has the model; cache
        rates the user leaves out follow the API's multipliers (writes 1.25× and 2× input,
        reads 0.1×). Returns the file it went into (the user's `prices.json`)."""
        from desktop_app.config.prices import FIELDS, price_from_json, set_user_price

        known = self.prices().price(model)
        merged: dict[str, float] = dict(known.to_json()) if known else {}  # type: ignore[arg-type]
        merged.pop("above", None)
        unknown = [key for key in values if key not in (*FIELDS, "batch_input", "batch_output")]
        if unknown or not model.strip():
            raise BadSetting(
                ", ".join(unknown) or "model",
                f"give a model and any of {', '.join(FIELDS)}, batch_input, batch_output",
            )
        merged.update(values)
        if "input" not in merged or "output" not in merged:
            raise BadSetting("input", "a new model's price needs at least input and output")
        if not known or "input" in values:
            for key, times in (
                ("cache_write_5m", 1.25),
                ("cache_write_1h", 2.0),
                ("cache_read", 0.1),
            ):
                if key not in values:
                    merged[key] = round(merged["input"] * times, 6)
        price = price_from_json(merged)
        if price is None:
            raise BadSetting(
                "price", "each figure must be a number from 0 to 100,000 per million tokens"
            )
        try:
            path = set_user_price(self.paths.config, model.strip(), price)
        except OSError as exc:
            raise file_error("Price not saved", self.paths.config / "prices.json", exc) from exc
        self._prices = None  # read again, with it
        return path

    def spend(self, since: float | None = None, chat_id: str | None = None) -> Spend:
        """What the requests cost — every chat's, or one's — since `since` (all time
        when None)."""
        from desktop_app.chats.usage import spend

        return spend(self, since=since, chat_ids=None if chat_id is None else [chat_id])

    def usage(self, by: str, since: float | None = None) -> UsageReport:
        """Spend and tokens grouped by day, model, chat or project (chats/usage.py)."""
        from desktop_app.chats.usage import report

        return report(self, by, since)

    def usage_reports(self, since: float | None = None) -> dict[str, UsageReport]:
        """`usage` by every grouping at once (day, model, chat, project): one read."""
        from desktop_app.chats.usage import reports

        return reports(self, since)

    def all_budgets(self) -> list[Budget]:
        """Every cap set: the month's, each chat's and each project's (chats/budgets.py)."""
        from desktop_app.chats.budgets import all_budgets

        return all_budgets(self)

    def model_of(self, chat: ChatInfo) -> str:
        return DEMO_MODEL if self.demo else chat.model

    # -- chats --------------------------------------------------------------------------

    def chat(self, chat_id: str) -> Chat:
        """The chat's one `Chat` object (made on first use)."""
        chat = self._chats.get(chat_id)
        if chat is None:
            from desktop_app.chats.chat import Chat

            chat = self._chats[chat_id] = Chat(self, self.store.chat(chat_id))
            notice = chat.setup.fit_to_model()
            if notice:
                self.notices.append(notice)
        return chat

    def take_notices(self) -> list[str]:
        """What the engine changed on its own and must say once (a chat's thinking moved
        to what its model takes), cleared as it is taken."""
        taken, self.notices[:] = list(self.notices), []
        return taken

    def find(self, ref: str) -> Chat:
        """A chat by its id or a unique prefix of it."""
        return self.chat(self.store.find_chat(ref).id)

    def list_chats(self, *, archived: bool = False) -> list[ChatInfo]:
        """Chats by last activity, newest first (the archived ones with `archived`)."""
        return self.store.list_chats(archived=archived)

    def search(self, text: str, *, chat_id: str | None = None, limit: int = 200) -> Hits:
        """Chats whose title and messages whose text contain `text`: across all chats the
        newest first, within one chat in order (its own writes included: the index is
        kept by the database in the same transaction as every message)."""
        return self.store.search(text, chat_id=chat_id, limit=limit)

    def requests_carrying(self, text: str) -> dict[str, list[Carrier]]:
        """Every chat whose requests carried `text` (from the ledger): chat id → those
        requests, oldest first."""
        from desktop_app.chats.tracing import requests_carrying

        return requests_carrying(self.store, text)

    def search_chats(
        self, text: str, limit: int = 200
    ) -> tuple[list[tuple[ChatInfo, SearchHit]], bool]:
        """Each chat that matches `text` once: those whose title matches first, then
        those with the newest matching messages, each with that message; and whether the
        search stopped at its time limit (then these are what it found by then)."""
        best: dict[str, SearchHit] = {}
        hits = self.search(text, limit=limit)
        for hit in hits:
            best.setdefault(hit.chat_id, hit)
        infos = self.store.chats(list(best))
        found = [(infos[chat_id], hit) for chat_id, hit in best.items() if chat_id in infos]
        return found, hits.cut

    def new_chat(
        self,
        title: str = NEW_CHAT_TITLE,
        *,
        model: str | None = None,
        system_prompt: str | None = None,
        **overrides: Any,
    ) -> Chat:
        """A chat made from Settings' defaults — model, system prompt, max output tokens,
        extended thinking — with any of them (or a context setting) overridden."""
        defaults = self.settings
        model = model or defaults.model
        info = self.store.create_chat(
            title,
            model,
            defaults.system_prompt if system_prompt is None else system_prompt,
            self.starting_settings(model, **overrides),
        )
        return self.chat(info.id)

    def starting_settings(self, model: str | None = None, **overrides: Any) -> ContextSettings:
        """The settings a new chat with `model` starts with — Settings' defaults, with
        `overrides` (ContextSettings fields) over them — or a usage error saying why a
        chat could not work with them."""
        from desktop_app.chats.setting_values import checked
        from desktop_app.context.chat_settings import NAME_LISTS, names
        from desktop_app.core.thinking import fitted

        for name in NAME_LISTS:  # (a project's defaults hold them as JSON lists)
            if name in overrides:
                overrides[name] = names(overrides[name]) or ()
        defaults = self.settings
        facts = self.model_facts(model or defaults.model)
        settings = replace(
            ContextSettings(
                context_window=self.model_window(facts.id),
                max_tokens=min(defaults.max_tokens, facts.max_output),
                thinking=defaults.thinking,
                thinking_budget=defaults.thinking_budget,
                effort=defaults.effort,
                thinking_display=defaults.thinking_display,
            ),
            **overrides,
        )
        choice, _ = fitted(facts, checked(settings).thinking_choice)  # (as given, then fitted)
        return checked(settings.with_thinking(choice))

    def restore_chat(self, chat_id: str) -> Chat:
        """Take a chat out of the trash."""
        self.store.restore_chat(chat_id)
        return self.chat(chat_id)

    def trashed_chats(self) -> list[ChatInfo]:
        """The chats in the trash, most recently trashed first."""
        chats = self.store.list_chats(trash=True)
        return sorted(chats, key=lambda c: c.deleted_at or 0.0, reverse=True)

    def delete_for_good(self, chat_id: str) -> None:
        """Delete a chat in the trash for good (its requests in the ledger too)."""
        self.store.purge_chat(chat_id)
        self.forget(chat_id)

    def empty_trash(self) -> int:
        """Delete every chat in the trash for good; returns how many."""
        trashed = self.trashed_chats()
        for chat in trashed:
            self.delete_for_good(chat.id)
        return len(trashed)

    def forget(self, chat_id: str) -> None:
        self._chats.pop(chat_id, None)

    def import_file(self, path: Path, on_read: Callable[[int], None] | None = None) -> Imported:
        """Import a contextdesk.chat file or a Messages API request body: all or nothing.
        Only a regular file is read (a FIFO, a device or /dev/zero is refused at once);
        an export of ours as it goes (`on_read(n)` told of each n bytes read: it may
        stop it), anything else within the size limit."""
        from desktop_app.chats.given_files import open_given_file, shown_name
        from desktop_app.storage.exchange import import_chat_file

        try:
            with open_given_file(path) as handle:
                untitled = Path(shown_name(path)).stem
                result = import_chat_file(self.store, handle, untitled, on_read)
        except ContextDeskError as exc:
            if exc.kind is not ErrorKind.USAGE:  # the system's reason (a full disk, …)
                raise
            raise ImportFailed(exc.title, exc.message) from exc
        except OSError as exc:  # (reading on: a disk error mid-file)
            raise file_error("Cannot read the file", path, exc) from exc
        return self._imported(result)

    def import_path(
        self,
        path: Path | Sequence[Path],
        *,
        chosen: str | None = None,
        model: str | None = None,
        progress: Callable[[str, float], bool] | None = None,
    ) -> ImportBatch:
        """Chats of ours, request bodies, or another app's whole export — one file, folder
        or zip, or its several numbered zips (chats/imports.py): each chat whole or not at
        all, one imported before skipped; `progress` is told how far it is and may stop it."""
        from desktop_app.chats.imports import import_path

        return import_path(self, path, chosen=chosen, model=model, progress=progress)

    def export_source(self, path: Path) -> str | None:
        """Which app's export `path` is ("chatgpt", …), or None: a chat of ours, a request
        body, or nothing readable (importing it says why)."""
        from desktop_app.storage.foreign.reading import open_export

        try:
            export = open_export(path)
        except ContextDeskError:
            return None
        return export.source if export is not None else None

    def import_bytes(self, raw: bytes, untitled: str = "Imported chat") -> Imported:
        """Import a chat; it is titled as the file says, else from its first message,
        else `untitled` — with a number when another chat has that title already."""
        from desktop_app.storage.exchange import import_chat

        return self._imported(import_chat(self.store, raw, untitled))

    def _imported(self, result: ImportResult) -> Imported:
        """The imported chat, under a title no other chat has (a number added)."""
        from desktop_app.chats.chat import Imported

        chat = self.chat(result.chat.id)
        taken = {c.title for c in self.list_chats() if c.id != chat.id}
        if chat.title in taken:
            number = 2
            while f"{chat.title} ({number})" in taken:
                number += 1
            chat.rename(f"{chat.title} ({number})")
        return Imported(chat, result.repairs)

    def fork(self, chat: Chat, through: Message) -> Chat:
        """A new chat with `chat`'s messages up to and including `through`, and its facts."""
        info = self.store.fork(chat.id, through.id, f"{chat.title} (fork)")
        return self.chat(info.id)

    def create_demo_chat(self, turns: int = 4) -> Chat:
        """A chat of demo conversation with two pinned facts, to look around in."""
        from desktop_app.demo_chat import create_demo_chat

        return self.chat(create_demo_chat(self.store, turns).id)

    def reader(self, chat_id: str) -> Callable[[], Sequence[Message]]:
        """Reads a chat's whole transcript through a connection of its own: for a worker
        thread, while this one writes (WAL lets readers and the writer run together)."""
        self.counter  # noqa: B018 — made here, on this thread (its encoding loads on need)

        def read() -> Sequence[Message]:
            with self.transcript_at_one_moment(chat_id) as (_store, messages):
                return messages

        return read

    @contextlib.contextmanager
    def transcript_at_one_moment(
        self, chat_id: str
    ) -> Iterator[tuple[ChatStore, Sequence[Message]]]:
        """A chat's whole transcript, read at one moment through a connection of its own
        (a worker's), the token counts kept for it taught to the counter (`keep_counts`);
        and that connection, still at that moment, for what else is read with it."""
        store = ChatStore.open(self.paths.database, kept=self.store.kept)
        try:
            with store.one_moment():
                counts: dict[str, tuple[int, ...]] = {}
                messages = store.messages(chat_id, counts)
                self.counter.remember(messages, counts)
                yield store, messages
        finally:
            store.close()

    def keep_counts(self, messages: Sequence[Message]) -> int:
        """Store these messages' per-block token counts made since they were read, so
        that the chat's next first plan reads them rather than counting again (call it
        on a worker: its writes take turns with the others'). A failed write loses
        nothing but the shortcut. Returns how many messages' counts were stored."""
        unsaved = self.counter.to_store(messages)
        if not unsaved:
            return 0
        try:
            # (this connection: another would look like another program's change)
            self.store.keep_block_counts(unsaved)
        except ContextDeskError:  # a full disk, a read-only folder: counted again next time
            return 0
        return len(unsaved)

    def back_up_if_due(self, keep: int = 3) -> Path | None:
        """Keep a copy of the database a day (data/backups, the newest `keep`), to restore
        from if the file is ever damaged. Opens its own connection: call it on a worker.
        Returns the new copy, or None when today's exists."""
        folder = self.paths.data / BACKUPS
        folder.mkdir(mode=0o700, exist_ok=True)
        target = folder / f"contextdesk-{time.strftime('%Y-%m-%d')}.sqlite3"
        if target.exists():
            return None
        store = ChatStore.open(self.paths.database)
        try:
            store.back_up_to(target)
        finally:
            store.close()
        for old in sorted(folder.glob("contextdesk-*.sqlite3"))[:-keep]:
            old.unlink(missing_ok=True)
        return target

    def changed_elsewhere(self) -> bool:
        """True once for each time another program (the command line, a second copy)
        has written to the database since the last call."""
        version = self.store.data_version()
        changed, self._seen_version = version != self._seen_version, version
        return changed

    # -- settings and the connection ----------------------------------------------------------

    def save_settings(self, settings: Settings) -> None:
        """Check, save (atomically) and use new settings. New chats take them as their
        defaults; open chats re-plan with the tools and workspace they set."""
        found = faults(settings, skip=self._unchanged_workspace(settings))
        if found:
            spec, why = found[0]
            raise BadSetting(spec.key, why)
        try:
            save(self.paths.settings_file, settings)
        except OSError as exc:
            path = self.paths.settings_file
            raise file_error("Settings not saved", path, exc, "Nothing changed.") from exc
        self._settings_stamp = self._stamp()
        self._use_settings(settings)

    def _use_settings(self, settings: Settings) -> None:
        server_changed = _how_to_reach(settings) != _how_to_reach(self.settings)
        self.settings = settings
        self.secrets.plaintext_opt_in = settings.plaintext_key_opt_in
        if server_changed:
            self._listed = {}  # another server lists other models
            self.connection.reconnect()
        for chat in self._chats.values():
            chat.plans.settings_changed()

    def reload_settings_if_changed(self) -> bool:
        """`contextdesk settings` (or an editor) changed settings.json: use it. True if
        it did."""
        stamp = self._stamp()
        if stamp == self._settings_stamp:
            return False
        self._settings_stamp = stamp
        self._use_settings(load(self.paths.settings_file, Settings))
        return True

    def _stamp(self) -> int | None:
        try:
            return self.paths.settings_file.stat().st_mtime_ns
        except OSError:
            return None

    def settings_problems(self, settings: Settings) -> list[str]:
        """What is wrong with `settings`, one line each, named as the Settings dialog
        names them (empty: they can be saved)."""
        return problems(settings, labels=True, skip=self._unchanged_workspace(settings))

    def settings_faults(self, settings: Settings) -> list[tuple[str, str]]:
        """The same, as (field, line): the dialog shows each beside its field."""
        skip = self._unchanged_workspace(settings)
        return [(spec.attr, f"{spec.label}: {why}") for spec, why in faults(settings, skip=skip)]

    def _unchanged_workspace(self, settings: Settings) -> tuple[str, ...]:
        """A workspace folder that has gone missing (a drive not mounted) blocks no other
        change: only a newly chosen folder must exist."""
        return ("workspace",) if settings.workspace == self.settings.workspace else ()

    def change_settings(self, assignments: dict[str, str]) -> Settings:
        """`contextdesk settings KEY=VALUE …`: typed values, checked as the dialog checks."""
        settings = with_values(self.settings, assignments)
        self.save_settings(settings)
        return settings

    def reconnect(self, *, demo: bool | None = None) -> None:
        """The key or demo mode changed: the next request connects afresh."""
        self._listed = {}
        self.connection.reconnect(demo=demo)
        for chat in self._chats.values():
            chat.plans.settings_changed()  # the demo answers as another model

    def models(self) -> list[ModelInfo]:
        """The server's models; call on a worker thread (it connects). A list the server
        gave is kept in the data folder, so the next start knows the limits and the
        thinking settings of its models before asking again."""
        from desktop_app.api.models import save_listing

        listed = self.connection.models()
        self._listed = {info.id: info for info in listed}
        if any(info.source == "server" for info in listed):
            save_listing(self._models_file, self.connection.server(), listed)
        return listed

    @property
    def _models_file(self) -> Path:
        return self.paths.data / "models.json"

    def _remembered_models(self) -> dict[str, ModelInfo]:
        """The last list the server in use gave (empty for another server, or none)."""
        from desktop_app.api.models import load_listing

        listed = load_listing(self._models_file, self.connection.server())
        return {info.id: info for info in listed}

    def model_window(self, model: str) -> int:
        """A model's context window: as Settings give it for their model when the user
        typed one no list knows, else as the server listed it, else as we know it."""
        if model == self.settings.model and self.settings.context_window:
            return self.settings.context_window
        return self.model_facts(model).context_window

    def model_facts(self, model: str) -> ModelFacts:
        """What `model` takes and refuses: the server's Models API where it listed the
        model (remembered from the last listing), over the built-in table
        (core/model_facts.py); a guess that sends nothing risky for a model neither knows."""
        from desktop_app.api.models import facts_with_listing

        if not self._listed:
            self._listed = self._remembered_models()
        return facts_with_listing(model, self._listed.get(model))

    def known_models(self) -> list[ModelInfo]:
        """The models known without asking a server now: its list once fetched (`models`,
        remembered from the last time), else the ones we ship with."""
        from desktop_app.api.models import BUILTIN_MODELS

        if not self._listed:
            self._listed = self._remembered_models()
        return list(self._listed.values()) or list(BUILTIN_MODELS)

    def load_window_state(self) -> AppState:
        return load(self.paths.state_file, AppState)

    def save_window_state(self, state: AppState) -> None:
        try:
            save(self.paths.state_file, state)
        except OSError as exc:
            raise file_error("Window layout not saved", self.paths.state_file, exc) from exc
