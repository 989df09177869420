"""The window's connection: where the key in use comes from, the server's model list,
the Settings dialog, and the offline demo. Lookups that may take seconds (a keyring, a
server) run on the background thread; the answers come back as signals."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from desktop_app.chats import Engine
from desktop_app.config.secrets import ApiKey
from desktop_app.core.errors import ContextDeskError, ErrorInfo
from desktop_app.core.ports import ModelInfo
from desktop_app.ui.workers import BackgroundWorker

if TYPE_CHECKING:  # loaded with the first chat
    from desktop_app.chats import Chat


class ConnectionController(QObject):
    """Signals:
    mode_changed(): the key was found (or not), demo mode changed, or the models came.
    counter_ready(): the token encoding has loaded: exact local counts from now on.
    settings_saved(): Settings were saved and are in use.
    prices_changed(): a price was entered: costs are counted again.
    problem(object): an `ErrorInfo` to show (a locked keyring…).
    """

    mode_changed = Signal()
    counter_ready = Signal()
    settings_saved = Signal()
    prices_changed = Signal()
    problem = Signal(object)

    def __init__(self, engine: Engine, background: BackgroundWorker, parent: QWidget) -> None:
        super().__init__(parent)
        self.engine = engine
        self.background = background
        # The server's model list on a thread of its own: its first call imports the SDK
        # (seconds on a busy machine), and a plan must not wait behind it.
        self.listing = BackgroundWorker(self)
        self.window = parent
        self.key: ApiKey | None = None
        self.key_known = False  # the background lookup has answered
        self.models: list[ModelInfo] = engine.known_models()  # the server's list replaces it

    @property
    def demo(self) -> bool:
        return self.engine.demo

    @property
    def no_key(self) -> bool:
        """Known to have no key (and not in the demo): the welcome page shows."""
        return self.key_known and self.key is None and not self.demo

    def start(self) -> None:
        """After the first paint: load the token encoding and look for the key."""
        counter = self.engine.counter
        self.background.submit("warm-up", lambda: counter.text("warm up"), self._on_warmed_up)
        self._look_up_key()

    def _look_up_key(self) -> None:
        self.background.submit(
            "key", self.engine.secrets.get, self._on_key_found, self._on_key_failed
        )

    def _on_warmed_up(self, _count: int) -> None:
        self.counter_ready.emit()

    def _on_key_found(self, key: ApiKey | None) -> None:
        self.key, self.key_known = key, True
        self.mode_changed.emit()
        if key is not None or self.demo:  # also imports the SDK early, off-thread
            self.listing.submit("models", self.engine.models, self._on_models_fetched)

    def _on_models_fetched(self, models: list[ModelInfo]) -> None:
        if models:
            self.models = models
            self.mode_changed.emit()  # the model box shows the listing's names

    def _on_key_failed(self, error: ErrorInfo) -> None:
        self.key_known = True
        self.problem.emit(
            ErrorInfo(
                error.title,
                f"{error.message} Open Settings to use a key for this session only.",
                details=error.details,
                kind=error.kind,
            )
        )

    def key_source(self) -> str:
        source = self.key.source.value if self.key else "none yet"
        return source + (" (the offline demo needs none)" if self.demo else "")

    def open_prices(self, model: str = "") -> None:
        """Settings → Prices: the table, and a model's price entered or corrected."""
        from desktop_app.ui.dialogs.prices_dialog import PricesDialog

        engine = self.engine
        dialog = PricesDialog(
            engine.prices(),
            engine.set_price,
            engine.prices,
            model if engine.prices().price(model) is None else "",
            self.window,
        )
        dialog.exec()
        self.prices_changed.emit()

    def open_settings(self) -> bool:
        """The Settings dialog; True once what it chose is saved and in use."""
        from desktop_app.ui.dialogs.settings_dialog import SettingsDialog

        engine = self.engine
        dialog = SettingsDialog(
            engine.settings,
            engine.secrets,
            self.key_source(),
            self.models,
            self.window,
            check=engine.settings_faults,
            open_prices=self.open_prices,
        )
        if dialog.exec() != SettingsDialog.DialogCode.Accepted:
            return False
        settings = dialog.chosen()
        server_changed = settings.base_url != engine.settings.base_url
        try:
            engine.save_settings(settings)  # reconnects itself when the server changed
        except ContextDeskError as exc:
            self.problem.emit(exc.info)
            return False
        if dialog.key_changed:
            engine.reconnect(demo=False)  # a real key ends the offline demo
        if dialog.key_changed or server_changed:  # another server may list other models
            self.models = engine.known_models()
            self._look_up_key()
        self.settings_saved.emit()
        self.mode_changed.emit()
        return True

    def start_demo(self) -> Chat:
        """Switch to the offline demo model and make a demo chat to look around in."""
        self.engine.reconnect(demo=True)
        self.mode_changed.emit()
        return self.engine.create_demo_chat()
