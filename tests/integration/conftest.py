"""A simulator on 127.0.0.1 and the real AnthropicBackend pointed at it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop_app.api.backend import AnthropicBackend
from desktop_app.api.simulator import SimulatorServer
from desktop_app.app import main

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


@pytest.fixture
def cli(
    tmp_path: Path,
    sim: SimulatorServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Any:
    """`contextdesk …` as typed, against the simulator, over a home of its own:
    `cli(*args, status=0)` returns what it printed (its stderr when a status other than
    0 is expected: a refusal's reason); `cli.home` is the data folder."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", sim.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    home = tmp_path / "home"

    def run(*args: str, status: int = 0) -> str:
        code = main(["--home", str(home), *args])
        out, err = capsys.readouterr()
        assert code == status, f"{args}: exit {code}: {out} {err}"
        return out if status == 0 else err

    run.home = home  # type: ignore[attr-defined]
    return run
