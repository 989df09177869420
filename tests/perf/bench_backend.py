"""Backend benchmark (on demand): Stop while the server is silent, through the real SDK.

    .venv/bin/python tests/perf/bench_backend.py [--json FILE]

Target (backend issue): the stream stops within 200 ms of the Stop, even though the server
sends nothing. Measured from `cancel()` on another thread to `Cancelled` on the worker,
20 times; the target is checked against the worst case.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop_app.api.backend import AnthropicBackend
from desktop_app.api.simulator import Fault, FaultKind, Reply, SimulatorServer
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import Cancelled
from desktop_app.core.messages import user_text
from desktop_app.core.request import ChatRequest
from tests.perf.report import Row, report

RUNS = 20


def one_cancel(backend: AnthropicBackend, sim: SimulatorServer) -> float:
    sim.queue(
        Fault(
            FaultKind.HANG,
            after_events=4,
            reply=Reply.text("a reply that stops half-way and then hangs"),
        )
    )
    cancel = CancelToken()
    pressed: list[float] = []

    def press() -> None:
        pressed.append(time.perf_counter())
        cancel.cancel()

    threading.Timer(0.3, press).start()
    request = ChatRequest("contextdesk-demo", (user_text("hello"),), 100)
    try:
        for _ in backend.stream(request, cancel):
            pass
    except Cancelled:
        return (time.perf_counter() - pressed[0]) * 1000
    raise AssertionError("the stream ended without being cancelled")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with SimulatorServer() as sim:
        backend = AnthropicBackend("bench-key", sim.base_url, max_retries=0)
        one_cancel(backend, sim)  # warm up: import anthropic, first connection
        times = [one_cancel(backend, sim) for _ in range(RUNS)]
        backend.close()
    worst, median = max(times), statistics.median(times)
    row = Row(
        "cancel while the server is silent",
        worst,
        "ms",
        200,
        f"worst of {RUNS}; median {median:.1f} ms",
    )
    return report("backend benchmark", [row], args.json)


if __name__ == "__main__":
    raise SystemExit(main())
