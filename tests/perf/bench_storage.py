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
import platform
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
    verdict = "pass" if ratio <= 1.5 else "FAIL"
    machine = f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}, {platform.node()}"
    print(f"storage benchmark — {machine}")
    print(
        f"append to a 100-message chat: {small:.2f} ms; to a 10,000-message chat: {large:.2f} ms (medians of {APPENDS})"
    )
    print(f"{'ratio (10,000 / 100)':56} {ratio:8.2f}   target ≤ 1.5  {verdict}")
    trip_verdict = "pass" if round_trip <= 3.0 else "FAIL"
    print(
        f"{'export + import, 10,000 messages (best of 3)':56} {round_trip:6.2f} s   target ≤ 3 s  {trip_verdict}"
    )
    verdict = "pass" if verdict == trip_verdict == "pass" else "FAIL"
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "machine": machine,
                    "results": [
                        {
                            "metric": "append ratio 10k/100",
                            "value": round(ratio, 3),
                            "target": 1.5,
                            "pass": verdict == "pass",
                        }
                    ],
                },
                indent=2,
            )
        )
    return 0 if verdict == "pass" else 1


if __name__ == "__main__":
    raise SystemExit(main())
