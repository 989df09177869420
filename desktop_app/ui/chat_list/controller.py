"""What the chat list's actions do: new chat, search, rename, pin, archive, move to the
trash and undo it, export, import. The actions themselves live in the application layer; this turns them
into dialogs, the list's rows and messages for the window."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from desktop_app.chats import NEW_CHAT_TITLE, Engine
from desktop_app.config.prices import format_money
from desktop_app.core.errors import ContextDeskError, ErrorInfo
from desktop_app.storage.search import MAX_QUERY_CHARS, TIME_BUDGET_S
from desktop_app.ui.chat_list.model import NO_PROJECT
from desktop_app.ui.chat_list.panel import ChatListPanel
from desktop_app.ui.workers import BackgroundWorker

if TYPE_CHECKING:  # loaded with the first chat
    from desktop_app.chats import Chat, ImportBatch
    from desktop_app.storage.chat_info import ChatInfo
    from desktop_app.storage.search import SearchHit
    from desktop_app.ui.projects.project_page import ProjectPage


class ChatListController(QObject):
    """Signals:
    open_requested(str): show this chat (a new one, an import, an undone deletion).
    renamed(object): a chat's `ChatInfo` after a rename.
    trashed(str): this chat went to the trash.
    problem(object): an `ErrorInfo` to show.
    status(str): a short note for the status bar.
    project_changed(), page_closed(): from a project's page (`ProjectPage`).
    """

    open_requested = Signal(str)
    project_changed = Signal()  # a project edited on its page: its chats plan again
    page_closed = Signal()  # the project's page gave the middle back
    renamed = Signal(object)
    trashed = Signal(str)
    problem = Signal(object)
    status = Signal(str)

    def __init__(
        self,
        engine: Engine,
        panel: ChatListPanel,
        window: QWidget,
        searching: BackgroundWorker,
        background: BackgroundWorker,
    ) -> None:
        super().__init__(window)
        self.engine = engine
        self.searching = searching  # off the GUI thread: the newest query wins
        self.background = background  # the chats' own work: an export plans, as plans do
        self.panel = panel
        self.window = window
        self.folder = ""  # the last folder an export or import used (kept in AppState)
        self.page: ProjectPage | None = None  # a project's page, made when first chosen
        self._forked_from: dict[str, str] = {}  # a fork's id → its original's (for Undo)
        panel.model.spend_of = lambda chat_id: engine.spend(chat_id=chat_id).text()
        panel.search_changed.connect(self._on_panel_search_changed)
        panel.rename_requested.connect(self._on_panel_rename_requested)
        panel.pin_requested.connect(self._on_panel_pin_requested)
        panel.archive_requested.connect(self._on_panel_archive_requested)
        panel.archive_toggled.connect(self._on_panel_archive_toggled)
        panel.delete_requested.connect(self._on_panel_delete_requested)
        panel.undo_requested.connect(self._on_panel_undo_requested)
        panel.export_requested.connect(self._on_panel_export_requested)
        panel.project_filter_changed.connect(self._on_panel_project_filter_changed)

    def refresh(self, *, archived: bool | None = None) -> None:
        """Read the list again (after another program changed it): the archive or the
        chats, whichever is shown unless `archived` says."""
        archived = self.panel.showing_archive if archived is None else archived
        try:
            self.panel.set_projects(self.engine.project_names())
            self.panel.set_chats(self.engine.list_chats(archived=archived), archived=archived)
        except ContextDeskError as exc:
            self.problem.emit(exc.info)

    @Slot()
    def _on_panel_project_filter_changed(self) -> None:
        """Another project's chats: the search, if one is typed, runs again within them;
        a project chosen shows its page in the middle, as Claude desktop's projects do."""
        self._on_panel_search_changed(self.panel.search.text().strip())
        wanted = self.panel.model.project_filter
        if isinstance(wanted, str) and wanted and wanted != NO_PROJECT:
            self.show_project_page(wanted)
        elif self.page is not None and self.page.isVisible():
            self.page_closed.emit()

    def show_project_page(self, project_id: str) -> None:
        from desktop_app.ui.projects.project_page import ProjectPage

        center = self.window.center  # type: ignore[attr-defined]
        if self.page is None:
            self.page = ProjectPage(self.engine, center)
            self.page.open_requested.connect(self.open_requested)
            self.page.new_chat_requested.connect(self._on_page_new_chat_requested)
            self.page.changed.connect(self.project_changed)
            center.addWidget(self.page)
        self.page.show_project(project_id)
        center.setCurrentWidget(self.page)

    @Slot(str)
    def _on_page_new_chat_requested(self, project_id: str) -> None:
        try:
            chat = self.engine.projects.new_chat(project_id)
        except ContextDeskError as exc:
            self.problem.emit(exc.info)
            return
        self.refresh()
        self.open_requested.emit(chat.id)

    @Slot(str)
    def _on_panel_search_changed(self, text: str) -> None:
        if not text:
            self.refresh()
            return
        self.searching.submit(
            "search",
            lambda: self.engine.search_chats(text),
            lambda found: self._show_found(text, *found),
            self.problem.emit,
        )

    def _show_found(self, text: str, found: list[tuple[ChatInfo, SearchHit]], cut: bool) -> None:
        if text != self.panel.search.text().strip():
            return  # typed on meanwhile: that search's answer comes next
        self.panel.show_results(found)
        if len(text) > MAX_QUERY_CHARS:
            self.status.emit(f"Searched for the first {MAX_QUERY_CHARS} characters")
        if cut:
            self.status.emit(
                f"The search stopped after {TIME_BUDGET_S:g} s: these are the newest matches "
                "it found by then"
            )

    @Slot(bool)
    def _on_panel_archive_toggled(self, archived: bool) -> None:
        self.show_archive(archived)

    def show_archive(self, archived: bool = True) -> None:
        """List the archived chats (or the others again)."""
        self.panel.search.clear()
        self.refresh(archived=archived)

    @Slot(str, bool)
    def _on_panel_pin_requested(self, chat_id: str, pinned: bool) -> None:
        self.set_pinned(chat_id, pinned)

    @Slot(str, bool)
    def _on_panel_archive_requested(self, chat_id: str, archived: bool) -> None:
        self.set_archived(chat_id, archived)

    def _acted(self, chat_id: str, action: Callable[[Chat], object]) -> Chat | None:
        """The chat once `action` changed it, or None (the problem said) if it failed."""
        chat = self.engine.chat(chat_id)
        try:
            action(chat)
        except ContextDeskError as exc:
            self.problem.emit(exc.info)
            return None
        return chat

    def set_pinned(self, chat_id: str, pinned: bool) -> None:
        """Keep a chat on top of the list, or let it go back under its date."""
        chat = self._acted(chat_id, lambda c: c.set_pinned(pinned))
        if chat is not None:
            self.panel.update_chat(chat.info)

    def set_archived(self, chat_id: str, archived: bool) -> None:
        """Take a chat out of the list (Undo offered), or bring it back."""
        chat = self._acted(chat_id, lambda c: c.set_archived(archived))
        if chat is None:
            return
        if archived:
            self.panel.removed(chat.info, "archive")
        else:
            self.panel.update_chat(chat.info)
            self.status.emit(f"“{chat.title}” is back in the chat list.")

    def sync_with_elsewhere(self) -> dict[str, ChatInfo] | None:
        """Another program (the command line) may have written: the list shows what it
        changed, row by row. Every chat as it stands now, or None when nothing changed."""
        engine = self.engine
        try:
            if not engine.changed_elsewhere():
                return None
            archived = self.panel.showing_archive
            shown = engine.list_chats(archived=archived)
            chats = {c.id: c for c in [*shown, *engine.list_chats(archived=not archived)]}
        except ContextDeskError as exc:
            self.problem.emit(exc.info)
            return None
        self.panel.sync(shown)
        return chats

    def toggle_pinned(self, chat_id: str) -> None:
        self.set_pinned(chat_id, self.engine.chat(chat_id).info.pinned_at is None)

    def toggle_archived(self, chat_id: str) -> None:
        self.set_archived(chat_id, self.engine.chat(chat_id).info.archived_at is None)

    def new_chat(self, title: str = NEW_CHAT_TITLE) -> Chat | None:
        """A chat made from Settings' defaults — or, while a project's chats are listed,
        in that project, from its defaults — opened."""
        project_id = self.panel.model.project_filter
        try:
            if project_id:
                chat = self.engine.projects.new_chat(project_id, title)
            else:
                chat = self.engine.new_chat(title)
        except ContextDeskError as exc:
            self.problem.emit(exc.info)
            return None
        self.show_new(chat)
        return chat

    def show_new(self, chat: Chat) -> None:
        self.panel.update_chat(chat.info)
        self.open_requested.emit(chat.id)

    def show_fork(self, chat: Chat, original_id: str) -> None:
        """A fork, shown — with Undo for a while: one click on a message's bar made it."""
        self.show_new(chat)
        self._forked_from[chat.id] = original_id
        self.panel.offer_undo(chat.info, "fork")

    @Slot(str, str)
    def _on_panel_rename_requested(self, chat_id: str, title: str) -> None:
        chat = self.engine.chat(chat_id)
        try:
            chat.rename(title)
        except ContextDeskError as exc:
            self.problem.emit(exc.info)
            self.panel.update_chat(chat.info)  # the old name again
            return
        self.panel.update_chat(chat.info)
        self.renamed.emit(chat.info)

    def trash(self, chat_id: str, *, offer_undo: bool = True) -> None:
        chat = self._acted(chat_id, lambda c: c.delete())
        if chat is not None:
            self.panel.removed(chat.info, offer_undo=offer_undo)
            self.trashed.emit(chat_id)

    @Slot(str)
    def _on_panel_delete_requested(self, chat_id: str) -> None:
        self.trash(chat_id)

    @Slot(str, str)
    def _on_panel_undo_requested(self, chat_id: str, how: str) -> None:
        if how == "fork":  # the fork goes to the trash (restorable), its original shows
            original = self._forked_from.pop(chat_id, "")
            self.refresh()  # (the original may be gone meanwhile: never selected then)
            self.trash(chat_id, offer_undo=False)
            with contextlib.suppress(ContextDeskError):  # (gone meanwhile: nothing to show)
                listed = self.engine.chat(original).refresh_info() if original else None
                if listed is not None and listed.deleted_at is listed.archived_at is None:
                    self.open_requested.emit(original)
            return
        try:
            if how == "trash":
                self.engine.restore_chat(chat_id)
            else:
                self.engine.chat(chat_id).set_archived(False)
        except ContextDeskError as exc:
            self.problem.emit(exc.info)
            return
        self.refresh()
        self.open_requested.emit(chat_id)

    @Slot(str, str)
    def _on_panel_export_requested(self, chat_id: str, fmt: str) -> None:
        self.export(chat_id, fmt)

    def export(self, chat_id: str, fmt: str) -> None:
        chat = self.engine.chat(chat_id)
        suffix = "json" if fmt == "json" else "md"
        name = (
            "".join(c if c.isalnum() or c in " -_" else "_" for c in chat.title).strip() or "chat"
        )
        path, _ = QFileDialog.getSaveFileName(
            self.window,
            "Export chat",
            str(Path(self.start_folder()) / f"{name}.{suffix}"),
            f"*.{suffix}",
        )
        if not path:
            return
        self.folder = str(Path(path).parent)
        try:
            write = chat.exporting(Path(path), fmt)  # (its planner: a setting may be bad)
        except ContextDeskError as exc:
            self.problem.emit(exc.info)
            return
        # Off the GUI thread: a 100,000-message chat takes seconds to write (~90 MB).
        self.status.emit(f"Exporting “{chat.title}”…")
        self.background.submit(
            f"export:{chat_id}:{path}",
            write,
            lambda _written: self.status.emit(f"Exported to {path}"),
            self.problem.emit,
        )

    def start_folder(self) -> str:
        """Where a file dialog opens: the folder last used, else the user's documents
        (never the folder the app happened to be started in)."""
        if self.folder and Path(self.folder).is_dir():
            return self.folder
        from PySide6.QtCore import QStandardPaths

        documents = QStandardPaths.writableLocation(
            QStandardPaths.StandardLocation.DocumentsLocation
        )
        return documents if documents and Path(documents).is_dir() else str(Path.home())

    def import_chat(self, path: str = "") -> Chat | None:
        """Import JSON chats (ours, or Messages API request bodies), or another app's
        export (its conversations.json, a shard, the zip, or its several numbered zips
        chosen together): each chat all or nothing; the problems, if any, are listed by
        their JSON path. The first chat imported is opened."""
        paths = [path] if path else []
        if not paths:
            paths, _ = QFileDialog.getOpenFileNames(
                self.window,
                "Import chats",
                self.start_folder(),
                "Chats and exports (*.json *.jsonl *.zip);;All files (*)",
            )
            if paths:
                self.folder = str(Path(paths[0]).parent)
        if not paths:
            return None
        model = self._model_for_export([Path(p) for p in paths])
        if model == "":
            return None  # the user said Cancel
        from PySide6.QtWidgets import QProgressDialog  # (not before the first paint)

        from desktop_app.ui.qt_later import Qt

        progress = QProgressDialog("Reading…", "Stop", 0, 1000, self.window)
        progress.setObjectName("importProgress")
        progress.setWindowTitle("Importing")
        progress.setWindowModality(Qt.WindowModality.WindowModal)
        progress.setMinimumDuration(400)  # a small file is in before it would show

        def told(words: str, share: float) -> bool:
            progress.setLabelText(words)
            progress.setValue(round(share * 1000))  # (draws it, and lets Stop be pressed)
            return not progress.wasCanceled()

        try:
            batch = self.engine.import_path([Path(p) for p in paths], model=model, progress=told)
        except ContextDeskError as exc:
            self._show_import_problems(exc.info)
            return None
        finally:
            progress.close()
        for imported in batch.chats[1:]:
            self.panel.update_chat(imported.chat)
        first = self.engine.chat(batch.chats[0].chat.id) if batch.chats else None
        if first is not None:
            self.show_new(first)
        if batch.source != "contextdesk" and (batch.chats or not batch.cancelled):
            self._show_export_imported(batch)
        elif first is not None and batch.chats[0].report:
            self._show_import_repairs(first.title, batch.chats[0].report)
        return first

    def _model_for_export(self, paths: list[Path]) -> str | None:
        """For another app's export, the model its chats go on with, asked once for all
        of them (Settings' first); None for a chat of ours (or in the offline demo,
        where the simulator answers every chat); "" when the user cancels."""
        from PySide6.QtWidgets import QInputDialog

        from desktop_app.chats import SOURCE_NAMES

        source = next(filter(None, map(self.engine.export_source, paths)), None)
        if source is None or self.engine.demo:
            return None
        default = self.engine.settings.model
        listed = {
            m.id: f"{m.display_name} · {m.context_window:,}-token window"
            for m in self.engine.known_models()
        }
        ids = [default, *(m for m in listed if m != default)]
        names = [listed.get(m, m) for m in ids]  # as the model box names them
        chosen, ok = QInputDialog.getItem(
            self.window,
            "Import chats",
            f"A {SOURCE_NAMES.get(source, source)} export: its chats go on with which Claude "
            "model? (Each chat's model can be changed later in its bar.)",
            names,
            0,
            False,
        )
        chosen = ids[names.index(chosen)] if ok and chosen in names else chosen
        return chosen if ok else ""

    def _show_export_imported(self, batch: ImportBatch) -> None:
        """What came from another app's export: how many chats, which were here already,
        what going on with them costs, and every note (in the details)."""
        count = len(batch.chats)
        words = f"{count} chat{'s' if count != 1 else ''} imported from {batch.source_name}"
        if batch.cancelled:
            words += " before you stopped it"
        if batch.skipped:
            words += f"; {batch.skipped} were imported before, and are left as they are"
        costs = [c.next_cost for c in batch.chats if c.next_cost is not None]
        box = QMessageBox(QMessageBox.Icon.Information, "Imported", words + ".", parent=self.window)
        box.setObjectName("exportImported")
        # Its lines name chats and models: at Qt's default width they broke every few words.
        box.setStyleSheet("QLabel#qt_msgbox_informativelabel { min-width: 460px; }")
        told = []
        theirs = sorted({c.source_model for c in batch.chats if c.source_model})
        if theirs:  # the source's models, and the one its chats go on with here
            named = {m.id: m.display_name for m in self.engine.known_models()}
            ours = sorted({named.get(c.chat.model, c.chat.model) for c in batch.chats})
            told.append(
                f"Their models in {batch.source_name} ({', '.join(theirs)}) go on as "
                f"{', '.join(ours)}."
            )
        if costs:
            money = format_money(sum(costs), self.engine.prices().currency)
            told.append(
                f"Every branch is kept as a version. Going on with them costs ≈{money} for "
                "their next requests' input (an estimate, on the chats' model)."
            )
        if batch.memories:  # what the source remembered of the user waits for the user
            told.append(
                "Offered as facts to accept or reject (none is sent until you accept it):\n"
                + "\n".join(f"• {line}" for line in batch.memories)
            )
        box.setInformativeText("\n\n".join(told))
        notes = [f"{c.chat.title}: {line}" for c in batch.chats for line in c.report]
        if notes:
            box.setDetailedText("\n".join(notes))
        box.open()

    def _show_import_repairs(self, title: str, repairs: tuple[str, ...]) -> None:
        """Every change the import made, where the user can read it (not a modal wall)."""
        count = len(repairs)
        box = QMessageBox(
            QMessageBox.Icon.Information,
            "Imported with repairs",
            f"“{title}” was imported with {count} change{'s' if count != 1 else ''} so the "
            "API accepts it.",
            parent=self.window,
        )
        box.setObjectName("importRepairs")
        box.setInformativeText("Nothing anyone wrote was dropped: see the details.")
        box.setDetailedText("\n".join(repairs))  # JSON path: what changed — why, one a line
        box.open()

    def _show_import_problems(self, info: ErrorInfo) -> None:
        box = QMessageBox(QMessageBox.Icon.Warning, info.title, info.message, parent=self.window)
        box.setObjectName("importProblems")
        box.setInformativeText(info.details)  # the list: JSON path and problem, one a line
        box.open()
