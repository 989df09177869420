"""Storage benchmark (on demand):

    .venv/bin/python tests/perf/bench_storage.py [--json FILE]

Targets (storage issue): appending a message to a 10,000-message chat costs at most 1.5×
appending to a 100-message one (synchronous=FULL, so each append is a real fsync); export
+ import of a 10,000-message chat ≤ 3 s (the CLI's whole path: the next request is
projected, every block's tokens estimated, JSON written, then parsed, validated,
repaired and stored in one transaction).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop_app.context.projection import Projector
from desktop_app.context.state import ContextSettings
from desktop_app.core.messages import Message
from desktop_app.storage.exchange import export_chat, import_chat
from desktop_app.storage.store import ChatStore
from desktop_app.tokens.counter import TokenCounter
from desktop_app.tokens.encoding import TextEncoder, load_encoder
from tests.perf.bench_core import transcript
from tests.perf.report import Row, report

APPENDS = 40


def append_cost(store: ChatStore, size: int) -> float:
    chat = store.create_chat(f"{size} messages")
    store.append_messages(chat.id, transcript(size))
    probe = transcript(APPENDS + 4)[:APPENDS]
    times = []
    for message in probe:
        fresh = Message(message.role, message.blocks)
        start = time.perf_counter()
        store.append_message(chat.id, fresh)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def export_import_seconds(store: ChatStore, encoder: TextEncoder) -> float:
    """The CLI's export then import, in a running app: the tokenizer is loaded (the app
    loads it once, at start), but no token count is cached (a fresh counter)."""
    chat = store.create_chat("10,000 messages")
    store.append_messages(chat.id, transcript(10_000))
    start = time.perf_counter()
    counter = TokenCounter(encoder)
    messages = store.messages(chat.id)
    plan = Projector(counter).project(
        messages,
        store.context_state(chat.id),
        ContextSettings(context_window=10_000_000),
        model="m",
    )
    document = export_chat(store, chat.id, plan.request.body(), counter.blocks_of, messages)
    import_chat(store, json.dumps(document, ensure_ascii=False).encode())
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = ChatStore.open(Path(folder) / "bench.sqlite3")
        small = append_cost(store, 100)
        large = append_cost(store, 10_000)
        small_again = append_cost(store, 100)  # the same conditions after the big chat exists
        encoder = load_encoder()
        round_trip = min(export_import_seconds(store, encoder) for _ in range(3))  # best of 3
        store.close()
    small = min(small, small_again)
    ratio = large / small
    return report(
        "storage benchmarks",
        [
            Row(
                "append: 10,000-message chat / 100-message chat",
                ratio,
                "×",
                1.5,
                f"medians of {APPENDS}: {large:.2f} ms / {small:.2f} ms",
            ),
            Row(
                "export + import, 10,000 messages",
                round_trip,
                "s",
                3.0,
                "best of 3, tokenizer loaded",
            ),
        ],
        args.json,
    )


if __name__ == "__main__":
    raise SystemExit(main())
