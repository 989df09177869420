"""Storage benchmark (on demand):

    .venv/bin/python tests/perf/bench_storage.py [--json FILE]

Targets (storage issue): appending a message to a 10,000-message chat costs at most 1.5×
appending to a 100-message one (synchronous=FULL, so each append is a real fsync); export
+ import of a 10,000-message chat ≤ 3 s (the CLI's whole path: the next request is
projected, every block's tokens estimated, JSON written, then parsed, validated,
repaired and stored in one transaction). Search (the window issue): a query over 1,000
chats and 100,000 messages ≤ 50 ms (the slowest of several queries: rare and common
words, a phrase, one chat's, and one found nowhere).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop_app.context.chat_settings import ContextSettings
from desktop_app.context.projection import Projector
from desktop_app.core.blocks import TextBlock
from desktop_app.core.messages import Message
from desktop_app.storage.chat_export import export_chat
from desktop_app.storage.exchange import import_chat
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


SEARCH_CHATS, SEARCH_MESSAGES = 1000, 100
SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "ta", "shi", "po", "den", "var", "ix", "om", "el"]


def search_seconds(store: ChatStore) -> tuple[float, str]:
    """The slowest of a set of queries over 1,000 chats × 100 messages (of 40 made-up
    words from a 20,000-word vocabulary: common pieces and rare words alike)."""
    rng = random.Random(7)
    words = [
        "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4))) for _ in range(20_000)
    ]
    chat_ids = []
    for n in range(SEARCH_CHATS):
        chat = store.create_chat(f"chat {n}")
        chat_ids.append(chat.id)
        store.append_messages(
            chat.id,
            [
                Message(
                    "user" if i % 2 == 0 else "assistant",
                    (TextBlock(" ".join(rng.choice(words) for _ in range(40))),),
                )
                for i in range(SEARCH_MESSAGES)
            ],
        )
    queries: list[tuple[str, str | None]] = [
        (words[1234], None),
        ("kalo", None),
        ("den var", None),
        ("zzzq", None),
    ]
    queries += [("ta", chat_ids[500]), (words[77], chat_ids[10])]
    worst, which = 0.0, ""
    for text, chat_id in queries:
        took = min(_timed(store.search, text, chat_id) for _ in range(5))
        if took > worst:
            worst, which = took, f"{text!r}{' in one chat' if chat_id else ''}"
    return worst, which


def _timed(search: Callable[..., object], text: str, chat_id: str | None) -> float:
    started = time.perf_counter()
    search(text, chat_id=chat_id)
    return time.perf_counter() - started


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
        searched = ChatStore.open(Path(folder) / "search.sqlite3")
        search_worst, worst_query = search_seconds(searched)
        searched.close()
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
            Row(
                f"search {SEARCH_CHATS:,} chats × {SEARCH_MESSAGES} messages, slowest query",
                search_worst * 1000,
                "ms",
                50,
                f"best of 5 each; slowest: {worst_query}",
            ),
        ],
        args.json,
    )


if __name__ == "__main__":
    raise SystemExit(main())
