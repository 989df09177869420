"""Every benchmark the issues name, in one table (on demand, not part of the test run):

    .venv/bin/python tests/perf/run.py [--json FILE] [--only core,gui] [--readme]

Runs each benchmark script in its own process (a fresh interpreter, so one cannot warm
the caches of the next), collects their rows, and prints one table — metric, value,
target, pass or fail — with the machine it ran on. Exit status 0 when every target held.
`--readme` writes the table into README.md too, between its `perf:start` and `perf:end`
markers: the README's figures are this script's, never typed by hand.
The 200 × kill -9 crash run (`kill_send.py`, ~13 minutes) is not included: it has no
timing target and runs on its own.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.perf.report import Row, machine, report

HERE = Path(__file__).resolve().parent
BENCHMARKS = {
    "core": "bench_core.py",  # validate + repair of 10,000 messages
    "context": "bench_context.py",  # token counting and projection
    "backend": "bench_backend.py",  # cancel within 200 ms
    "storage": "bench_storage.py",  # append cost at 10k, export + import, search
    "gui": "bench_gui.py",  # start-up, a 10k chat, memory, streaming lag, Stop
    "startup": "bench_startup.py",  # the real entry point vs a bare window, two data folders
    "huge": "bench_huge_chat.py",  # a 100,000-message chat: open, plan, memory, scroll
    "usage": "bench_usage.py",  # View → Usage over 10,000 requests, light and dark
    "import": "bench_import.py",  # a 500 MB ChatGPT export: peak memory (~4 minutes)
}


def run_one(name: str, script: str) -> tuple[list[Row], str]:
    """The rows one benchmark reported, or a failed row that says why it did not."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "result.json"
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, str(HERE / script), "--json", str(out)],
            capture_output=True,
            text=True,
            timeout=1800,
        )
        took = time.monotonic() - started
        if not out.exists():
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            return [Row(f"{name}: did not finish", float("nan"), "", 0.0, tail[0])], ""
        data = json.loads(out.read_text())
    rows = [
        Row(f"{name}: {r['metric']}", r["value"], r["unit"], r["target"], r.get("note", ""))
        for r in data["results"]
    ]
    return rows, f"{name} took {took:.0f} s"


README = HERE.parents[1] / "README.md"
START, END = "<!-- perf:start -->", "<!-- perf:end -->"


def readme_table(rows: list[Row], when: str) -> str:
    """The rows as the README's Markdown table, with the machine and the date."""
    lines = [
        f"Measured {when} on {machine().rsplit(',', 1)[0]} (2 cores) by `tests/perf/run.py`:",
        "",
        "| what | measured | target | |",
        "|---|---:|---:|---|",
    ]
    for row in rows:
        target = "" if row.target is None else f"≤ {row.target:g} {row.unit}"
        verdict = "" if row.target is None else ("pass" if row.passed else "**fail**")
        lines.append(f"| {row.metric} | {row.value:,.2f} {row.unit} | {target} | {verdict} |")
    return "\n".join(lines)


def write_readme(rows: list[Row]) -> None:
    text = README.read_text()
    if START not in text or END not in text:
        raise SystemExit(f"README.md has no {START} … {END} section to fill")
    before, rest = text.split(START, 1)
    _, after = rest.split(END, 1)
    table = readme_table(rows, time.strftime("%Y-%m-%d"))
    README.write_text(f"{before}{START}\n{table}\n{END}{after}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", type=Path)
    parser.add_argument("--only", default="", help="comma-separated: " + ",".join(BENCHMARKS))
    parser.add_argument("--readme", action="store_true", help="write the table into README.md")
    args = parser.parse_args()
    chosen = [n for n in args.only.split(",") if n] or list(BENCHMARKS)
    unknown = [n for n in chosen if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}")
    rows: list[Row] = []
    for name in chosen:
        print(f"running {name}…", file=sys.stderr, flush=True)
        found, timing = run_one(name, BENCHMARKS[name])
        rows.extend(found)
        if timing:
            print(f"  {timing}", file=sys.stderr)
    if args.readme:
        write_readme(rows)
    return report("ContextDesk benchmarks", rows, args.json)


if __name__ == "__main__":
    sys.exit(main())
