"""The usage view over a ledger of 10,000 requests (on demand), offscreen:

    .venv/bin/python tests/perf/bench_usage.py [--json FILE] [--runs 5]

Target (issue "Cost you can see coming"): View → Usage filled with all 10,000 requests
("All time") and painted in under 200 ms, in light and in dark (median of `runs`), its
total equal to `spend`'s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop_app.chats import Engine
from desktop_app.ui.gui import make_app
from tests.perf.report import Row, report

REQUESTS = 10_000
TITLES = tuple(f"Chat {n}" for n in range(50))
MODELS = ("claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5", "a-model-without-a-price")


def fill_ledger(
    engine: Engine,
    requests: int = REQUESTS,
    days: int = 60,
    titles: tuple[str, ...] = TITLES,
    models: tuple[str, ...] = MODELS,
) -> None:
    """`requests` answered requests over `days` days, across chats of `titles` and
    `models` (rows as the ledger stores them: one shared head, usage as the API reports
    it). The usage view's screenshot uses it too (packaging/screenshots.py)."""
    from desktop_app.storage import ledger

    chats = [engine.new_chat(title).id for title in titles]
    db = engine.store.db
    first = ledger.record(db, chats[0], {"model": MODELS[0], "messages": []}, server="bench")
    head = db.execute("SELECT head FROM requests WHERE id = ?", (first,)).fetchone()[0]
    db.execute("DELETE FROM requests")
    rng = random.Random(7)
    now = time.time()
    rows = []
    for n in range(requests):
        usage = {
            "input_tokens": rng.randint(10, 400),
            "output_tokens": rng.randint(50, 2_000),
            "cache_creation_input_tokens": rng.randint(0, 3_000),
            "cache_read_input_tokens": rng.randint(0, 60_000),
        }
        chat = chats[n % len(chats)]
        rows.append(
            (
                chat,
                n + 1,
                now - rng.random() * days * 86_400,
                models[n % len(models)],
                head,
                json.dumps(usage),
            )
        )
    with db:
        db.executemany(
            "INSERT INTO requests (chat_id, number, sent_at, seconds, model, server, head, base, "
            "shared, added, marks, usage, status, purpose) "
            "VALUES (?, ?, ?, 1.0, ?, 'bench', ?, NULL, 0, '[]', '[]', ?, 'complete', 'chat')",
            rows,
        )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    app = make_app()
    from desktop_app.ui import theme
    from desktop_app.ui.dialogs.usage_dialog import UsageDialog

    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as home:
        engine = Engine.open(home)
        try:
            fill_ledger(engine)
            spent = engine.spend().cost
            for dark in (False, True):
                app.setPalette(theme.palette_for(dark))
                times = []
                total = 0.0
                for _ in range(args.runs):
                    dialog = UsageDialog(engine)
                    start = time.perf_counter()
                    dialog.period.setCurrentText("All time")  # every one of the 10,000
                    dialog.grab()  # painted, whole
                    times.append((time.perf_counter() - start) * 1000)
                    assert dialog.by_day is not None
                    total = dialog.by_day.total.cost
                    dialog.deleteLater()
                    app.processEvents()
                assert abs(total - spent) < 1e-6, (total, spent)
                rows.append(
                    Row(
                        f"usage view, 10,000 requests, {'dark' if dark else 'light'}",
                        statistics.median(times),
                        "ms",
                        200,
                        f"median of {args.runs}; best {min(times):.0f} ms; total = spend's",
                    )
                )
        finally:
            engine.close()
    return report("Usage view", rows, args.json)


if __name__ == "__main__":
    sys.exit(main())
