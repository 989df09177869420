"""Export and import: round trips, request bodies, and broken files that change nothing."""

from __future__ import annotations

import io
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop_app.context.facts import Fact, FactSource
from desktop_app.context.state import ContextState, Summary
from desktop_app.core.blocks import TextBlock
from desktop_app.core.errors import ContextDeskError, HistoryFormatError
from desktop_app.core.messages import Message
from desktop_app.core.protocol import validate
from desktop_app.core.repair import repair
from desktop_app.core.request import RequestExtras, ToolSpec
from desktop_app.storage import exchange
from desktop_app.storage.chat_export import (
    Items,
    export_chat,
    export_document,
    export_markdown,
    write_json,
)
from desktop_app.storage.exchange import import_chat, import_chat_file
from desktop_app.storage.foreign import streaming
from desktop_app.storage.store import ChatStore
from tests.strategies import messy_histories
from tests.unit.builders import a, call, result, think, u


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ChatStore]:
    opened = ChatStore.open(tmp_path / "x.sqlite3")
    yield opened
    opened.close()


def sample_chat(store: ChatStore, messages: list[Message] | None = None) -> str:
    chat = store.create_chat("Refunds 🙂 退款 מבחן", model="claude-x", system_prompt="Be exact.")
    history = messages or [
        u("Refund #88213?"),
        a(think(), call("toolu_1", "lookup", order="88213")),
        u(result("toolu_1", "847.20")),
        a("It is 847.20."),
    ]
    store.append_messages(chat.id, history)
    ids = [m.id for m in store.messages(chat.id)]
    first = Summary(1, tuple(ids[1:2]), "Looked up the order.", "claude-x")
    state = (
        ContextState()
        .pin(
            Fact(
                "Refund 847.20 by 2026-04-13",
                (("order", "#88213"),),
                created_at=1_780_000_000.0,  # (a month before the export: kept, not "now")
                updated_at=1_780_500_000.0,
            )
        )
        .pin(Fact("שלום 🙂 请", source=FactSource.MODEL, pending=True))
        .with_summary(first)
        .with_summary(Summary(2, tuple(ids[1:3]), "Second.", "claude-x", replaces=first.id))
        .exclude_message(ids[-1])
    )
    store.save_context_state(chat.id, state)
    return chat.id


def normalized(doc: dict[str, Any]) -> dict[str, Any]:
    """The document with every id replaced by its position: "identical apart from ids"."""
    text = json.dumps(doc, ensure_ascii=False)
    ids = [
        doc["chat"]["id"],
        *(m["id"] for m in doc["messages"]),
        *(m["id"] for m in doc.get("branches", [])),
        *(f["id"] for f in doc["facts"]),
        *(s["id"] for s in doc["summaries"]),
    ]
    for n, old in enumerate(ids):
        text = text.replace(old, f"<id{n}>")
    out: dict[str, Any] = json.loads(text)
    for key in ("exported_at",):
        out.pop(key)
    out["chat"].pop("updated_at")  # (an import is the chat's latest activity)
    return out


