"""The API key: from ANTHROPIC_API_KEY (never persisted), this session's memory, the OS
keyring (service "ContextDesk"), or — only after an explicit, warned opt-in — a file
readable by the user alone. Never a silent fallback (cli/cli#7757): a keyring that is
missing, locked or hangs for more than 5 s is an error that offers the two choices.

The key is held in an `ApiKey`, whose repr hides it, so it cannot slip into a log line.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from desktop_app.config.errors import KeyringUnavailable
from desktop_app.config.files import write_atomically
from desktop_app.core.errors import ContextDeskError, ErrorKind

log = logging.getLogger(__name__)

SERVICE = "ContextDesk"
ACCOUNT = "anthropic-api-key"
KEYRING_TIMEOUT_S = 5.0


class KeySource(StrEnum):
    ENVIRONMENT = "the ANTHROPIC_API_KEY environment variable"
    SESSION = "this session only (not saved)"
    KEYRING = "the system keyring"
    PLAINTEXT = "a plaintext file (you chose this)"


@dataclass(frozen=True, slots=True)
class ApiKey:
    value: str = field(repr=False)
    source: KeySource

    def __repr__(self) -> str:
        return f"ApiKey(source={self.source.name}, value='…{self.value[-4:]}')"


class SecretStore:
    def __init__(
        self,
        config_dir: Path,
        *,
        plaintext_opt_in: bool = False,
        timeout: float = KEYRING_TIMEOUT_S,
    ) -> None:
        self.plaintext_file = config_dir / "api-key"
        self.plaintext_opt_in = plaintext_opt_in
        self.timeout = timeout
        self._session: str | None = None

    def get(self) -> ApiKey | None:
        """The key in use, and where it comes from; None if there is none."""
        env = os.environ.get("ANTHROPIC_API_KEY", "").strip()
        if env:
            return ApiKey(env, KeySource.ENVIRONMENT)
        if self._session:
            return ApiKey(self._session, KeySource.SESSION)
        if self.plaintext_opt_in and self.plaintext_file.exists():
            return ApiKey(
                self.plaintext_file.read_text(encoding="utf-8").strip(), KeySource.PLAINTEXT
            )
        try:
            stored = self._keyring("get_password", SERVICE, ACCOUNT)
        except KeyringUnavailable as exc:
            if type(exc.__cause__).__name__ == "NoKeyringError":
                return None  # no keyring service: nothing can have been stored there
            raise  # locked or hanging: a key may be there; say so
        return ApiKey(stored, KeySource.KEYRING) if stored else None

    def save(self, key: str) -> KeySource:
        """Keep the key in the keyring; `KeyringUnavailable` if that cannot be done."""
        self._keyring("set_password", SERVICE, ACCOUNT, key.strip())
        return KeySource.KEYRING

    def use_for_session(self, key: str) -> KeySource:
        self._session = key.strip()
        return KeySource.SESSION

    def save_plaintext(self, key: str) -> KeySource:
        """Only after the user's explicit opt-in: a file only they can read."""
        if not self.plaintext_opt_in:
            raise ContextDeskError(
                "Plaintext storage is off",
                "Turn on 'store the key in a plaintext file' in Settings first.",
                kind=ErrorKind.USAGE,  # (the keyring is not involved: a setting is off)
            )
        write_atomically(self.plaintext_file, key.strip().encode("utf-8"), mode=0o600)
        log.warning(
            "the API key is stored in plaintext at %s, as the user chose", self.plaintext_file
        )
        return KeySource.PLAINTEXT

    def forget(self) -> None:
        self._session = None
        self.plaintext_file.unlink(missing_ok=True)
        with contextlib.suppress(KeyringUnavailable):  # nothing stored there, then
            self._keyring("delete_password", SERVICE, ACCOUNT)

    def _keyring(self, operation: str, *args: str) -> Any:
        return call_keyring(operation, *args, timeout=self.timeout)


def call_keyring(operation: str, *args: str, timeout: float = KEYRING_TIMEOUT_S) -> Any:
    """Call the keyring with a time limit, turning every failure into one error."""
    box: dict[str, Any] = {}

    def call() -> None:
        try:
            import keyring

            box["value"] = getattr(keyring, operation)(*args)
        except Exception as exc:  # handed to the caller below
            box["error"] = exc

    worker = threading.Thread(target=call, name="keyring", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise KeyringUnavailable(f"The keyring did not answer within {timeout:g} seconds")
    error = box.get("error")
    if error is None:
        return box.get("value")
    name = type(error).__name__
    if name == "PasswordDeleteError":
        return None  # there was nothing to delete
    if name == "NoKeyringError":
        raise KeyringUnavailable("No keyring service was found on this system") from error
    if name == "KeyringLocked":
        raise KeyringUnavailable("The keyring is locked") from error
    raise KeyringUnavailable(f"The keyring failed ({name}: {error})") from error
