"""Test-wide rules: data under a temp home, offscreen Qt, no network beyond loopback."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator

import keyring
import pytest
from hypothesis import settings

from tests.fakes.keyring_backend import MemoryKeyring

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# CI gates every submission, so its property tests run the same examples every time: a red
# run is a regression anyone can reproduce, never the luck of the draw. Exploring new
# examples is on demand: HYPOTHESIS_PROFILE=fuzz (with the *_EXAMPLES variables for more).
settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("fuzz", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: object) -> None:
    host = address[0] if isinstance(address, tuple) else address
    if self.family in (socket.AF_INET, socket.AF_INET6) and host not in (
        "127.0.0.1",
        "::1",
        "localhost",
    ):
        raise OSError(f"tests may not reach the network (tried {address!r})")
    _real_connect(self, address)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _isolated(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    monkeypatch.setenv("CONTEXTDESK_HOME", str(tmp_path_factory.mktemp("home")))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)
    # The real keyring API over an in-memory backend: never the machine's own keyring.
    previous = keyring.get_keyring()
    keyring.set_keyring(MemoryKeyring())
    yield
    keyring.set_keyring(previous)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under tests/ui needs Qt: mark it, so `-m "not gui"` is the fast loop."""
    for item in items:
        if "ui" in item.path.parent.parts[-1:]:
            item.add_marker(pytest.mark.gui)