def round_trip(store: ChatStore, chat_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    first = export_chat(store, chat_id, {"model": "claude-x", "messages": []})
    imported = import_chat(store, json.dumps(first, ensure_ascii=False).encode())
    second = export_chat(store, imported.chat.id, {"model": "claude-x", "messages": []})
    return first, second


def test_export_import_export_is_identical_apart_from_ids(store: ChatStore) -> None:
    first, second = round_trip(store, sample_chat(store))
    assert first["format"] == "contextdesk.chat"
    assert first["version"] == 1
    assert first["messages"][1]["content"][0]["type"] == "thinking"
    assert normalized(first) == normalized(second)
    assert len(store.list_chats()) == 2  # the original is untouched


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(history=messy_histories, title=st.text(max_size=20))
def test_any_chat_round_trips(store: ChatStore, history: list[Message], title: str) -> None:
    messages = list(repair(history).messages)
    if not messages:
        return
    chat_id = sample_chat(store, messages)
    store.update_chat(chat_id, title=title.encode("utf-8", "replace").decode() or "t")
    first, second = round_trip(store, chat_id)
    assert normalized(first) == normalized(second)


def test_the_export_written_message_by_message_is_the_document_as_one_value(
    store: ChatStore,
) -> None:
    """`write_json` makes each message's JSON as it writes it; the file is byte for byte
    what writing the whole document at once makes — branches, empty lists, any text."""
    chat_id = sample_chat(store)
    reply = store.messages(chat_id)[-1]
    store.show_end(chat_id, store.messages(chat_id)[-2].id)
    store.append_message(chat_id, Message(reply.role, (TextBlock("Another take\n\u2028"),)))
    document = export_document(store, chat_id, {"model": "m", "messages": []})
    assert isinstance(document["messages"], Items)
    written = io.StringIO()
    write_json(written, document)
    whole = export_chat(store, chat_id, {"model": "m", "messages": []})
    assert whole["branches"]  # (the case with a branch is the one written)
    whole["exported_at"] = document["exported_at"]
    assert written.getvalue() == json.dumps(whole, ensure_ascii=False, indent=2) + "\n"
    empty = {"format": "x", "messages": Items(lambda: iter(())), "nested": {"a": [{"b": []}]}}
    written = io.StringIO()
    write_json(written, empty)
    assert json.loads(written.getvalue()) == {
        "format": "x",
        "messages": [],
        "nested": empty["nested"],
    }


def test_the_request_and_token_estimates_are_exported(store: ChatStore) -> None:
    chat_id = sample_chat(store)
    body = {"model": "claude-x", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]}
    doc = export_chat(store, chat_id, body, block_tokens=lambda m: [7] * len(m.blocks))
    assert doc["request"] == body
    assert doc["messages"][0]["token_estimates"] == [7]


def test_a_bare_request_body_imports_with_its_repairs_reported(store: ChatStore) -> None:
    body = {
        "model": "claude-haiku-4-5",
        "system": [{"type": "text", "text": "You are terse."}],
        "messages": [
            {"role": "user", "content": "rename the files please"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_x", "name": "run", "input": {}}],
            },
            {"role": "user", "content": "done?"},
        ],
    }
    result = import_chat(store, json.dumps(body).encode())
    assert result.chat.title == "rename the files please"
    assert result.chat.system_prompt == "You are terse."
    assert any("toolu_x" in r for r in result.repairs)
    assert validate(store.messages(result.chat.id)) == []


def test_markdown_export_for_reading(store: ChatStore) -> None:
    text = export_markdown(store, sample_chat(store))
    assert text.startswith("# Refunds 🙂 退款 מבחן")
    assert "## Pinned facts\n\n- Refund 847.20 by 2026-04-13" in text
    assert "**Tool call:** `lookup`" in text
    assert "<details><summary>Thinking</summary>" in text
    assert "שלום" not in text  # a pending suggestion is not a pinned fact yet
    # The tool's result is Claude's work, read under Claude's heading, not "You".
    headings = [
        line
        for line in text.splitlines()
        if line.startswith("## ") and line[3:] in ("You", "Claude")
    ]
    assert headings == ["## You", "## Claude"]
    assert text.index("**Tool result:**") > text.index("## Claude")


def db_fingerprint(store: ChatStore) -> tuple[int, ...]:
    return tuple(
        store.db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
        for t in ("chats", "messages", "blocks", "facts", "summaries")
    )


VALID = json.dumps({"messages": [{"role": "user", "content": "hi"}]})
BROKEN: list[tuple[bytes, str]] = [
    (VALID[:-7].encode(), "Not valid JSON"),
    (b"{not json", "Not valid JSON"),
    (b"[1, 2]", "Not a chat"),
    (b'{"hello": 1}', "Not a chat"),
    (b'{"messages": 5}', "messages: Input should be a valid list"),
    (b'{"format": "contextdesk.chat", "version": 7, "chat": {}, "messages": []}', "version 7"),
    (b'{"format": "contextdesk.chat", "version": 1, "messages": []}', "chat: Field required"),
    (b"\xff\xfe\x00garbage", "Not UTF-8"),
    (b"[" * 200_000 + b"]" * 200_000, "Nested too deeply"),
    (
        (
            '{"messages": [{"role": "user", "content": [{"type": "document", "x": '
            + "[" * 5000
            + "]" * 5000
            + "}]}]}"
        ).encode(),
        "Nested too deeply",
    ),
]


