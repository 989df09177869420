"""Settings and state files, and the API key: environment, session, keyring, plaintext."""

from __future__ import annotations

import json
import logging
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import keyring
import keyring.backend
import keyring.errors
import pytest

from desktop_app.config.errors import KeyringUnavailable
from desktop_app.config.mcp_servers import McpConfig, McpServer, Secrets
from desktop_app.config.secrets import KeySource, SecretStore
from desktop_app.config.settings import Settings, load, save
from desktop_app.config.window_state import AppState, read_look
from desktop_app.core.errors import ContextDeskError, ErrorKind
from tests.fakes.keyring_backend import LockedKeyring, MemoryKeyring


class HangingKeyring(MemoryKeyring):
    gate = threading.Event()

    def get_password(self, service: str, username: str) -> str | None:
        self.gate.wait(10)
        return None


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


NO_KEYRING = keyring.backends.fail.Keyring()


def use(backend: keyring.backend.KeyringBackend) -> None:
    keyring.set_keyring(backend)


def test_settings_round_trip_and_ignore_unknown_keys(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    save(path, Settings(model="claude-haiku-4-5", run_command_enabled=True))
    path.write_text(path.read_text().replace('"auto_pin"', '"from_the_future": 1, "auto_pin"'))
    loaded = load(path, Settings)
    assert (loaded.model, loaded.run_command_enabled) == ("claude-haiku-4-5", True)
    save(tmp_path / "state.json", AppState(splitter_sizes=(200, 600, 300), last_chat_id="chat_1"))
    assert load(tmp_path / "state.json", AppState).splitter_sizes == (200, 600, 300)


def test_a_damaged_settings_file_is_set_aside_not_lost(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"model": "claude-x", ')
    with caplog.at_level(logging.WARNING):
        assert load(path, Settings) == Settings()
    assert (tmp_path / "settings.json.bad").read_text() == '{"model": "claude-x", '
    assert "set aside" in caplog.text


def test_the_environment_wins_and_is_never_saved(
    tmp_path: Path, memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env-123")
    store = SecretStore(tmp_path)
    key = store.get()
    assert key is not None
    assert (key.value, key.source) == ("sk-env-123", KeySource.ENVIRONMENT)
    assert memory_keyring.store == {}
    assert "sk-env-123" not in repr(key)
    assert "sk-env" not in str([key])


def test_the_keyring_keeps_the_key(tmp_path: Path, memory_keyring: MemoryKeyring) -> None:
    store = SecretStore(tmp_path)
    assert store.get() is None
    assert store.save("sk-ring-456") is KeySource.KEYRING
    assert memory_keyring.store == {("ContextDesk", "anthropic-api-key"): "sk-ring-456"}
    assert SecretStore(tmp_path).get() == store.get()
    store.forget()
    assert store.get() is None
    assert list(tmp_path.iterdir()) == []  # nothing on disk, ever


@pytest.mark.parametrize(
    ("backend", "why"),
    [(LockedKeyring(), "locked"), (NO_KEYRING, "No keyring service")],
)
def test_a_locked_or_missing_keyring_is_an_error_with_choices(
    tmp_path: Path, backend: keyring.backend.KeyringBackend, why: str
) -> None:
    previous = keyring.get_keyring()
    use(backend)
    try:
        store = SecretStore(tmp_path)
        with pytest.raises(KeyringUnavailable, match=why) as caught:
            store.save("sk-1")
        assert "this session only" in caught.value.message
        assert list(tmp_path.iterdir()) == []  # no silent plaintext fallback
        assert store.use_for_session("sk-1") is KeySource.SESSION
        key = store.get()
        assert key is not None
        assert key.source is KeySource.SESSION
    finally:
        use(previous)


def test_a_hanging_keyring_times_out(tmp_path: Path) -> None:
    previous = keyring.get_keyring()
    use(HangingKeyring())
    try:
        with pytest.raises(KeyringUnavailable, match=r"did not answer within 0\.3 seconds"):
            SecretStore(tmp_path, timeout=0.3).get()
    finally:
        HangingKeyring.gate.set()
        use(previous)


def test_plaintext_only_after_the_opt_in(tmp_path: Path, memory_keyring: MemoryKeyring) -> None:
    with pytest.raises(ContextDeskError, match="Plaintext storage is off") as raised:
        SecretStore(tmp_path).save_plaintext("sk-plain")
    assert raised.value.kind is ErrorKind.USAGE  # a setting that is off: no keyring trouble
    store = SecretStore(tmp_path, plaintext_opt_in=True)
    assert store.save_plaintext("sk-plain") is KeySource.PLAINTEXT
    assert stat.S_IMODE((tmp_path / "api-key").stat().st_mode) == 0o600
    key = SecretStore(tmp_path, plaintext_opt_in=True).get()
    assert key is not None
    assert (key.value, key.source) == ("sk-plain", KeySource.PLAINTEXT)


def test_a_value_of_the_wrong_type_never_turns_a_switch_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(
        '{"run_command_enabled": "false", "workspace": 5, "max_tokens": "abc",'
        ' "model": "claude-x", "thinking_budget": 999999}'
    )
    loaded = load(path, Settings)
    assert loaded.run_command_enabled is False  # "false" is a string, not a yes
    assert (loaded.workspace, loaded.max_tokens) == ("", Settings().max_tokens)
    assert loaded.model == "claude-x"  # the good values are kept
    assert loaded.thinking_budget == 0  # out of range: the default
    assert "run_command_enabled='false' is not a bool" in caplog.text


def test_unreadable_settings_files_are_set_aside_under_new_names(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    for n in range(3):
        path.write_text(f'{{"model": "damaged {n}"')
        load(path, Settings)
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert kept == ["settings.json.bad", "settings.json.bad.1", "settings.json.bad.2"]
    assert (tmp_path / "settings.json.bad").read_text() == '{"model": "damaged 0"'


def test_the_keyring_kind_means_the_keyring_cannot_be_used(
    tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    """`keyring` is for a keyring that cannot be used; a value missing from one that
    works is `not_found` (add the server again), and an unreadable mcp.json is `io`."""
    config = McpConfig(tmp_path)
    config.add(McpServer("t", command="t"), Secrets({"TOKEN": "x"}))
    server = config.server("t")
    memory_keyring.store.clear()
    with pytest.raises(ContextDeskError, match="no value for 't'") as missing:
        config.secrets(server)
    assert missing.value.kind is ErrorKind.NOT_FOUND
    use(LockedKeyring())
    with pytest.raises(ContextDeskError, match="keyring is not available") as locked:
        config.secrets(server)
    assert locked.value.kind is ErrorKind.KEYRING
    use(memory_keyring)
    config.path.unlink()
    config.path.mkdir()  # (reading a folder fails as a damaged disk would)
    with pytest.raises(ContextDeskError, match="MCP servers not read") as unreadable:
        config.servers()
    assert unreadable.value.kind is ErrorKind.IO


@pytest.mark.parametrize(
    ("stored", "look"),
    [
        ({"appearance": "dark", "text_size": 14}, ("dark", 14)),
        ({"appearance": "dark"}, ("dark", 0)),
        # what the settings would refuse is the default in the first frame too
        ({"appearance": "purple", "text_size": 99}, ("system", 0)),
        ({"appearance": 1, "text_size": True}, ("system", 0)),
        ({"text_size": 12.5}, ("system", 0)),
        ([], ("system", 0)),
    ],
)
def test_the_first_frame_reads_the_look_the_settings_would_use(
    tmp_path: Path, stored: object, look: tuple[str, int]
) -> None:
    """The window's first frame takes the appearance and text size from the settings file
    before the settings load (`config/window_state.py`): never what they would refuse."""
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(stored))
    assert read_look(path) == look
    if isinstance(stored, dict):
        loaded = load(path, Settings)
        assert (loaded.appearance, loaded.text_size) == look


def test_the_first_frame_reads_a_damaged_settings_file_as_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"appearance": "dark", ')
    assert read_look(path) == ("system", 0)
    path.write_bytes('{"appearance": "dark", "workspace": "C:/Users/José"}'.encode("latin-1"))
    assert read_look(path) == ("system", 0)  # not UTF-8: the app still starts
    assert read_look(tmp_path / "none.json") == ("system", 0)
    assert path.exists()  # set aside by the settings' own load, after the first frame
