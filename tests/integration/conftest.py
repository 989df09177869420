"""A simulator on 127.0.0.1 and the real AnthropicBackend pointed at it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from desktop_app.api.backend import AnthropicBackend
from desktop_app.api.simulator import SimulatorServer

TEST_KEY = "sk-test-not-a-real-key"


@pytest.fixture
def sim() -> Iterator[SimulatorServer]:
    with SimulatorServer() as server:
        yield server


@pytest.fixture
def backend(sim: SimulatorServer) -> Iterator[AnthropicBackend]:
    api = AnthropicBackend(TEST_KEY, sim.base_url, max_retries=0, timeout=10)
    yield api
    api.close()
