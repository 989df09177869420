"""The API simulator in a process of its own, for benchmarks of the app's own streaming:
in the app's process its Python threads would share the GIL with the window.

    python tests/perf/simulator_process.py --tokens-per-s 1000 --reply FILE

Prints the server's base URL on its first line, serves until its standard input closes.
The reply (FILE's text) is streamed in 24-character frames at the rate given.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop_app.api.simulator import SimulatorServer
from desktop_app.api.simulator.script import Reply

CHARS_PER_FRAME = 24  # the simulator's text delta size: ≈ 5.5 tokens


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens-per-s", type=float, required=True)
    parser.add_argument("--reply", type=Path, required=True)
    args = parser.parse_args()
    with SimulatorServer() as simulator:
        simulator.state.frame_delay_s = CHARS_PER_FRAME / 4.4 / args.tokens_per_s
        simulator.queue(Reply.text(args.reply.read_text()))
        print(simulator.base_url, flush=True)
        sys.stdin.read()  # until the benchmark is done
    return 0


if __name__ == "__main__":
    sys.exit(main())
