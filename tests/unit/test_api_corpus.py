"""Histories from the wild (tests/data/api_histories, each citing its public thread or
recording): every one the API rejected is caught, with the API's words where the thread
quotes them; after import, every next request is valid; every accepted body passes
unchanged and its blocks round-trip byte for byte."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop_app.chats.engine import Engine
from desktop_app.core.blocks import block_to_api
from desktop_app.core.body_repair import repair_body
from desktop_app.core.lenient import normalise_messages
from desktop_app.core.repair import repair
from desktop_app.core.request_rules import body_problems, without_system_messages
from desktop_app.core.wire import messages_from_api

CORPUS = Path(__file__).parents[1] / "data" / "api_histories"
REJECTED = sorted((CORPUS / "rejected").glob("*.json"))
ACCEPTED = sorted((CORPUS / "accepted").glob("*.json"))
# Threads where the API said the same fault in other words (older wordings; an empty string
# as content is "empty content" in one thread and "empty text block" in another), or
# whose rule cannot be checked without the server (a signature's validity).
OLD_WORDING = {"005", "006", "018", "042", "043", "044", "052", "053"}
SERVER_ONLY = {"030"}  # "Invalid `signature`": only Anthropic can verify a signature


def case(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if data.get("synthesize") == "oversize_image":
        _synthesize_oversize_image(data)
    return data


def _synthesize_oversize_image(data: dict[str, Any]) -> None:
    """Build the >5 MB JPEG the thread describes (kept out of the repository)."""
    from PIL import Image

    spec = data["synthesize_spec"]
    out = io.BytesIO()
    Image.new("RGB", (64, 64), "red").save(out, "JPEG")
    jpeg = out.getvalue()
    wanted = spec["base64_length"] * 3 // 4
    padding = b""
    while len(jpeg) + len(padding) < wanted:  # COM segments of up to 65,533 bytes
        size = min(65533, wanted - len(jpeg) - len(padding) - 4)
        padding += b"\xff\xfe" + (size + 2).to_bytes(2, "big") + b"x" * size
    payload = jpeg[:2] + padding + jpeg[2:]
    target: Any = data["request"]
    *parents, leaf = spec["path"].split(".")
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    target[leaf] = base64.b64encode(payload).decode("ascii")


def ids(paths: list[Path]) -> list[str]:
    return [p.stem[:40] for p in paths]


def test_the_corpus_is_as_large_as_promised() -> None:
    assert len(REJECTED) >= 30
    assert len(ACCEPTED) >= 10
    for path in REJECTED + ACCEPTED:
        assert case(path)["source"].startswith("https://github.com/"), path.name


@pytest.mark.parametrize("path", REJECTED, ids=ids(REJECTED))
def test_every_rejected_history_is_caught(path: Path) -> None:
    data = case(path)
    if path.name[:3] in SERVER_ONLY:
        pytest.skip("a signature's validity is known only to the server that signed it")
    found = [str(p) for p in body_problems(data["request"])]
    assert found, f"{path.name}: not caught; the API said {data['error']}"
    error = data["error"]
    if path.name[:3] in OLD_WORDING:
        return
    said = "\n  ".join(found)
    assert any(same_words(error, ours) for ours in found), (
        f"{path.name}: the API said\n  {error}\nwe said\n  {said}"
    )


def same_words(theirs: str, ours: str) -> bool:
    """Our problem says what the API said, at the same place. Threads lose backticks to
    Markdown, elide ids ("srvtoolu_…", "messages.N") and quote older docs addresses; older
    messages named only `messages` as the place."""
    their_path, their_words = _split(theirs)
    our_path, our_words = _split(ours)
    specific = their_path and "N" not in their_path and their_path != "messages"
    if specific and their_path != our_path:
        return False
    for elided in ("…", "..."):
        if elided in their_words:
            head, _, tail = their_words.partition(elided)
            return our_words.startswith(head) and tail.strip(". ") in our_words
    return their_words == our_words


def _split(text: str) -> tuple[str, str]:
    """(JSON path, words) of an error message, in plain words."""
    text = text.replace("`", "").replace("docs.anthropic.com", "docs.claude.com")
    head, sep, rest = text.partition(": ")
    return (head, rest) if sep and " " not in head else ("", text)


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    engine = Engine.open(tmp_path / "home", demo=True)
    yield engine
    engine.close()


@pytest.mark.parametrize("path", REJECTED, ids=ids(REJECTED))
def test_after_import_the_next_request_is_valid(path: Path, engine: Engine) -> None:
    data = case(path)
    imported = engine.import_bytes(json.dumps(data["request"]).encode())
    plan = imported.chat.plans.plan("What next?")
    body = plan.request.body()
    assert body_problems(body) == [], path.name


@pytest.mark.parametrize("path", ACCEPTED, ids=ids(ACCEPTED))
def test_every_accepted_body_passes_unchanged(path: Path) -> None:
    body = case(path)["request"]
    assert body_problems(body) == []
    kept, _ = without_system_messages(body["messages"])
    messages = messages_from_api(kept)
    assert tuple(repair(messages).messages) == tuple(messages)
    for raw, message in zip(kept, messages, strict=True):
        content = raw["content"]
        if isinstance(content, str):
            continue
        for raw_block, block in zip(content, message.blocks, strict=True):
            expected = {k: v for k, v in raw_block.items() if k != "cache_control"}
            if expected["type"] == "tool_result" and expected.get("is_error") is False:
                del expected["is_error"]
            assert block_to_api(block) == expected  # server tool blocks included


@pytest.mark.parametrize("path", REJECTED, ids=ids(REJECTED))
def test_check_fix_makes_a_rejected_body_valid_or_says_why_not(path: Path) -> None:
    """What stays is a prefill on a model that takes none, or a history with nothing in it:
    ContextDesk will not invent the user's words (import is fine: the next message is the
    user's). Then `check --fix` writes nothing."""
    fixed = repair_body(case(path)["request"])
    assert fixed.repairs or path.name[:3] in SERVER_ONLY or fixed.remaining
    unfixable = ("prefill", "at least one message is required")
    assert all(any(u in p.message for u in unfixable) for p in fixed.remaining), fixed.remaining


@pytest.mark.parametrize("path", ACCEPTED, ids=ids(ACCEPTED))
def test_an_accepted_body_needs_no_repair_on_import(path: Path) -> None:
    body = case(path)["request"]
    kept, _ = without_system_messages(body["messages"])
    assert normalise_messages(kept).repairs == []
    assert [
        str(r)
        for r in repair_body({**body, "messages": kept}).repairs
        if "cache_control" not in r.action
    ] == []