def test_shape_errors_are_repaired_on_import_and_the_request_settings_kept(
    store: ChatStore,
) -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 16000,
        "thinking": {"type": "enabled", "budget_tokens": 8000},
        "tools": [
            {"name": "w", "input_schema": {"type": "object"}},
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
            {"type": "code_execution_20250825", "name": "code_execution"},
        ],
        "tool_choice": {"type": "auto"},
        "metadata": {"user_id": "u-42"},
        "messages": [
            {"role": "system", "content": "Answer in French."},
            {"role": "robot", "content": "x"},
            {"role": "assistant", "content": [{"type": "thinking", "signature": "s"}, "ok"]},
            {"role": "user", "content": [{"type": "text", "text": 5}, 7]},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "w", "input": "[1]"}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1"}]},
        ],
    }
    result = import_chat(store, json.dumps(body).encode())
    report = "\n".join(result.repairs)
    for expected in (
        "messages.0: moved a system message into the system prompt",
        "messages.1: read the unknown role 'robot' as 'user'",
        "messages.2.content.0: removed a thinking block without its `thinking` text",
        "messages.2.content.1: read a bare string as a text block",
        "messages.3.content.0: read the text as a string",
        "messages.3.content.1: removed a block that is not an object",
        "messages.4.content.0.input: replaced an input that is not an object",
        "tools: code_execution not kept — ContextDesk cannot offer server tools yet",
    ):
        assert expected in report
    chat = store.chat(result.chat.id)
    assert chat.system_prompt == "Answer in French."
    assert (chat.settings.max_tokens, chat.settings.thinking_budget) == (16000, 8000)
    # web search goes on as the chat's own setting (run by the API), not as a kept tool
    assert (chat.settings.web_search, chat.settings.web_max_uses) == (True, 3)
    assert "web_search" not in report
    extras = RequestExtras.read(chat.settings.request_extras)
    assert extras == RequestExtras(
        (ToolSpec("w", "", {"type": "object"}),), {"type": "auto"}, {"user_id": "u-42"}
    )
    messages = store.messages(chat.id)
    assert validate(messages) == []
    assert messages[3].blocks[1] == TextBlock(
        "[ContextDesk note: the input of tool call toolu_1 was not an object; it was: [1]]"
    )


@pytest.mark.parametrize("through", ["bytes", "file"])
@pytest.mark.parametrize(("raw", "expected"), BROKEN)
def test_a_broken_file_is_a_clear_error_and_changes_nothing(
    store: ChatStore, raw: bytes, expected: str, through: str
) -> None:
    sample_chat(store)
    before = db_fingerprint(store)

    def importing() -> object:
        return (
            import_chat(store, raw)
            if through == "bytes"
            else import_chat_file(store, io.BytesIO(raw))
        )

    with pytest.raises(ContextDeskError) as caught:
        importing()
    error = caught.value
    shown = f"{error.title}: {error.message}" + (
        "\n" + "\n".join(str(p) for p in error.problems)
        if isinstance(error, HistoryFormatError)
        else ""
    )
    assert expected in shown
    assert db_fingerprint(store) == before


