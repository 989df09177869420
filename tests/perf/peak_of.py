"""A command of the command line, and its peak resident memory (on demand, by the
benchmarks): `python tests/perf/peak_of.py ARGS…` runs `contextdesk ARGS…`, then prints
its peak in MB as its last line. The peak is the kernel's VmHWM, which starts afresh at
exec — not `ru_maxrss`, which keeps the forking parent's. Nothing else is imported
first: the command's own memory, as a user's `contextdesk` has it."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop_app.app import main

if __name__ == "__main__":
    with contextlib.redirect_stdout(sys.stderr):  # (what the command says is not measured)
        code = main(sys.argv[1:])
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            print(f"{int(line.split()[1]) / 1024:.1f}")
    raise SystemExit(code)
