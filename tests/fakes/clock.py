"""A clock a test moves by hand: what the engine's and the simulator's prompt cache run
on (`engine.clock`, `simulator.state.clock`), so a TTL passes without waiting for it."""

from __future__ import annotations

import time


class Clock:
    def __init__(self, now: float | None = None) -> None:
        self.now = time.time() if now is None else now

    def __call__(self) -> float:
        return self.now