def test_an_export_over_the_size_limit_is_read_message_by_message(
    store: ChatStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 100,000-message chat's file (~100 MB) is over the limit a file read whole keeps
    to; read as it goes, it imports as the whole file would — in chunks that cut
    messages, and characters, in two."""
    monkeypatch.setattr(exchange, "MAX_IMPORT_BYTES", 300)
    monkeypatch.setattr(streaming, "CHUNK", 7)
    chat_id = sample_chat(store)
    store.show_end(chat_id, store.messages(chat_id)[-2].id)
    store.append_message(chat_id, Message("assistant", (TextBlock("Or else 🙂 退款"),)))
    first = export_chat(store, chat_id, {"model": "claude-x", "messages": []})
    raw = json.dumps(first, ensure_ascii=False, indent=2).encode()
    with pytest.raises(ContextDeskError, match="File too large"):
        import_chat(store, raw)
    imported = import_chat_file(store, io.BytesIO(raw))
    second = export_chat(store, imported.chat.id, {"model": "claude-x", "messages": []})
    assert first["branches"]
    assert normalized(first) == normalized(second)


def test_a_broken_export_over_the_size_limit_says_so_and_changes_nothing(
    store: ChatStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(exchange, "MAX_IMPORT_BYTES", 100)
    sample_chat(store)
    before = db_fingerprint(store)
    head = '{"format": "contextdesk.chat", "version": 1, "chat": {"title": "Long"}, '
    one = '{"role": "user", "content": "%s"}' % ("a" * 200)
    for raw, expected in [
        (head + '"messages": [' + one + ", " + one[:50], "Not valid JSON"),
        (head + '"messages": [' + one + "]} and more", "more follows the object"),
        (head.replace('"version": 1', '"version": 7') + '"messages": [' + one + "]}", "version 7"),
        (head + '"messages": [' + one + ', {"role": "user", "content": 5}]}', "messages.1.content"),
        ('{"messages": [' + one + "]}", "File too large"),  # a request body: read whole
    ]:
        with pytest.raises(ContextDeskError) as caught:
            import_chat_file(store, io.BytesIO(raw.encode()))
        error = caught.value
        problems = error.problems if isinstance(error, HistoryFormatError) else []
        assert expected in f"{error.title}: {error.message} {' '.join(map(str, problems))}"
        assert db_fingerprint(store) == before


def test_an_export_read_as_it_goes_takes_what_a_whole_read_takes(
    store: ChatStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keys sorted (`jq -S`: "version" after "messages"), nesting too deep inside a
    message, a member given twice, bytes that are not UTF-8: each says, over the size
    limit, what reading the file whole says under it."""
    first = export_chat(store, sample_chat(store), {"model": "claude-x", "messages": []})
    sorted_keys = json.dumps(first, ensure_ascii=False, sort_keys=True).encode()
    deep = dict(first, messages=[{"role": "user", "content": [{"type": "x", "v": [[[[[[]]]]]]}]}])
    deep_raw = json.dumps(deep).replace("[[[[[[]]]]]]", "[" * 5000 + "]" * 5000).encode()
    twice = json.dumps(first)[:-1] + ', "messages": null}'
    for limit in (exchange.MAX_IMPORT_BYTES, 200):
        monkeypatch.setattr(exchange, "MAX_IMPORT_BYTES", limit)
        imported = import_chat_file(store, io.BytesIO(sorted_keys))
        again = export_chat(store, imported.chat.id, {"model": "claude-x", "messages": []})
        assert normalized(again) == normalized(first)
        with pytest.raises(ContextDeskError, match="Nested too deeply"):
            import_chat_file(store, io.BytesIO(deep_raw))
        with pytest.raises(ContextDeskError) as caught:  # the last "messages" counts
            import_chat_file(store, io.BytesIO(twice.encode()))
        assert caught.value.title == (
            "File too large" if limit == 200 else "This is not a valid conversation"
        )
    with pytest.raises(ContextDeskError, match="Not UTF-8 text"):
        import_chat_file(store, io.BytesIO(json.dumps(first).encode()[:300] + b"\xff" * 10))


def test_a_long_value_is_read_in_growing_pieces_not_parsed_again_per_chunk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 1 MB text cut in 1 KB chunks is not parsed a thousand times over (quadratic):
    each retry reads as much again as it holds."""
    monkeypatch.setattr(streaming, "CHUNK", 1024)
    attempts = []

    class Counting(json.JSONDecoder):
        def raw_decode(self, s: str, idx: int = 0) -> tuple[Any, int]:
            attempts.append(idx)
            return super().raw_decode(s, idx)

    raw = json.dumps({"format": "x", "messages": ["a" * 1_000_000, "b"]}).encode()
    members = dict(streaming.object_members(io.BytesIO(raw), (), Counting()))
    assert members["messages"][0] == "a" * 1_000_000
    assert len(attempts) < 40
    broken = raw.replace(b', "b"]', b', !b"]')  # said where it is in the file
    with pytest.raises(ValueError, match="Expecting value, near character 1,000,03"):
        dict(streaming.object_members(io.BytesIO(broken), (), Counting()))
    early = io.BytesIO(b'{"format": "x", "messages": [{"role": !}, ' + raw[20:])
    with pytest.raises(ValueError, match="Expecting value, near character 38 "):
        dict(streaming.object_members(early, (), Counting()))
    assert early.tell() < 10_000  # broken early: the rest of the file is never read


def test_a_huge_file_is_refused_before_parsing(
    store: ChatStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(exchange, "MAX_IMPORT_BYTES", 1000)
    with pytest.raises(ContextDeskError, match="File too large"):
        import_chat(store, b" " * 2000)
    assert store.list_chats() == []


def test_lone_surrogates_and_nul_bytes_are_imported_safely(store: ChatStore) -> None:
    doc = {
        "format": "contextdesk.chat",
        "version": 1,
        "chat": {"title": "bad \ud800 title", "model": "m"},
        "facts": [{"text": "fact \udfff", "fields": [["k", "v\ud800"]]}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "nul \u0000 and \ud83d half"}]}
        ],
    }
    result = import_chat(store, json.dumps(doc).encode())
    assert result.chat.title == "bad \ufffd title"
    assert store.context_state(result.chat.id).facts[0].text == "fact \ufffd"
    assert store.messages(result.chat.id)[0].text == "nul \u0000 and \ufffd half"
    assert any("lone surrogates" in r for r in result.repairs)


def test_exports_follow_the_published_json_schema(store: ChatStore) -> None:
    import jsonschema

    schema = json.loads(
        (
            Path(__file__).resolve().parents[2] / "resources" / "contextdesk.chat.schema.json"
        ).read_text()
    )
    jsonschema.Draft202012Validator.check_schema(schema)
    doc = export_chat(
        store,
        sample_chat(store),
        {"model": "m", "max_tokens": 10, "messages": []},
        lambda m: [1] * len(m.blocks),
    )
    jsonschema.validate(doc, schema)
    doc["messages"][0]["role"] = "robot"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)


FUZZ_EXAMPLES = int(os.environ.get("CONTEXTDESK_FUZZ_EXAMPLES", "150"))


@settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_fuzzed_exports_import_or_fail_cleanly(store: ChatStore, data: st.DataObject) -> None:
    if not store.list_chats():
        sample_chat(store)
    raw = bytearray(
        json.dumps(
            export_chat(store, store.list_chats()[-1].id, {"model": "m"}), ensure_ascii=False
        ).encode()
    )
    for _ in range(data.draw(st.integers(1, 4))):
        action = data.draw(st.sampled_from(["truncate", "flip", "insert"]))
        at = data.draw(st.integers(0, len(raw) - 1))
        if action == "truncate":
            del raw[at:]
            if not raw:
                raw = bytearray(b"{")
        elif action == "flip":
            raw[at] = data.draw(st.sampled_from(list(b'{}[]",:0\\\x00\xff ')))
        else:
            raw[at:at] = data.draw(
                st.sampled_from([b'"\\ud800"', b"[[[[", b"null", b'{"type": 5}'])
            )
    before = db_fingerprint(store)
    failure: ContextDeskError | None = None
    try:
        result = import_chat(store, bytes(raw))
    except ContextDeskError as error:
        failure = error  # a clear error is fine; anything else fails the test
    if failure is not None:
        assert failure.title
        assert failure.message
        assert db_fingerprint(store) == before
    else:
        imported = store.messages(result.chat.id)
        assert not imported or validate(imported) == []


def exported(store: ChatStore) -> dict[str, Any]:
    doc = export_chat(store, sample_chat(store), {}, lambda m: (), None)
    copy: dict[str, Any] = json.loads(json.dumps(doc))
    return copy


@pytest.mark.parametrize(
    ("where", "value", "path"),
    [
        (("facts",), "abc", "facts"),
        (("facts", 0, "pending"), "false", "facts.0.pending"),
        (("facts", 0, "fields"), {"a": 1}, "facts.0.fields"),
        (("facts", 0, "source"), "robot", "facts.0.source"),
        (("summaries",), 5, "summaries"),
        (("context",), "abc", "context"),
        (("context", "cleared_results"), [1, 2], "context.cleared_results.0"),
        (("chat", "settings"), "abc", "chat.settings"),
        (("chat", "settings", "compaction_threshold"), "0.5", "chat.settings.compaction_threshold"),
        (("chat", "settings", "auto_compact"), "false", "chat.settings.auto_compact"),
        (("chat", "settings", "context_window"), 10**30, "chat.settings"),
        (("chat", "settings", "max_tokens"), True, "chat.settings.max_tokens"),
    ],
)
def test_a_field_of_the_wrong_type_is_named_and_nothing_is_imported(
    store: ChatStore, where: tuple[Any, ...], value: Any, path: str
) -> None:
    doc = exported(store)
    doc.setdefault("facts", [{"text": "x"}])
    doc.setdefault("context", {})
    target: Any = doc
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    before = len(store.list_chats())
    with pytest.raises(HistoryFormatError) as raised:
        import_chat(store, json.dumps(doc).encode())
    assert any(p.path == path for p in raised.value.problems), raised.value.problems
    assert len(store.list_chats()) == before


def test_nan_and_infinity_are_not_json(store: ChatStore) -> None:
    text = json.dumps(exported(store)).replace(
        '"compaction_threshold": 0.87', '"compaction_threshold": NaN'
    )
    assert "NaN" in text
    with pytest.raises(ContextDeskError, match="NaN is not a JSON value"):
        import_chat(store, text.encode())
    with pytest.raises(ContextDeskError, match="Infinity"):
        import_chat(store, b'{"messages": [], "max_tokens": Infinity}')


def test_an_implausible_time_becomes_the_import_time(store: ChatStore) -> None:
    doc = exported(store)
    doc["messages"][0]["created_at"] = 1e30
    doc["messages"][1]["created_at"] = time.time() + 86_400  # tomorrow: damage too
    fact = doc["facts"][0]
    fact["created_at"], fact["updated_at"] = 1_780_000_000.0, "yesterday"
    doc["facts"][1].pop("created_at")  # edited, its making time lost
    doc["facts"][1]["updated_at"] = 1_780_000_000.0
    before = time.time()
    chat = import_chat(store, json.dumps(doc).encode()).chat
    read = store.messages(chat.id)
    assert before <= read[0].created_at <= time.time()
    assert before <= read[1].created_at <= time.time()  # now, not tomorrow
    facts = store.context_state(chat.id).facts
    assert (facts[0].created_at, facts[0].updated_at) == (1_780_000_000.0, 1_780_000_000.0)
    assert facts[1].updated_at >= facts[1].created_at  # never edited before it was made


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_only_regular_files_are_read_for_import(tmp_path: Path) -> None:
    from desktop_app.chats import Engine

    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    engine = Engine.open(tmp_path / "home")
    try:
        for path in (fifo, Path("/dev/zero")):  # a writer never comes; zeros never end
            with pytest.raises(ContextDeskError, match="not a regular file"):
                engine.import_file(path)
        big = tmp_path / "big.json"
        with big.open("wb") as handle:  # a request body over the limit: refused unread
            handle.write(b'{"messages": [{"role": "user", "content": "')
            handle.truncate(exchange.MAX_IMPORT_BYTES + 10)  # sparse: no disk needed
        with pytest.raises(ContextDeskError, match="the limit is 64 MB"):
            engine.import_file(big)
        with big.open("r+b") as handle:  # nothing of a chat: said at its first byte
            handle.write(b"\0" * 64)
        with pytest.raises(ContextDeskError, match="Not valid JSON"):
            engine.import_file(big)
    finally:
        engine.close()


def test_odd_values_where_names_belong_are_read_not_crashed_on(store: ChatStore) -> None:
    """A list where a role or a block type belongs (a JSON list is no dictionary key)."""
    body = {
        "messages": [
            {"role": ["user"], "content": "hi"},
            {"role": "system", "content": [{"type": ["text"], "text": "x"}]},
            {"content": "no role at all"},
        ]
    }
    result = import_chat(store, json.dumps(body).encode())
    report = "\n".join(result.repairs)
    assert "messages.0: read the unknown role \"['user']\" as 'user'" in report
    assert "messages.2: read a message with no role as 'user'" in report
    assert validate(store.messages(result.chat.id)) == []


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.sampled_from(
        [
            "user",
            "assistant",
            "system",
            "tool",
            "text",
            "tool_use",
            "tool_result",
            "thinking",
            "image",
            "server_tool_use",
            "toolu_1",
            "srvtoolu_1",
            '{"a": 1}',
            "",
        ]
    ),
)
_KEYS = st.sampled_from(
    [
        "role",
        "content",
        "type",
        "text",
        "id",
        "name",
        "input",
        "tool_use_id",
        "is_error",
        "thinking",
        "signature",
        "source",
        "data",
        "media_type",
        "tool",
    ]
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_JSON, max_size=5))
def test_any_request_body_imports_to_a_valid_history_or_a_clear_refusal(
    store: ChatStore, messages: list[Any]
) -> None:
    """Whatever another program wrote: no crash, and what is stored can be sent on."""
    try:
        result = import_chat(store, json.dumps({"messages": messages}).encode())
    except ContextDeskError:
        return  # refused, with its JSON path (what cannot be read at all)
    stored = store.messages(result.chat.id)
    assert not stored or validate(stored) == []
