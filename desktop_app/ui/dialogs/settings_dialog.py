"""Settings: the API key (and where the key in use comes from), the server, the model with
its context window, output and thinking budgets, the default system prompt, and tools.

Every field is checked as it changes, as the command line checks it, and what is wrong
is said under the field before Save is pressed; Save keeps every field as shown.

Keyring trouble is explained where it happens, with the way out beside it: use the key
for this session only. The key never goes into the settings file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from PySide6.QtCore import QTimer, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop_app.api.models import DEFAULT_CONTEXT_WINDOW
from desktop_app.chats import thinking_meaning
from desktop_app.config.errors import KeyringUnavailable
from desktop_app.config.settings import SETTINGS, Settings
from desktop_app.context import bounds
from desktop_app.core.errors import ContextDeskError
from desktop_app.ui import theme

if TYPE_CHECKING:
    from desktop_app.config.secrets import SecretStore

# Each setting's name as the dialog shows it: declared once, with its range and its check
# (config/settings.SETTINGS), so a problem line names the row it is under.
LABELS = {spec.attr: spec.label for spec in SETTINGS}
SECTIONS = ("Connection", "Model and thinking", "New chats", "Tools", "Cost", "Look")

RECHECK_MS = 250  # check the fields once typing pauses


class SettingsDialog(QDialog):
    def __init__(
        self,
        settings: Settings,
        secrets: SecretStore,
        key_source: str,
        models: list[Any],
        parent: QWidget | None = None,
        *,
        check: Callable[[Settings], list[tuple[str, str]]] = lambda _settings: [],
        open_prices: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setObjectName("settingsDialog")
        self.settings = settings
        self.secrets = secrets
        self.key_changed = False
        # What is wrong with the chosen settings (as the CLI checks them): (field, line).
        self.check = check
        self.windows = {info.id: info.context_window for info in models}

        self.key = QLineEdit()
        self.key.setObjectName("apiKey")
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.key.setPlaceholderText("sk-ant-…  (leave empty to keep the key in use)")
        self.key_source = QLabel(f"Key in use: {key_source}")
        self.key_source.setWordWrap(True)
        self.session_only = QCheckBox("Use this key for this session only (do not save it)")
        self.key_problem = QLabel()
        self.key_problem.setObjectName("keyProblem")
        self.key_problem.setWordWrap(True)
        self.key_problem.setStyleSheet(
            f"color: {theme.status_colour('error', theme.is_dark()).name()}"
        )
        self.key_problem.hide()

        self.base_url = QLineEdit(settings.base_url)
        self.base_url.setPlaceholderText("https://api.anthropic.com (or ANTHROPIC_BASE_URL)")
        self.model = QComboBox()
        self.model.setObjectName("model")
        self.model.setEditable(True)
        for info in models:
            self.model.addItem(
                f"{info.display_name} — {info.context_window:,}-token window", info.id
            )
        found = self.model.findData(settings.model)
        if found < 0:
            self.model.addItem(settings.model, settings.model)
            found = self.model.count() - 1
        self.model.setCurrentIndex(found)
        self.context_window = QSpinBox()
        self.context_window.setObjectName("contextWindow")
        self.context_window.setRange(*bounds.CONTEXT_WINDOW.whole_range)
        self.context_window.setSingleStep(8192)
        self.context_window.setGroupSeparatorShown(True)
        self.context_window.setSuffix(" tokens")
        self.context_window.setValue(settings.context_window or DEFAULT_CONTEXT_WINDOW)
        self.context_window_note = QLabel()
        self.context_window_note.setWordWrap(True)
        self.context_window_note.setEnabled(False)
        self.max_tokens = QSpinBox()
        self.max_tokens.setRange(*bounds.MAX_TOKENS.whole_range)
        self.max_tokens.setSingleStep(1024)
        self.max_tokens.setGroupSeparatorShown(True)  # (its row says "tokens")
        self.max_tokens.setValue(settings.max_tokens)
        # New chats' thinking: adaptive (Claude decides how much) at an effort, off (the
        # model's lowest setting), or a budget — what each means for the chosen model is
        # said under it (core/thinking.py turns it into what that model takes).
        self.thinking = QComboBox()
        self.thinking.setObjectName("thinkingMode")
        for value, text in (
            ("adaptive", "Adaptive — Claude decides how much to think"),
            ("off", "Off — the model's lowest setting"),
            ("budget", "A budget (models before Claude 4.7)"),
        ):
            self.thinking.addItem(text, value)
        self.thinking.setCurrentIndex(max(0, self.thinking.findData(settings.thinking)))
        self.effort = QComboBox()
        self.effort.setObjectName("effort")
        for value, text in (
            ("", "the model's default effort"),
            ("low", "low effort"),
            ("medium", "medium effort"),
            ("high", "high effort"),
            ("xhigh", "extra high effort"),
            ("max", "max effort"),
        ):
            self.effort.addItem(text, value)
        self.effort.setCurrentIndex(max(0, self.effort.findData(settings.effort)))
        self.thinking_budget = QSpinBox()
        self.thinking_budget.setRange(*bounds.THINKING_BUDGET.whole_range)
        self.thinking_budget.setSingleStep(1024)
        self.thinking_budget.setGroupSeparatorShown(True)
        self.thinking_budget.setValue(settings.thinking_budget or 4096)
        self.thinking_budget.setSuffix(" tokens")
        self.show_thinking = QCheckBox("Show thinking's text (off: only that Claude thought)")
        self.show_thinking.setObjectName("showThinking")
        self.show_thinking.setChecked(settings.thinking_display != "omitted")
        self.thinking_meaning = QLabel()  # what the choice does on the chosen model
        self.thinking_meaning.setObjectName("thinkingMeaning")
        self.thinking_meaning.setWordWrap(True)
        self.thinking_meaning.setEnabled(False)
        self.thinking.currentIndexChanged.connect(self._show_thinking_choice)
        self.thinking_note = QLabel()  # says when the max output was raised to fit
        self.thinking_note.setObjectName("thinkingNote")
        self.thinking_note.setWordWrap(True)
        self.thinking_note.setEnabled(False)
        self.thinking_note.hide()
        self.thinking.currentIndexChanged.connect(self._fit_thinking)
        self.thinking_budget.valueChanged.connect(self._fit_thinking)
        self.system_prompt = QPlainTextEdit(settings.system_prompt)
        self.system_prompt.setPlaceholderText("The system prompt new chats start with")
        self.system_prompt.setMaximumHeight(90)
        self.tools = QCheckBox(
            "Let Claude use tools (it reads the workspace freely; writing a file asks first)"
        )
        self.tools.setChecked(settings.tools_enabled)
        self.commands = QCheckBox("Allow running commands in the workspace (always asks first)")
        self.commands.setChecked(settings.run_command_enabled)
        self.command_env = QLineEdit(settings.command_env)
        self.command_env.setPlaceholderText("More variables commands see: VIRTUAL_ENV, PYTHONPATH…")
        self.command_env.setToolTip(
            "Commands see PATH, HOME, USER, SHELL, the locale, TERM, TMPDIR and TZ; name any "
            "other variable they need here (never the API key)."
        )
        self.command_env.setEnabled(self.commands.isChecked())
        self.commands.toggled.connect(self.command_env.setEnabled)
        self.workspace = QLineEdit(settings.workspace)
        self.workspace.setPlaceholderText("No folder: the file tools are off")
        browse = QPushButton("Choose…")
        browse.clicked.connect(self._on_browse_clicked)
        self.first_word = _seconds(settings.first_word_timeout)
        self.first_word.setObjectName("firstWordTimeout")
        self.quiet = _seconds(settings.quiet_timeout)
        self.quiet.setObjectName("quietTimeout")
        self.send_with_enter = QCheckBox(
            "Enter sends (Shift+Enter for a new line); otherwise Ctrl+Enter"
        )
        self.send_with_enter.setChecked(settings.send_with_enter)
        self.appearance = QComboBox()
        self.appearance.setObjectName("appearance")
        for value, text in (("system", "As the system"), ("light", "Light"), ("dark", "Dark")):
            self.appearance.addItem(text, value)
        self.appearance.setCurrentIndex(max(0, self.appearance.findData(settings.appearance)))
        self.text_size = QSpinBox()
        self.text_size.setObjectName("textSize")
        lowest = int(bounds.TEXT_SIZE.low) - 1  # below the smallest size: the system's
        self.text_size.setRange(lowest, int(bounds.TEXT_SIZE.high))
        self.text_size.setSpecialValueText("As the system")
        self.text_size.setSuffix(" pt")
        self.text_size.setValue(settings.text_size or lowest)
        self.reading_width = QSpinBox()
        self.reading_width.setObjectName("readingWidth")
        self.reading_width.setRange(*bounds.READING_WIDTH.whole_range)
        self.reading_width.setSingleStep(20)
        self.reading_width.setSuffix(" px")
        self.reading_width.setValue(settings.reading_width)
        self.reading_width.setToolTip(
            "The conversation is read in a centred column at most this wide"
        )

        thinking_row = QHBoxLayout()
        thinking_row.addWidget(self.thinking)
        thinking_row.addWidget(self.effort)
        thinking_row.addWidget(self.thinking_budget)
        thinking_row.addStretch(1)
        workspace_row = QHBoxLayout()
        workspace_row.addWidget(self.workspace, 1)
        workspace_row.addWidget(browse)
        # In sections, as Claude desktop's and ChatGPT's settings are: each a titled
        # group of rows, one page (every row in view: nothing hides behind a tab).
        connection, model, chats, tools, costs, look = (QFormLayout() for _ in range(6))
        connection.addRow("API key", self.key)
        connection.addRow("", self.key_source)
        connection.addRow("", self.session_only)
        connection.addRow("", self.key_problem)
        connection.addRow(LABELS["base_url"], self.base_url)
        waits = QHBoxLayout()
        waits.addWidget(self.first_word)
        waits.addWidget(QLabel("to begin;"))
        waits.addWidget(self.quiet)
        waits.addWidget(QLabel("when it pauses"))
        waits.addStretch(1)
        connection.addRow("Wait for a reply", row_widget(waits))
        model_row = QHBoxLayout()
        model_row.addWidget(self.model, 1)
        self.prices = QPushButton("Prices…")
        self.prices.setObjectName("openPrices")
        self.prices.setToolTip("The price table costs are counted with; enter a model's price")
        self.prices.setEnabled(open_prices is not None)
        if open_prices is not None:
            self.prices.clicked.connect(lambda: open_prices(self._chosen_model()))
        model_row.addWidget(self.prices)
        model.addRow(LABELS["model"], row_widget(model_row))
        window_row = QHBoxLayout()
        window_row.addWidget(self.context_window)
        window_row.addWidget(self.context_window_note, 1)
        model.addRow(LABELS["context_window"], row_widget(window_row))
        model.addRow(LABELS["max_tokens"], self.max_tokens)
        model.addRow(LABELS["thinking"], row_widget(thinking_row))
        model.addRow("", self.thinking_meaning)
        model.addRow("", self.show_thinking)
        model.addRow("", self.thinking_note)
        chats.addRow(LABELS["system_prompt"], self.system_prompt)
        chats.addRow(LABELS["send_with_enter"], self.send_with_enter)
        tools.addRow(LABELS["tools_enabled"], self.tools)
        tools.addRow("", self.commands)
        tools.addRow("", self.command_env)
        tools.addRow(LABELS["workspace"], row_widget(workspace_row))
        self._cost_rows(costs, tools, settings)
        view = QHBoxLayout()
        view.addWidget(self.appearance)
        view.addWidget(QLabel(LABELS["text_size"]))
        view.addWidget(self.text_size)
        view.addWidget(QLabel(LABELS["reading_width"]))
        view.addWidget(self.reading_width)
        view.addStretch(1)
        look.addRow(LABELS["appearance"], row_widget(view))
        forms = (connection, model, chats, tools, costs, look)
        self.field_problems = self._problem_rows(
            forms,
            {
                "base_url": self.base_url,
                "model": self.model,
                "context_window": self.context_window,
                "max_tokens": self.max_tokens,
                "thinking_budget": self.thinking_budget,
                "command_env": self.command_env,
                "workspace": self.workspace,
                "first_word_timeout": self.first_word,
                "quiet_timeout": self.quiet,
            },
        )
        sections = QWidget()
        column = QVBoxLayout(sections)
        column.setContentsMargins(0, 0, theme.space(2), 0)
        labels = [
            item.widget()
            for form in forms
            for row in range(form.rowCount())
            if (item := form.itemAt(row, QFormLayout.ItemRole.LabelRole)) and item.widget()
        ]
        widest = max(label.sizeHint().width() for label in labels if label is not None)
        for label in labels:  # one column of names down every section
            if label is not None:
                label.setMinimumWidth(widest)
        for title, form in zip(SECTIONS, forms, strict=True):
            box = QGroupBox(title)
            box.setObjectName(f"section_{title.split()[0].lower()}")
            box.setLayout(form)
            column.addWidget(box)
        column.addStretch(1)  # (a taller dialog leaves the room below, not in the boxes)
        scroll = QScrollArea()  # taller than a small screen: the sections scroll
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(sections)
        self.problem = QLabel()
        self.problem.setObjectName("settingsProblem")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet(self.key_problem.styleSheet())
        self.problem.hide()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self._on_save_clicked)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        self._show_model_window()
        self._recheck_soon = QTimer(self)
        self._recheck_soon.setSingleShot(True)
        self._recheck_soon.setInterval(RECHECK_MS)
        self._recheck_soon.timeout.connect(self.recheck)
        for changed in (
            self.base_url.textChanged,
            self.model.editTextChanged,
            self.model.currentIndexChanged,
            self.context_window.valueChanged,
            self.max_tokens.valueChanged,
            self.thinking.currentIndexChanged,
            self.thinking_budget.valueChanged,
            self.commands.toggled,
            self.command_env.textChanged,
            self.workspace.textChanged,
            self.first_word.valueChanged,
            self.quiet.valueChanged,
        ):
            # (not `.start` itself: a signal's int would become the timer's interval)
            changed.connect(lambda *_: self._recheck_soon.start())
        self.model.editTextChanged.connect(self._show_model_window)
        self.model.editTextChanged.connect(self._show_thinking_choice)
        self.effort.currentIndexChanged.connect(self._show_thinking_choice)
        self._show_thinking_choice()
        screen = self.screen().availableGeometry().height() if self.screen() else 900
        whole = sections.sizeHint().height() + theme.space(20)
        self.resize(max(660, sections.sizeHint().width() + theme.space(8)), min(whole, screen - 80))

    def _cost_rows(self, form: QFormLayout, tools: QFormLayout, settings: Settings) -> None:
        """Prompt caching's markers, and a month's budget (soft: a warning from 80 %;
        hard: a send that would go over is asked about first); the web tools' switch goes
        with the other tools."""
        self.prompt_cache = QComboBox()
        self.prompt_cache.setObjectName("promptCache")
        for value, text in (
            ("auto", "Automatic — on for Anthropic's API"),
            ("on", "On — the server set passes cache markers on"),
            ("off", "Off — never sent"),
        ):
            self.prompt_cache.addItem(text, value)
        self.prompt_cache.setCurrentIndex(max(0, self.prompt_cache.findData(settings.prompt_cache)))
        form.addRow(LABELS["prompt_cache"], self.prompt_cache)
        self.server_tools = QComboBox()
        self.server_tools.setObjectName("serverTools")
        for value, text in (
            ("auto", "Automatic — on for Anthropic's API"),
            ("on", "On — the server set passes them on"),
            ("off", "Off — never offered"),
        ):
            self.server_tools.addItem(text, value)
        self.server_tools.setCurrentIndex(max(0, self.server_tools.findData(settings.server_tools)))
        self.server_tools.setToolTip(
            "Web search and web fetch run on the API's side; a chat turns them on in Tools"
        )
        tools.addRow(LABELS["server_tools"], self.server_tools)
        self.monthly_cap = QDoubleSpinBox()
        self.monthly_cap.setObjectName("monthlyCap")
        self.monthly_cap.setRange(0, 1_000_000)
        self.monthly_cap.setDecimals(2)
        self.monthly_cap.setSingleStep(5)
        self.monthly_cap.setPrefix("$")
        self.monthly_cap.setSpecialValueText("No budget")
        self.monthly_cap.setValue(settings.monthly_spend_cap)
        self.cap_kind = QComboBox()
        self.cap_kind.setObjectName("capKind")
        self.cap_kind.addItem("Soft — warn from 80 %", "soft")
        self.cap_kind.addItem("Hard — ask before going over", "hard")
        self.cap_kind.setCurrentIndex(max(0, self.cap_kind.findData(settings.monthly_cap)))
        budget = QHBoxLayout()
        budget.addWidget(self.monthly_cap)
        budget.addWidget(self.cap_kind)
        budget.addStretch(1)
        form.addRow(LABELS["monthly_spend_cap"], row_widget(budget))

    def _fit_thinking(self, *_: object) -> None:
        """The API wants the thinking budget below the max output: when a budget is chosen
        that is not, the max output is raised to leave the reply room — and that is said."""
        budget, most = self.thinking_budget.value(), self.max_tokens.value()
        if self.thinking.currentData() != "budget" or budget < most:
            return
        raised = min(int(bounds.MAX_TOKENS.high), budget + 4096)
        if raised <= budget:
            return  # no room above it: the problem line under the budget says what to do
        self.max_tokens.setValue(raised)
        self.thinking_note.setText(
            f"Max output tokens raised from {most:,} to {raised:,}: the thinking budget must "
            "be below it (the API's rule), with room left for the reply."
        )
        self.thinking_note.show()

    @Slot()
    def _show_thinking_choice(self, *_: object) -> None:
        """The budget only for a budget; under the row, what the choice does on the model
        chosen (the nearest thing it takes, when it cannot do what was chosen)."""
        mode = str(self.thinking.currentData())
        self.thinking_budget.setVisible(mode == "budget")
        self.effort.setVisible(mode != "budget")
        self.thinking_meaning.setText(thinking_meaning(self._chosen_model(), self.chosen()))

    def _problem_rows(
        self, forms: tuple[QFormLayout, ...], fields: dict[str, QWidget]
    ) -> dict[str, QLabel]:
        """Under each checked field, a line (hidden until needed) saying what is wrong."""
        labels = {}
        for attr, widget in fields.items():
            label = QLabel()
            label.setObjectName(f"problem_{attr}")
            label.setWordWrap(True)
            label.setStyleSheet(self.key_problem.styleSheet())
            label.hide()
            form, row = next((f, r) for f in forms if (r := _row_of(f, widget)) is not None)
            form.insertRow(row + 1, "", label)
            labels[attr] = label
        return labels

    def recheck(self) -> list[tuple[str, str]]:
        """Show what is wrong beside each field now, before Save is pressed."""
        found = self.check(self.chosen())
        wrong = dict(found)
        for attr, label in self.field_problems.items():
            label.setText(wrong.get(attr, ""))
            label.setVisible(attr in wrong)
        if not found:
            self.problem.hide()
        return found

    @Slot()
    def _show_model_window(self) -> None:
        """A listed model's window is known (shown, not asked); one typed by hand is
        asked for: the meter and compaction depend on it."""
        listed = self.windows.get(self._chosen_model())
        was_listed = not self.context_window.isEnabled()
        self.context_window.setEnabled(listed is None)
        if listed is not None:
            self.context_window.setValue(listed)
            self.context_window_note.setText("as the model list says")
            return
        if was_listed:  # not the listed model's figure: what was given for one, or the default
            self.context_window.setValue(self.settings.context_window or DEFAULT_CONTEXT_WINDOW)
        self.context_window_note.setText(
            "not in the model list: how many tokens its window holds (see its card)"
        )

    def chosen(self) -> Settings:
        return replace(
            self.settings,
            base_url=self.base_url.text().strip(),
            model=self._chosen_model(),
            context_window=0
            if self._chosen_model() in self.windows
            else self.context_window.value(),
            max_tokens=self.max_tokens.value(),
            thinking=str(self.thinking.currentData()),
            thinking_budget=self.thinking_budget.value()
            if self.thinking.currentData() == "budget"
            else self.settings.thinking_budget,
            effort=str(self.effort.currentData()),
            thinking_display="summarized" if self.show_thinking.isChecked() else "omitted",
            system_prompt=self.system_prompt.toPlainText(),
            tools_enabled=self.tools.isChecked(),
            run_command_enabled=self.commands.isChecked(),
            command_env=self.command_env.text().strip(),
            workspace=self.workspace.text().strip(),
            send_with_enter=self.send_with_enter.isChecked(),
            first_word_timeout=self.first_word.value(),
            quiet_timeout=self.quiet.value(),
            appearance=str(self.appearance.currentData()),
            text_size=0
            if self.text_size.value() < bounds.TEXT_SIZE.low
            else self.text_size.value(),
            reading_width=self.reading_width.value(),
            prompt_cache=str(self.prompt_cache.currentData()),
            server_tools=str(self.server_tools.currentData()),
            monthly_spend_cap=round(self.monthly_cap.value(), 2),
            monthly_cap=str(self.cap_kind.currentData()),
        )

    def _chosen_model(self) -> str:
        """The model as typed, even without Enter (an editable combo box keeps the old
        item current until Enter is pressed); a listed model's display text means its id."""
        text = self.model.currentText().strip()
        index = self.model.findText(text)
        return str(self.model.itemData(index) or text) if index >= 0 else text

    @Slot()
    def _on_save_clicked(self) -> None:
        found = self.recheck()
        if found:
            self.problem.setText("Not saved: see the lines in red above.")
            self.problem.show()
            return
        self.problem.hide()
        key = self.key.text().strip()
        if key:
            try:
                if self.session_only.isChecked():
                    self.secrets.use_for_session(key)
                else:
                    self.secrets.save(key)
            except KeyringUnavailable as exc:
                self._explain(exc)
                return
            except ContextDeskError as exc:
                self._explain(exc)
                return
            self.key_changed = True
        self.accept()

    def _explain(self, exc: ContextDeskError) -> None:
        self.key_problem.setText(
            f"{exc.title}: {exc.message}\nTick “this session only” to use the key now without "
            "saving it; you will be asked again next time."
        )
        self.key_problem.show()
        self.session_only.setChecked(True)

    @Slot()
    def _on_browse_clicked(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Workspace folder", self.workspace.text())
        if folder:
            self.workspace.setText(folder)


def _row_of(form: QFormLayout, widget: QWidget | None) -> int | None:
    """The form row holding `widget` (or the row widget it sits in); None: not this form."""
    while widget is not None:
        row, _role = cast("tuple[int, Any]", form.getWidgetPosition(widget))
        if row >= 0:
            return row
        widget = widget.parentWidget()
    return None


def _seconds(value: int) -> QSpinBox:
    box = QSpinBox()
    box.setRange(*bounds.TIMEOUT.whole_range)
    box.setSuffix(" s")
    box.setValue(value)
    box.setToolTip("After this, the reply ends with an error you can retry (nothing is lost).")
    return box


def row_widget(layout: QHBoxLayout) -> QWidget:
    """A row of widgets as one form field (no margins of its own)."""
    widget = QWidget()
    layout.setContentsMargins(0, 0, 0, 0)
    widget.setLayout(layout)
    return widget
