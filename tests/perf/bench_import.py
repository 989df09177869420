"""Importing a large generated ChatGPT export (on demand):

    .venv/bin/python tests/perf/bench_import.py [--json FILE] [--mb 500]

Target (issue 35): a 500 MB export imports with the process's peak resident memory under
400 MB (it is read one conversation at a time), with progress. The import runs in a
process of its own (`contextdesk import`), whose peak RSS is read from the kernel.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.perf.report import Row, report

WORDS = "the refund for order 88213 was approved after the courier confirmed delivery " * 13


def write_export(path: Path, megabytes: int) -> int:
    """A ChatGPT conversations.json of about `megabytes` MB: conversations of 40 turns,
    each message ~1 KB. Returns how many conversations."""
    count = 0
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        while out.tell() < megabytes * 2**20:
            mapping: dict[str, dict[str, Any]] = {
                "root": {"id": "root", "message": None, "parent": None, "children": []}
            }
            parent = "root"
            for n in range(80):
                node = f"n{n}"
                role = "user" if n % 2 == 0 else "assistant"
                mapping[node] = {
                    "id": node,
                    "parent": parent,
                    "children": [],
                    "message": {
                        "author": {"role": role},
                        "content": {"content_type": "text", "parts": [f"{n}: {WORDS}"]},
                        "create_time": 1767225600 + n,
                    },
                }
                mapping[parent]["children"].append(node)
                parent = node
            conversation = {
                "id": f"conv-{count}",
                "title": f"Conversation {count}",
                "mapping": mapping,
                "current_node": parent,
            }
            out.write(("," if count else "") + json.dumps(conversation))
            count += 1
        out.write("]")
    return count


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", type=Path)
    parser.add_argument("--mb", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        export = Path(folder) / "conversations.json"
        count = write_export(export, args.mb)
        size = export.stat().st_size / 2**20
        env = {**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
        command = [sys.executable, "-m", "desktop_app", "--home", f"{folder}/home"]
        start = time.perf_counter()
        done = subprocess.run(
            [*command, "import", str(export)], env=env, capture_output=True, text=True
        )
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            print(done.stderr[-2000:], file=sys.stderr)
            return 2
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        imported = len(done.stdout.split())
        assert imported == count, (imported, count)
        assert "Importing" in done.stderr  # its progress
    rows = [
        Row(
            f"import a {size:,.0f} MB ChatGPT export: peak memory",
            peak_mb,
            "MB",
            400,
            f"{count:,} conversations of 80 messages in {seconds:.0f} s",
        )
    ]
    return report("Importing an export", rows, args.json)


if __name__ == "__main__":
    sys.exit(main())
