"""Repair: every broken history becomes valid, nothing a person wrote is lost, all reported."""

from __future__ import annotations

import base64

from hypothesis import given, settings

from desktop_app.core.blocks import (
    ImageBlock,
    OpaqueBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from desktop_app.core.images import image_facts
from desktop_app.core.messages import Message
from desktop_app.core.protocol import validate
from desktop_app.core.repair import EMPTY_ERROR_NOTE, repair
from tests.strategies import MANY_IMAGES_PNG, ONE_PIXEL_PNG, WIDE_PNG, messy_histories
from tests.unit.builders import a, call, result, results_of, think, u


def fixed(history: list[Message]) -> tuple[list[Message], list[str]]:
    out = repair(history)
    assert validate(out.messages) == [], validate(out.messages)
    return list(out.messages), [str(r) for r in out.repairs]


def test_a_valid_history_is_returned_untouched() -> None:
    history = [u("hi"), a(call("toolu_1")), u(result("toolu_1")), a("done")]
    out = repair(history)
    assert not out.changed
    assert all(x is y for x, y in zip(out.messages, history, strict=True))


def test_an_unanswered_call_at_the_end_gets_an_interrupted_result() -> None:
    messages, report = fixed([u("go"), a("looking", call("toolu_1", "read_file"))])
    assert messages[-1].role == "user"
    [res] = messages[-1].blocks
    assert isinstance(res, ToolResultBlock)
    assert res.tool_use_id == "toolu_1"
    assert res.is_error
    assert "Interrupted: read_file did not return a result" in res.text
    assert report == [
        "messages.1: added an 'interrupted' error result for tool call toolu_1 (read_file) — "
        "every `tool_use` needs a `tool_result` in the next message"
    ]


def test_a_missing_result_is_put_first_in_the_next_user_message() -> None:
    messages, _ = fixed(
        [u("go"), a(call("toolu_1"), call("toolu_2")), u(result("toolu_2", "two"), "why so slow?")]
    )
    blocks = messages[2].blocks
    assert [type(b).__name__ for b in blocks] == ["ToolResultBlock", "ToolResultBlock", "TextBlock"]
    first, second = results_of(messages[2].with_blocks(blocks[:2]))
    assert [first.tool_use_id, second.tool_use_id] == ["toolu_1", "toolu_2"]
    assert first.is_error
    assert second.text == "two"
    assert blocks[2] == TextBlock("why so slow?")


def test_an_orphan_result_becomes_a_note_that_keeps_its_content() -> None:
    messages, report = fixed([u(result("toolu_gone", "the totals are 847.20"), "so?")])
    assert messages[0].blocks[0] == TextBlock(
        "[ContextDesk note: result of tool call toolu_gone: the totals are 847.20]"
    )
    assert messages[0].blocks[1] == TextBlock("so?")
    assert "no call in the previous message has its id" in report[0]


def test_an_error_result_with_nothing_in_it_is_flagged_and_given_a_note() -> None:
    """The API's own 400, hit by a tool that timed out (jlevy/markform#153)."""
    for empty in ("", "  ", ()):
        history = [u("go"), a(call("toolu_1")), u(ToolResultBlock("toolu_1", empty, True))]
        assert [str(p) for p in validate(history)] == [
            "messages.2.content.0.tool_result: content cannot be empty if `is_error` is true"
        ]
        messages, report = fixed(history)
        [res] = results_of(messages[2])
        assert (res.is_error, res.text) == (True, EMPTY_ERROR_NOTE)
        assert report == [
            "messages.2.content.0: gave the empty error result of tool call toolu_1 a note — "
            "content cannot be empty if `is_error` is true"
        ]
    ok = [u("go"), a(call("toolu_1")), u(ToolResultBlock("toolu_1", "", False))]
    assert validate(ok) == []  # an empty result that is not an error is accepted


SEARCH_CALL = OpaqueBlock(
    "server_tool_use",
    {
        "type": "server_tool_use",
        "id": "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
        "name": "web_search",
        "input": {"query": "claude shannon birth date"},
    },
)
SEARCH_RESULT = OpaqueBlock(
    "web_search_tool_result",
    {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
        "content": [
            {
                "type": "web_search_result",
                "url": "https://en.wikipedia.org/wiki/Claude_Shannon",
                "title": "Claude Shannon - Wikipedia",
                "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5",
                "page_age": "April 30, 2025",
            }
        ],
    },
)


def test_a_server_tool_result_needs_its_call_before_it_in_the_same_turn() -> None:
    """As the API words it (anthropics/claude-code#66944); server calls are not client
    tool calls: no `tool_result` is expected for them."""
    valid = [u("when was Shannon born?"), a(SEARCH_CALL, SEARCH_RESULT, "April 30, 1916.")]
    assert validate(valid) == []
    assert not repair(valid).changed
    split = [u("when was Shannon born?"), a(SEARCH_CALL), u("go on"), a(SEARCH_RESULT, "1916.")]
    assert [str(p) for p in validate(split)] == [
        "messages.1: `web_search` tool use with id `srvtoolu_01WYG3ziw53XMcoyKL4XcZmE` was "
        "found without a corresponding `web_search_tool_result` block",
        "messages.3.content.0: unexpected `tool_use_id` found in `web_search_tool_result` "
        "blocks: srvtoolu_01WYG3ziw53XMcoyKL4XcZmE. Each `web_search_tool_result` block "
        "must have a corresponding `server_tool_use` block before it.",
    ]
    messages, report = fixed(split)
    assert messages[1].blocks[0] == TextBlock(
        '[ContextDesk note: a web_search call with input {"query": "claude shannon birth date"} '
        "was made; no result came]"
    )
    assert messages[3].blocks[0] == TextBlock(
        "[ContextDesk note: a web_search_tool_result for srvtoolu_01WYG3ziw53XMcoyKL4XcZmE "
        "was here; its call was missing]"
    )
    assert messages[3].blocks[1] == TextBlock("1916.")
    assert "turned a `web_search_tool_result` whose call is missing into a note" in report[0]
    assert (
        "turned the web_search call srvtoolu_01WYG3ziw53XMcoyKL4XcZmE, whose result never came"
        in report[1]
    )


def test_a_paused_server_call_is_valid_while_its_turn_goes_on() -> None:
    """A server call without its result is accepted when the next message answers the
    same turn's client calls (recorded: tests/data/api_histories/accepted/022)."""
    paused = [u("look it up"), a(SEARCH_CALL, call("toolu_1")), u(result("toolu_1"))]
    assert validate(paused) == []
    assert [str(p) for p in validate([*paused, a("done"), u("thanks")])] == []
    ended = [u("look it up"), a("Searching.", SEARCH_CALL)]  # anthropic-sdk-python#1339
    assert [p.path for p in validate(ended)] == ["messages.1"]


def test_empty_blocks_and_messages_go() -> None:
    messages, report = fixed([u("hi", TextBlock("  ")), a(TextBlock("")), u("again")])
    assert messages == [messages[0]]
    assert messages[0].blocks == (TextBlock("hi"), TextBlock("again"))
    assert any("removed an empty text block" in r for r in report)
    assert any("removed an empty message" in r for r in report)
    assert any("merged into the user message before it" in r for r in report)


def test_trailing_whitespace_of_the_final_assistant_message_is_stripped() -> None:
    messages, report = fixed([u("q"), a("answer\n\n")])
    assert messages[-1].blocks == (TextBlock("answer"),)
    assert report == [
        "messages.1: removed trailing whitespace — final assistant content cannot end with trailing whitespace"
    ]


def test_lone_surrogates_are_replaced() -> None:
    messages, report = fixed([u("half an emoji \ud83d here")])
    assert messages[0].blocks == (TextBlock("half an emoji \ufffd here"),)
    assert report == [
        "messages.0.content.0: replaced lone surrogates with U+FFFD — every string must be valid UTF-8"
    ]


def test_same_role_neighbours_and_an_assistant_opening_are_valid_and_kept() -> None:
    history = [a("Hello! How can I help?"), u("one"), u("two"), a("three"), a("four")]
    assert tuple(repair(history).messages) == tuple(history)


def test_same_role_neighbours_are_merged_as_a_normalisation_when_repairing() -> None:
    messages, report = fixed([u("one"), u("two"), a("three  ")])
    assert [m.text for m in messages] == ["onetwo", "three"]
    assert report[0] == (
        "messages.1: merged into the user message before it — consecutive user messages form "
        "one turn (a normalisation: the API does the same)"
    )


def test_signed_thinking_is_never_moved_only_dropped_from_the_middle() -> None:
    signed = think("deep", "sig")
    messages, report = fixed([u("q"), a("text", signed, "more"), u("next")])
    assert messages[1].blocks == (TextBlock("text"), TextBlock("more"))
    assert "removed 1 thinking block(s) from the middle of an earlier turn" in report[0]
    kept = [u("q"), a(signed, "text", call("toolu_1")), u(result("toolu_1"))]
    assert tuple(repair(kept).messages) == tuple(kept)  # thinking leading its turn stays as it is


def test_duplicate_tool_ids_are_renamed_and_their_results_follow() -> None:
    history = [
        u("go"),
        a(call("toolu_1")),
        u(result("toolu_1", "first")),
        a(call("toolu_1")),
        u(result("toolu_1", "second")),
    ]
    messages, report = fixed(history)
    renamed = messages[3].blocks[0]
    assert isinstance(renamed, ToolUseBlock)
    new_id = renamed.id
    assert new_id != "toolu_1"
    assert messages[4].blocks[0] == ToolResultBlock(new_id, "second")
    assert any("gave tool call 'toolu_1' the new id" in r for r in report)


def test_tool_calls_in_a_user_message_become_notes_with_their_input() -> None:
    messages, _ = fixed([u("run this", call("toolu_1", "run", command="ls"))])
    assert messages[0].blocks[1] == TextBlock(
        '[ContextDesk note: call to tool run with input {"command": "ls"}]'
    )


def test_thinking_that_ends_a_reply_and_unsigned_thinking_are_dropped() -> None:
    messages, report = fixed([u("q"), a("text", think("deep", "sig"))])
    assert messages[1].blocks == (TextBlock("text"),)
    assert "from the middle of the turn still in progress" in report[0]
    messages, report = fixed([u("q"), a(think("half a thou", ""), "text")])
    assert messages[1].blocks == (TextBlock("text"),)
    assert "removed unsigned thinking (11 characters)" in report[0]


def test_an_image_with_a_wrong_media_type_is_recognised_from_its_data() -> None:
    messages, report = fixed([u(ImageBlock("image/jpg", "/9j/4AAQSkZJRg"))])
    assert messages[0].blocks == (ImageBlock("image/jpeg", "/9j/4AAQSkZJRg"),)
    assert "set the image type to image/jpeg" in report[0]


def test_repaired_messages_get_a_new_revision_and_keep_their_id() -> None:
    original = u("hi", TextBlock(""))
    [out] = repair([original]).messages
    assert out.id == original.id
    assert out.revision == original.revision + 1


def _user_texts(messages: list[Message]) -> list[str]:
    return [
        b.text.strip()
        for m in messages
        if m.role == "user"
        for b in m.blocks
        if isinstance(b, TextBlock) and b.text.strip()
    ]


@settings(max_examples=400, deadline=None)
@given(messy_histories)
def test_any_history_is_repaired_to_a_valid_one_without_losing_user_text(
    history: list[Message],
) -> None:
    out = repair(history)
    if not out.messages:  # only possible when there was nothing to keep
        assert _user_texts(history) == []
        droppable = TextBlock | ThinkingBlock | RedactedThinkingBlock | ImageBlock
        assert all(isinstance(b, droppable) for m in history for b in m.blocks)
        return
    assert validate(out.messages) == []
    repaired_text = "\n".join(
        b.text for m in out.messages for b in m.blocks if isinstance(b, TextBlock | ToolResultBlock)
    )
    for text in _user_texts(history):
        if any("\ud800" <= ch <= "\udfff" for ch in text):
            continue  # surrogates are replaced, by design
        assert text in repaired_text
    sent_images = [
        b
        for m in history
        if m.role == "user"
        for b in m.blocks
        if isinstance(b, ImageBlock) and image_facts(b.data).media_type
    ]
    kept_images = [b for m in out.messages for b in m.blocks if isinstance(b, ImageBlock)]
    assert len(kept_images) >= len(sent_images)  # every readable image is kept


@settings(max_examples=200, deadline=None)
@given(messy_histories)
def test_repair_is_idempotent(history: list[Message]) -> None:
    once = repair(history)
    assert not repair(once.messages).changed


def test_an_image_over_8000_px_is_scaled_down_and_one_that_cannot_be_read_becomes_a_note() -> None:
    messages, report = fixed([u("look", ImageBlock("image/png", WIDE_PNG))])
    image = messages[0].blocks[1]
    assert isinstance(image, ImageBlock)
    assert image_facts(image.data).size == (8000, 4)
    assert "scaled the image down to fit (8100×4 px" in report[0]
    header_only = base64.b64encode(
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + (9000).to_bytes(4, "big") * 2
    ).decode()
    messages, report = fixed([u("look", ImageBlock("image/png", header_only))])
    assert "too large to send, it could not be scaled" in messages[0].blocks[1].text  # type: ignore[union-attr]
    assert "replaced an image too large to send (9000×9000 px" in report[0]


def test_more_than_20_images_must_each_fit_2000_px() -> None:
    """claude-code#14412: the many-image limit, counted over the whole request."""
    history = [u("compare", *[ImageBlock("image/png", MANY_IMAGES_PNG)] * 21)]
    found = [str(p) for p in validate(history)]
    assert len(found) == 21
    assert found[0] == (
        "messages.0.content.1.image.source.base64.data: At least one of the image dimensions "
        "exceed max allowed size for many-image requests: 2000 pixels"
    )
    twenty = [u("compare", *[ImageBlock("image/png", MANY_IMAGES_PNG)] * 20)]
    assert validate(twenty) == []
    messages, report = fixed(history)
    sizes = {image_facts(b.data).size for b in messages[0].blocks if isinstance(b, ImageBlock)}
    assert sizes == {(2000, 4)}
    assert "when a request holds more than 20 images" in report[0]


def test_a_mislabelled_image_is_relabelled_from_its_bytes() -> None:
    messages, report = fixed([u("see", ImageBlock("image/jpeg", ONE_PIXEL_PNG))])
    assert messages[0].blocks[1] == ImageBlock("image/png", ONE_PIXEL_PNG)
    assert report == [
        "messages.0.content.1: set the image type to image/png (was 'image/jpeg') — The image "
        "was specified using the image/jpeg media type, but the image appears to be a "
        "image/png image"
    ]
