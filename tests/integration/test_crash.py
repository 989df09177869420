"""A few `kill -9`s mid-stream in the suite; tests/perf/kill_send.py runs 200."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import crash


@pytest.mark.timeout(180)
def test_kill_minus_nine_while_streaming_loses_nothing(tmp_path: Path) -> None:
    rounds = crash.run(tmp_path / "home", rounds=3)
    assert len(rounds) == 3
    assert all(r.messages_after >= r.messages_before + 1 for r in rounds)
    assert sum(r.interrupted for r in rounds) >= 1  # at least one reply was really cut
