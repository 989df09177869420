"""`kill -9` at random moments while `contextdesk send` streams (on demand, ~12 min):

    .venv/bin/python tests/perf/kill_send.py [--runs 200] [--seed 7]

After every kill: PRAGMA integrity_check is ok, no stored message is lost, the cut
reply is marked interrupted after recovery, the history is valid; at the end the next
send succeeds. The suite runs three such kills (tests/integration/test_crash.py).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests import crash


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        rounds = crash.run(Path(folder) / "home", args.runs, args.seed)
    cut = sum(r.interrupted for r in rounds)
    print(
        f"{len(rounds)} kills in {time.monotonic() - started:.0f} s: integrity ok every time, no stored "
        f"message lost, {cut} replies cut mid-stream and marked interrupted, the next send succeeded"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
