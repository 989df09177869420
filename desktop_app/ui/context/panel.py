"""The context panel (the dock on the right): what the next request holds and the controls
that change it — the meter, compaction and its history, the auto-compaction settings and
the circuit breaker, pinned facts, the system prompt, and the exact request."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from html import escape
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QCheckBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app import said
from desktop_app.context import bounds
from desktop_app.context.chat_settings import ContextSettings
from desktop_app.context.facts import Fact
from desktop_app.context.state import BREAKER_LIMIT, ContextState, Summary
from desktop_app.core.messages import start_of_last_turns
from desktop_app.ui import theme
from desktop_app.ui.context.count_spin import CountSpin, shown_fraction, spin_box
from desktop_app.ui.context.meter import ContextMeter
from desktop_app.ui.context.overview import SectionRows, counting_text, status_text, total_line
from desktop_app.ui.conversation.wrap_row import WrapRow

if TYPE_CHECKING:
    from desktop_app.context.plan import Plan
    from desktop_app.ui.conversation.session import ChatSession


PANEL_PX = 400  # the width the docked panel asks for


class ContextPanel(QStackedWidget):
    """Signals:
    jump_requested(str): show this message in the conversation (where the context starts).
    compact_requested(): open the compaction dialog; handoff_requested(): the hand-off's.
    project_requested(): open the chat's Project dialog.
    tools_requested(): open the tools view (the tool definitions sent).
    """

    jump_requested = Signal(str)
    compact_requested = Signal()
    handoff_requested = Signal()
    project_requested = Signal()
    tools_requested = Signal()

    def sizeHint(self) -> QSize:
        """Docked, the panel asks for a side column's width: its long wrapped lines would
        otherwise ask for half the window and leave the conversation ~300 px."""
        hint = super().sizeHint()
        return QSize(min(hint.width(), PANEL_PX), hint.height())

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("contextPanel")
        self.tabs = QTabWidget()
        self.empty = QLabel(
            "Open a chat to see what its next request holds: every section's tokens, the "
            "pinned facts, the summaries, and the exact JSON that will be sent."
        )
        self.empty.setObjectName("contextEmpty")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setMargin(24)
        self.empty.setEnabled(False)  # drawn in the muted colour
        self.session: ChatSession | None = None
        self._updating = False
        self.built = False  # the tabs are made with the first chat, after the first paint
        self.addWidget(self.empty)
        self.addWidget(self.tabs)

    def _build(self) -> None:
        from desktop_app.ui.context.facts_panel import FactsPanel
        from desktop_app.ui.context.request_view import RequestView

        self.built = True
        # (summary id, text) → (its words and sizes, over how many messages, the last's id)
        self._summary_sizes: dict[tuple[str, str], tuple[tuple[str, int, int], int, str]] = {}
        self.total = QLabel("Counting…")
        self.total.setObjectName("contextTotal")
        self.total.setWordWrap(True)
        self.total.setTextFormat(Qt.TextFormat.RichText)
        self.meter = ContextMeter()
        self.meter.messages_clicked.connect(self._on_meter_messages_clicked)
        self.rows = SectionRows()
        self.rows.section_clicked.connect(self._on_section_clicked)
        # What matters now, a line each: when auto-compaction comes, what was spent, what
        # is wrong. The rest of the explaining is behind "How is this counted?".
        self.status = QLabel()
        self.status.setObjectName("contextStatus")
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.RichText)
        # The prompt cache, counting down while warm, and the next turn's input priced now
        # and once cold (ui/conversation/cache_clock.py).
        self.cache = QLabel()
        self.cache.setObjectName("contextCache")
        self.cache.setWordWrap(True)
        self.cache.hide()
        self.details_toggle = QToolButton()
        self.details_toggle.setObjectName("howCounted")
        self.details_toggle.setText("How is this counted?")
        self.details_toggle.setCheckable(True)
        self.details_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.details_toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.details_toggle.toggled.connect(self._on_details_toggled)
        self.figures = QLabel("Open a chat to see what its next request holds.")
        self.figures.setObjectName("contextFigures")
        self.figures.setWordWrap(True)
        self.figures.setTextFormat(Qt.TextFormat.RichText)
        self.figures.hide()
        self.compact_button = QPushButton("Compact now…")
        self.compact_button.clicked.connect(self.compact_requested)
        self.handoff_button = QPushButton("Continue in new chat…")
        self.handoff_button.clicked.connect(self.handoff_requested)
        self.clear_results_button = QPushButton("Clear old tool results…")
        self.clear_results_button.clicked.connect(self._on_clear_results_clicked)
        self.summaries = QListWidget()
        self.summaries.setObjectName("summaries")
        self.summaries.setMaximumHeight(120)
        self.summaries.setWordWrap(True)  # a line per summary, wrapped: never cut
        self.summaries.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.undo_button = QPushButton("Undo the latest summary")
        self.undo_button.clicked.connect(self._on_undo_clicked)
        self.breaker = QLabel()
        self.breaker.setObjectName("breaker")
        self.breaker.setWordWrap(True)
        self.resume_button = QPushButton("Resume auto-compaction")
        self.resume_button.clicked.connect(self._on_resume_clicked)
        self.auto = QCheckBox("Compact automatically")
        low, high = bounds.COMPACTION_THRESHOLD.low, bounds.COMPACTION_THRESHOLD.high
        self.threshold = spin_box(round(low * 100), round(high * 100), "% of the window")
        self.keep_recent = CountSpin("turn", "turns")
        self.keep_recent.setRange(*bounds.KEEP_RECENT_TURNS.whole_range)
        self.keep_first = QCheckBox("Keep the first message")
        self.max_messages = spin_box(*bounds.MAX_CONTEXT_MESSAGES.whole_range, " messages")
        self.max_messages.setSpecialValueText("no limit")
        self.drop_thinking = QCheckBox("Drop old turns' thinking")
        self.drop_thinking.setToolTip(
            "Leave the thinking of earlier turns out of the request (the models read only "
            "the current turn's anyway, where they read it at all)"
        )
        self.spend_cap = QDoubleSpinBox()  # a hard cap (chats/budgets.py)
        self.spend_cap.setObjectName("spendCap")
        self.spend_cap.setRange(0, 100_000)  # (its widest figure sets its width)
        self.spend_cap.setPrefix("$")
        self.spend_cap.setSpecialValueText("No cap")
        self.spend_cap.setToolTip(
            "The most this chat may cost: a send that would go over it is asked about first"
        )
        self.spend_cap.editingFinished.connect(self._on_setting_changed)
        for box in (self.auto, self.keep_first, self.drop_thinking):
            box.toggled.connect(self._on_setting_changed)
        for spin in (self.threshold, self.keep_recent, self.max_messages):
            spin.valueChanged.connect(self._on_setting_changed)

        self.policy_effect = QLabel()  # what the policy above does to this chat, in words
        self.policy_effect.setObjectName("policyEffect")
        self.policy_effect.setWordWrap(True)
        buttons = WrapRow(self.compact_button, self.handoff_button, self.clear_results_button)
        form = QFormLayout()
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)  # label above, if need be
        form.addRow(self.auto)
        form.addRow("Threshold", self.threshold)
        form.addRow("Keep recent", self.keep_recent)
        form.addRow(self.keep_first)
        form.addRow("Max messages", self.max_messages)
        form.addRow(self.drop_thinking)
        form.addRow(self.policy_effect)
        overview = QWidget()
        column = QVBoxLayout(overview)
        column.setSpacing(theme.space(2))
        column.addWidget(self.total)
        column.addWidget(self.meter)
        column.addWidget(self.rows)
        column.addWidget(self.status)
        column.addWidget(self.cache)
        column.addWidget(self.details_toggle)
        column.addWidget(self.figures)
        column.addWidget(buttons)
        column.addWidget(self.breaker)
        column.addWidget(self.resume_button)
        column.addWidget(QLabel("<b>Summaries</b>"))
        column.addWidget(self.summaries)
        column.addWidget(self.undo_button)
        column.addWidget(QLabel("<b>Auto-compaction</b>"))
        column.addLayout(form)
        column.addWidget(QLabel("<b>Budget</b>"))
        budget = QFormLayout()
        budget.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        budget.addRow("Spending cap", self.spend_cap)
        column.addLayout(budget)
        column.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        # Down only: every line wraps to the panel's width, at any text size.
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # Tab goes to what is in it
        scroll.setWidget(overview)
        # The wheel scrolls the panel: a number box it passes over keeps its value (it
        # takes the wheel only once clicked or tabbed into).
        self._overview_scroll = scroll
        for number in (self.threshold, self.keep_recent, self.max_messages, self.spend_cap):
            number.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
            number.installEventFilter(self)
        self.tabs.addTab(scroll, "Overview")

        self.facts = FactsPanel()
        self.facts.add_requested.connect(self._on_facts_add_requested)
        self.facts.edit_requested.connect(self._on_facts_edit_requested)
        self.facts.delete_requested.connect(self._on_facts_delete_requested)
        self.facts.restore_requested.connect(self._on_facts_restore_requested)
        self.facts.move_requested.connect(self._on_facts_move_requested)
        self.facts.accept_requested.connect(self._on_facts_accept_requested)
        self.facts.to_project_requested.connect(self._on_facts_to_project_requested)
        self.facts.reject_requested.connect(self._on_facts_delete_requested)
        self.tabs.addTab(self.facts, "Facts")

        self.system = QPlainTextEdit()
        self.system.setObjectName("systemPrompt")
        self.system.setPlaceholderText("This chat's system prompt (empty: none)")
        self.system_tokens = QLabel()
        self.save_system = QPushButton("Save")
        self.save_system.clicked.connect(self._on_save_system_clicked)
        self.effective = QPlainTextEdit()
        self.effective.setObjectName("effectiveSystem")
        self.effective.setReadOnly(True)
        self.system_tab = system_tab = QWidget()
        system_column = QVBoxLayout(system_tab)
        self.project_line = QLabel()
        self.project_line.setObjectName("projectLine")
        self.project_line.setWordWrap(True)
        project_button = QPushButton("Project…")
        project_button.clicked.connect(self.project_requested)
        project_row = QHBoxLayout()
        project_row.addWidget(self.project_line, 1)
        project_row.addWidget(project_button)
        system_column.addLayout(project_row)
        system_column.addWidget(QLabel("<b>Base prompt</b>"))
        system_column.addWidget(self.system, 1)
        row = QHBoxLayout()
        row.addWidget(self.system_tokens, 1)
        row.addWidget(self.save_system)
        system_column.addLayout(row)
        effective_title = QLabel(
            "<b>Effective system prompt</b> — exactly as sent: the project's layers, this "
            "prompt, the pinned facts"
        )
        effective_title.setWordWrap(True)  # unwrapped, it made the dock ~600 px at least
        system_column.addWidget(effective_title)
        system_column.addWidget(self.effective, 1)
        self.tabs.addTab(system_tab, "System")

        self.request = RequestView()
        self.tabs.addTab(self.request, "Request")
        # Short of room (a large text size, a narrow panel) the tabs' names end in …,
        # all four in sight; each says in full what it holds.
        bar = self.tabs.tabBar()
        bar.setElideMode(Qt.TextElideMode.ElideRight)
        bar.setUsesScrollButtons(False)
        for index, holds in enumerate(
            (
                "The next request's size by section, the summaries, auto-compaction",
                "Pinned facts: sent word for word with every request, never summarized",
                "The system prompt: this chat's, and exactly as sent with the project's",
                "The next request's exact JSON, the requests sent, and a comparison",
            )
        ):
            self.tabs.setTabToolTip(index, holds)
        self.breaker.hide()
        self.resume_button.hide()

    # -- showing ------------------------------------------------------------------------------

    def set_session(self, session: ChatSession | None) -> None:
        if session is not None and not self.built:
            self._build()
        old = self.session
        if old is not None and old is not session:
            old.cache.changed.disconnect(self._on_cache_changed)
        if session is not None and old is not session:
            session.cache.changed.connect(self._on_cache_changed)
        self.session = session
        self._on_cache_changed()
        self.setCurrentWidget(self.tabs if session is not None else self.empty)
        if session is not None:
            self.system.setPlainText(session.chat.info.system_prompt)
        self.show_plan(session.plan if session else None)

    def show_plan(self, plan: Plan | None) -> None:
        if not self.built:
            return
        session = self.session
        self.meter.show_plan(plan)
        self.request.show_plan(plan, session.chat if session is not None else None)
        if session is None:
            return
        state = session.state()
        counter = session.engine.counter
        if counter.ready:
            self.facts.model.count = self.facts.suggested.count = counter.text
        self.facts.model.last_sent = self.facts.suggested.last_sent = self._last_sent_text(session)
        self.facts.show_facts(state.facts)
        self._show_summaries(session)
        self._offer_compaction(plan)
        self._show_settings(session.chat.settings)
        breaker = state.breaker
        self.breaker.setVisible(breaker.failures > 0)  # (a failure said at once, not at the 3rd)
        self.resume_button.setVisible(breaker.paused)
        self.breaker.setText(
            (
                f"<b>Auto-compaction is paused</b> after {breaker.failures} failures in a row: "
                if breaker.paused
                else f"<b>Auto-compaction failed</b> ({breaker.failures} of {BREAKER_LIMIT} "
                "before it pauses): "
            )
            + f"{escape(breaker.reason)} Trimming keeps the request within the window meanwhile."
        )
        self.rows.show_plan(plan)
        if plan is None:
            self.total.setText("Counting…")
            self.figures.setText("Counting…")
            self.status.setText("")
            return
        prices = session.engine.prices()
        spent = session.chat.costs.spend()
        priced = f" (the API's reported usage × prices of {prices.updated})" if spent.priced else ""
        self.total.setText(total_line(plan, self.total.font().pointSizeF()))
        self._show_policy_effect(session, plan)
        spent_line = f"Spent in this chat: {said.spend_in_window(spent)}{priced}"
        self.status.setText(status_text(plan, spent_line, session.chat.costs.budgets()))
        self.figures.setText(counting_text(plan))
        self.project_line.setText(_project_line(plan))
        if plan.request.system:
            self.effective.setPlainText("\n\n".join(part.text for part in plan.request.system))
        else:
            self.effective.setPlainText("")
        if counter.ready:
            self.system_tokens.setText(f"≈{counter.text(self.system.toPlainText()):,} tokens")

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        number = watched if isinstance(watched, QAbstractSpinBox) else None
        if event.type() == QEvent.Type.Wheel and number is not None and not number.hasFocus():
            # the panel scrolls instead
            QApplication.sendEvent(self._overview_scroll.verticalScrollBar(), event)
            return True
        return super().eventFilter(watched, event)

    @Slot()
    def _on_cache_changed(self) -> None:
        if self.built and self.session is not None:
            cache = self.session.cache
            line = cache.line()
            breakers = cache.breakers()
            self.cache.setText(f"{line}.\n{breakers}" if breakers else line)
            self.cache.setVisible(bool(line))

    def add_streaming(self, tokens: int) -> None:
        if self.built:
            self.meter.add_streaming(tokens)

    def _offer_compaction(self, plan: Plan | None) -> None:
        """*Compact now…* only when it can do something; why not, on hovering it."""
        blocked = plan.compaction_blocked if plan is not None else "Counting…"
        self.compact_button.setEnabled(not blocked)
        self.compact_button.setToolTip(
            blocked or "Ask the model for a summary of the older turns; you see it first"
        )

    def _show_summaries(self, session: ChatSession) -> None:
        """Each compaction, newest first: which messages it covers, their tokens before →
        the summary's after, and whether it is the one sent; *Undo* names the latest."""
        self.summaries.clear()
        state = session.state()
        active = state.active_summary
        if not state.summaries:
            item = QListWidgetItem(
                "No summaries yet: every turn is sent as it was said.", self.summaries
            )
            item.setFlags(Qt.ItemFlag.NoItemFlags)
        for summary in reversed(state.summaries):
            flags = " · undone" if summary.undone else (" · sent now" if summary is active else "")
            edited = " · edited" if summary.edited else ""
            covers, before, after = self._summary_size(session, summary)
            text = (
                f"#{summary.number} · {_when(summary.created_at)}{flags}{edited}\n"
                f"{covers} · ≈{before:,} → ≈{after:,} tokens · {summary.model}"
            )
            item = QListWidgetItem(text, self.summaries)
            item.setToolTip(summary.text)
        self.undo_button.setEnabled(active is not None)
        self.undo_button.setText(
            f"Undo summary #{active.number}" if active is not None else "Undo the latest summary"
        )

    def _summary_size(self, session: ChatSession, summary: Summary) -> tuple[str, int, int]:
        """("turns 1–4 (9 messages)", tokens of what it covers, tokens of the summary as it
        is sent) — as the compaction's preview counts them, so the two say the same —
        worked out once per summary and branch: a turn only adds messages after the
        ones it was worked out over (the same last one there: the same branch up to it)."""
        messages = session.messages
        kept = self._summary_sizes.get((summary.id, summary.text))
        if kept is not None:
            (where, before, after), seen, last = kept
            if len(messages) >= seen and (not seen or messages[seen - 1].id == last):
                return where, before, after
        if not session.engine.counter.ready:
            return f"{len(summary.covers):,} messages", 0, 0
        size = session.chat.memory.summary_size(summary, messages)
        where = f"{len(summary.covers):,} messages, none on the branch shown"
        if size.turns is not None:
            where = f"turns {size.turns[0]:,}–{size.turns[1]:,} ({size.messages:,} messages)"
        shown = (where, size.before, size.after)
        last = messages[-1].id if messages else ""
        self._summary_sizes[(summary.id, summary.text)] = (shown, len(messages), last)
        return shown

    def _show_policy_effect(self, session: ChatSession, plan: Plan) -> None:
        """The compaction policy's effect on this chat, in words (local counts: ≈)."""
        settings = session.chat.settings
        counter = session.engine.counter
        if not counter.ready:
            return
        keep = settings.keep_recent_turns
        messages = session.messages
        kept = messages[start_of_last_turns(messages, keep) :] if keep else []
        tokens = sum(sum(counter.blocks_of(m)) for m in kept)
        turns = f"{keep:,} turn{'s' if keep != 1 else ''}"
        whole = (
            f"Keeps the last {turns} word for word: ≈{tokens:,} tokens now."
            if keep
            else "Keeps no turn whole: a compaction may summarize up to the newest."
        )
        when = (
            f" The older ones are summarized when the request reaches {plan.threshold:,} tokens."
            if settings.auto_compact
            else " Nothing is summarized unless you press Compact now."
        )
        self.policy_effect.setText(whole + when)

    def _show_settings(self, settings: ContextSettings) -> None:
        self._updating = True
        self.auto.setChecked(settings.auto_compact)
        self.threshold.setValue(round(settings.compaction_threshold * 100))
        self.keep_recent.setValue(settings.keep_recent_turns)
        self.keep_first.setChecked(settings.keep_first_message)
        self.max_messages.setValue(settings.max_context_messages)
        self.drop_thinking.setChecked(settings.drop_old_thinking)
        self.spend_cap.setValue(settings.spend_cap)
        self._updating = False

    def _last_sent_text(self, session: ChatSession) -> Callable[[Fact], str]:
        """ "last sent in request #N · 14:03" from the request ledger: the last request that
        really carried the fact (a fact accepted since has not been sent yet)."""
        sent = session.chat.costs.facts_last_sent(session.state().facts)

        def last_sent(fact: Fact) -> str:
            if fact.pending:
                return "not sent: waiting for you"
            if fact.id not in sent:
                return "not sent yet"
            number, when = sent[fact.id]
            return f"last sent in request #{number} · {_when(when)}"

        return last_sent

    # -- slots ---------------------------------------------------------------------------------

    @Slot(str)
    def _on_facts_add_requested(self, text: str) -> None:
        if self.session is not None:
            self.session.pin_fact(text)

    @Slot(object, str)
    def _on_facts_edit_requested(self, fact: Fact, text: str) -> None:
        if self.session is not None:
            self.session.edit_fact(fact, text)

    @Slot(object)
    def _on_facts_delete_requested(self, fact: Fact) -> None:
        if self.session is not None:
            self.session.delete_fact(fact)

    @Slot(object, int)
    def _on_facts_restore_requested(self, fact: Fact, index: int) -> None:
        if self.session is not None:
            self.session.restore_fact(fact, index)

    @Slot(object, int)
    def _on_facts_move_requested(self, fact: Fact, index: int) -> None:
        if self.session is not None:
            self.session.move_fact(fact, index)

    @Slot(object)
    def _on_facts_to_project_requested(self, fact: Fact) -> None:
        if self.session is not None:
            self.session.fact_to_project(fact)

    @Slot(object, str)
    def _on_facts_accept_requested(self, fact: Fact, text: str) -> None:
        if self.session is not None:
            self.session.accept_fact(fact, text or None)

    @Slot(bool)
    def _on_details_toggled(self, shown: bool) -> None:
        self.figures.setVisible(shown)
        self.details_toggle.setArrowType(
            Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        )

    @Slot(str)
    def _on_section_clicked(self, section: str) -> None:
        """Show what a part of the request holds: its tab, its view, or its place."""
        if section in ("facts", "project facts"):
            self.tabs.setCurrentWidget(self.facts)
        elif section in ("system", "project instructions"):
            self.tabs.setCurrentWidget(self.system_tab)
        elif section == "project knowledge":
            self.project_requested.emit()
        elif section == "tools":
            self.tools_requested.emit()
        elif section == "summary":
            self.summaries.setFocus()
        elif section == "messages":
            self._on_meter_messages_clicked()

    @Slot()
    def _on_meter_messages_clicked(self) -> None:
        plan = self.meter.plan
        if plan is not None and plan.first_sent_after_head:
            self.jump_requested.emit(plan.first_sent_after_head)

    @Slot()
    def _on_setting_changed(self) -> None:
        session = self.session
        if self._updating or session is None:
            return
        current = session.chat.settings
        settings = replace(
            current,
            auto_compact=self.auto.isChecked(),
            compaction_threshold=shown_fraction(
                self.threshold.value(), current.compaction_threshold
            ),
            keep_recent_turns=self.keep_recent.value(),
            keep_first_message=self.keep_first.isChecked(),
            max_context_messages=self.max_messages.value(),
            drop_old_thinking=self.drop_thinking.isChecked(),
            spend_cap=round(self.spend_cap.value(), 2),
        )
        if settings == current:
            return
        if settings.drop_old_thinking != current.drop_old_thinking:
            what = "sent again" if not settings.drop_old_thinking else "left out"
            if not self._confirm(f"Earlier turns' thinking will be {what}.", settings=settings):
                self._show_settings(current)
                return
        session.set_context_settings(settings)

    def _confirm(
        self,
        what: str,
        *,
        settings: ContextSettings | None = None,
        state: ContextState | None = None,
        to_shrink: bool = False,
    ) -> bool:
        """Show the next request's size before and after a change; True to go ahead. A
        change made `to_shrink` the request that would not is not offered: it says why."""
        session = self.session
        if session is None or session.plan is None:
            return True
        after = session.chat.plans.plan_if(session.messages, settings=settings, state=state)
        before = session.plan.estimated_input
        if to_shrink and after.estimated_input >= before:
            QMessageBox.information(
                self,
                "It would not make the request smaller",
                f"{what}\n\nNext request: ≈{before:,} → ≈{after.estimated_input:,} tokens: "
                "what it would leave out is no longer than what would stand in its place, so "
                "nothing was changed.",
            )
            return False
        cost = session.chat.costs.of_change(session.plan, after)
        answer = QMessageBox.question(
            self,
            "Change what is sent?",
            f"{what}\n\nNext request: ≈{before:,} → ≈{after.estimated_input:,} tokens."
            + (f"\n{said.input_cost(cost)}" if cost is not None else ""),
        )
        return answer == QMessageBox.StandardButton.Yes

    @Slot()
    def _on_undo_clicked(self) -> None:
        if self.session is not None:
            self.session.undo_compaction()

    @Slot()
    def _on_resume_clicked(self) -> None:
        if self.session is not None:
            self.session.resume_auto_compaction()

    @Slot()
    def _on_save_system_clicked(self) -> None:
        if self.session is not None:
            self.session.set_system_prompt(self.system.toPlainText())

    @Slot()
    def _on_clear_results_clicked(self) -> None:
        session = self.session
        if session is None:
            return
        ids = session.chat.memory.old_tool_results(session.messages)
        if not ids:
            QMessageBox.information(
                self, "Nothing to clear", "No older tool results are in the context."
            )
            return
        what = (
            f"{len(ids):,} older tool results will be sent as a short placeholder "
            "(the transcript keeps them)."
        )
        if self._confirm(what, state=session.state().clear_results(ids), to_shrink=True):
            session.clear_tool_results(ids)


def _project_line(plan: Plan) -> str:
    """The chat's project and each of its layers' tokens, as this request holds them."""
    from desktop_app.context.plan import Section

    if plan.project is None:
        return "In no project: nothing is shared with other chats."
    parts = []
    for layer in plan.project.layers:
        tokens = plan.sections.get(Section(f"project {layer.name}"), 0)
        said = "off for this chat" if layer.off else (f"≈{tokens:,}" if tokens else "empty")
        parts.append(f"{layer.name} {said}")
    notes = escape(" ".join(layer.note for layer in plan.project.layers if layer.note))
    line = f"<b>Project: {escape(plan.project.project.name)}</b> — " + " · ".join(parts)
    return line + (f"<br>{notes}" if notes else "")


def _when(created_at: float) -> str:
    return time.strftime("%d %b, %H:%M", time.localtime(created_at))
