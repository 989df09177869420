"""The validator: every rule, its JSON path, and wording the API's 400s use."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop_app.core.blocks import (
    ImageBlock,
    OpaqueBlock,
    RedactedThinkingBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from desktop_app.core.messages import Message
from desktop_app.core.protocol import (
    clean_cut_points,
    is_clean_start,
    validate,
    validate_from,
)
from desktop_app.core.repair import repair
from tests.strategies import messy_histories
from tests.unit.builders import a, call, result, think, u


def problems(messages: list[Message]) -> list[str]:
    return [str(p) for p in validate(messages)]


def test_a_valid_history_has_no_problems() -> None:
    history = [
        u("hi"),
        a(think(), "let me look", call("toolu_1"), call("toolu_2")),
        u(result("toolu_1"), result("toolu_2", is_error=True), "and also this"),
        a(RedactedThinkingBlock("xx"), "done"),
        u("thanks", ImageBlock("image/png", "iVBORw0KGgo=")),
        a(),  # the optional empty final assistant message (prefill)
    ]
    assert validate(history) == []


def test_empty_request() -> None:
    assert problems([]) == ["messages: at least one message is required"]


def test_todays_api_accepts_a_history_that_starts_with_the_assistant() -> None:
    assert problems([a("hello"), u("hi")]) == []


def test_todays_api_merges_same_role_neighbours_into_one_turn() -> None:
    assert problems([u("a"), u("b"), a("c"), a("d"), u("e")]) == []


def test_a_merged_turn_is_checked_as_one() -> None:
    """Results split over two user messages answer one call each; a result after the
    merged turn's text is not first; thinking later in a merged assistant turn is not."""
    split = [
        u("go"),
        a(call("toolu_1"), call("toolu_2")),
        u(result("toolu_1")),
        u(result("toolu_2")),
    ]
    assert problems(split) == []
    late = [u("go"), a(call("toolu_1")), u("note"), u(result("toolu_1"))]
    assert problems(late) == [
        "messages.3.content.0: `tool_result` blocks must come first in the user message content"
    ]
    assert problems([u("go"), a("text"), a(think(), "more")]) == [
        "messages.1.content.0: If an assistant message contains any thinking blocks, the first "
        "block must be `thinking` or `redacted_thinking`. Found `text`."
    ]


def test_unanswered_tool_use_reads_like_the_api() -> None:
    history = [u("go"), a(call("toolu_01A"), call("toolu_01B")), u(result("toolu_01A"))]
    assert problems(history) == [
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01B. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    ]


def test_unanswered_tool_use_at_the_end() -> None:
    assert problems([u("go"), a(call("toolu_9"))])[0].startswith(
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_9."
    )


def test_tool_use_followed_by_assistant() -> None:
    found = problems([u("go"), a(call("toolu_9")), a("oops")])  # one turn: still unanswered
    assert any(p.startswith("messages.2: `tool_use` ids were found without") for p in found)


def test_orphan_result_reads_like_the_api() -> None:
    assert problems([u(result("toolu_X"))]) == [
        "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_X. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
    ]


def test_results_must_come_first() -> None:
    found = problems([u("go"), a(call("toolu_1")), u("note", result("toolu_1"))])
    assert found == [
        "messages.2.content.1: `tool_result` blocks must come first in the user message content"
    ]


def test_duplicate_result() -> None:
    found = problems([u("go"), a(call("toolu_1")), u(result("toolu_1"), result("toolu_1"))])
    assert found == [
        "messages.2.content.1: each `tool_use` must have a single result; found another for toolu_1"
    ]


def test_tool_use_ids_unique_and_well_formed() -> None:
    history = [
        u("go"),
        a(call("toolu_1")),
        u(result("toolu_1")),
        a(call("toolu_1"), call("bad id!")),
        u(result("toolu_1"), result("bad id!")),
    ]
    found = problems(history)
    assert "messages.3.content.0: `tool_use` ids must be unique" in found
    assert (
        "messages.3.content.1.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'" in found
    )


def test_blocks_in_the_wrong_role() -> None:
    assert problems([u(call("toolu_1"))]) == [
        "messages.0.content.0: `tool_use` blocks can only be in `assistant` messages"
    ]
    assert problems([u("q"), a(result("t"))]) == [
        "messages.1.content.0: `tool_result` blocks can only be in `user` messages"
    ]
    assert problems([u(think())]) == [
        "messages.0.content.0: thinking blocks can only be in `assistant` messages"
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "text content blocks must be non-empty"),
        (" \n\t", "text content blocks must contain non-whitespace text"),
    ],
)
def test_empty_text(text: str, expected: str) -> None:
    assert problems([u(TextBlock(text))]) == [f"messages.0.content.0: {expected}"]


def test_empty_text_inside_a_tool_result() -> None:
    history = [u("go"), a(call("toolu_1")), u(ToolResultBlock("toolu_1", (TextBlock(""),)))]
    assert problems(history) == [
        "messages.2.content.0.tool_result.content.0: text content blocks must be non-empty"
    ]


def test_empty_messages() -> None:
    expected = "messages.0: all messages must have non-empty content except for the optional final assistant message"
    assert problems([u()]) == [expected]
    assert any(
        p.startswith("messages.1: all messages must have non-empty")
        for p in problems([u("a"), a(), u("b")])
    )


def test_final_assistant_trailing_whitespace() -> None:
    assert problems([u("q"), a("answer \n")]) == [
        "messages.1: final assistant content cannot end with trailing whitespace"
    ]
    assert problems([u("q"), a("answer \n"), u("more")]) == []  # only the final message matters


def test_thinking_must_lead_and_keep_its_signature() -> None:
    assert problems([u("q"), a("text", think(), "more")]) == [
        "messages.1.content.0: If an assistant message contains any thinking blocks, the first "
        "block must be `thinking` or `redacted_thinking`. Found `text`."
    ]
    assert problems([u("q"), a(think(signature=""), "x")]) == [
        "messages.1.content.0.thinking.signature: Field required"
    ]


@pytest.mark.parametrize(
    ("message", "path"),
    [
        (u("ok \ud83d then"), "messages.0.content.0.text"),
        (u(ToolResultBlock("t", "\udc00")), None),
        (
            Message(role="user", blocks=(OpaqueBlock("document", {"title": "x\ud800"}),)),
            "messages.0.content.0.title",
        ),
    ],
)
def test_lone_surrogates_anywhere(message: Message, path: str | None) -> None:
    found = validate([message])
    surrogate = [p for p in found if "no low surrogate in string" in p.message]
    assert surrogate, found
    if path:
        assert surrogate[0].path == path


def test_lone_surrogate_in_tool_input_keys_and_values() -> None:
    history = [
        u("q"),
        a(ToolUseBlock("toolu_1", "f", {"pa\ud800th": "x", "v": ["ok", "\udfff"]})),
        u(result("toolu_1")),
    ]
    paths = [p.path for p in validate(history)]
    assert paths == ["messages.1.content.0.input", "messages.1.content.0.input.v.1"]


def test_surrogate_message_names_the_code_point() -> None:
    [problem] = validate([u("ab\ud83d")])
    assert "\\ud83d at character 2" in problem.message


def test_image_media_type_and_data() -> None:
    found = problems([u(ImageBlock("image/bmp", ""))])
    assert found == [
        "messages.0.content.0.image.source.base64.media_type: Input should be 'image/jpeg', "
        "'image/png', 'image/gif' or 'image/webp'",
        "messages.0.content.0.image.source.base64.data: image data must be non-empty",
    ]


def test_clean_cut_points_never_separate_a_call_from_its_result() -> None:
    history = [u("a"), a(call("toolu_1")), u(result("toolu_1")), a("b"), u("c"), a("d")]
    assert clean_cut_points(history) == [0, 4]
    assert not is_clean_start(history, 2)
    for cut in clean_cut_points(history):
        assert validate(history[cut:]) == []


def _document(cited: bool | None) -> OpaqueBlock:
    raw: dict[str, object] = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "Refunds in 30 days."},
    }
    if cited is not None:
        raw["citations"] = {"enabled": cited}
    return OpaqueBlock("document", raw)


def test_documents_cite_all_or_none() -> None:
    """The citations page: citations "must be enabled on all or none of the documents
    within a request" — a PDF attached before, beside one of today's."""
    assert problems([u(_document(True), "a"), a("b"), u(_document(True), "c")]) == []
    assert problems([u(_document(None), "a"), a("b"), u(_document(False), "c")]) == []
    mixed = problems([u(_document(None), "a"), a("b"), u(_document(True), "c")])
    assert mixed == [
        "messages.2.content.0.citations: Citations must be enabled on all or none of the "
        "documents within a request"
    ]


def test_a_paused_turn_goes_back_as_it_is_but_a_cut_reply_is_a_prefill() -> None:
    """`pause_turn`: the paused reply is sent back last (server-tools page), not refused
    as a prefill; a reply that searched and then ran out of tokens is a prefill."""
    searched = OpaqueBlock(
        "server_tool_use",
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
    )
    found = OpaqueBlock(
        "web_search_tool_result",
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
    )

    def last(stop_reason: str | None, *blocks: object) -> list[str]:
        reply = Message("assistant", tuple(blocks), stop_reason=stop_reason)  # type: ignore[arg-type]
        return [str(p) for p in validate([u("q"), reply], prefill=False)]

    assert last("pause_turn", TextBlock("Searching"), searched, found) == []
    assert last(None, TextBlock("Searching"), searched, found) == []  # (a body read back)
    assert last("max_tokens", searched, found, TextBlock("The answer is")) != []
    assert last(None, searched, found, TextBlock("The answer is")) != []


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messy_histories, messy_histories, st.integers(0, 12), st.booleans())
def test_checking_a_longer_history_on_from_where_it_stood_finds_what_checking_it_all_does(
    before: list[Message], after: list[Message], cut: int, same_turn: bool
) -> None:
    """A plan checks the whole history before every request: a turn longer, it goes on
    from the last check's point. The problems found are exactly the full check's —
    whatever the history before it (made valid, or not), whatever follows."""
    earlier = list(repair(before).messages) if before else []
    if same_turn and earlier and after:  # the new messages join the last turn
        after = [Message(earlier[-1].role, m.blocks) for m in after[:1]] + after[1:]
    earlier = earlier[: max(1, cut)] if earlier else earlier
    longer = [*earlier, *after]
    _problems, point = validate_from(earlier, None) if earlier else ([], None)
    for thinking, prefill in [(None, True), (True, False), (False, True)]:
        assert validate_from(longer, point, thinking=thinking, prefill=prefill)[0] == validate(
            longer, thinking=thinking, prefill=prefill
        )
    if point is not None:  # its last turn replaced: what follows may not start a turn
        replaced = [*point.history[: point.length], *after]
        assert validate_from(replaced, point)[0] == validate(replaced)
    # a history changed before the point (not the same objects) is checked whole
    if point is not None and point.history[: point.length] and after:
        changed = [*earlier[:-1], Message(earlier[-1].role, earlier[-1].blocks), *after]
        assert validate_from(changed, point)[0] == validate(changed)


def test_a_longer_history_is_checked_from_its_last_turn_on() -> None:
    history = [u("Order 1?"), a(call("toolu_1", order="1")), u(result("toolu_1")), a("Done.")]
    _none, point = validate_from(history, None)
    assert point is not None
    assert point.history[: point.length] == history[:3]  # before the last turn
    longer = [*history, u("And 2?"), a(call("toolu_1", order="2"))]  # an id used before
    assert validate_from(longer, point)[0] == validate(longer) != []


def test_what_the_whole_history_holds_is_kept_at_the_point_a_longer_one_goes_on_from() -> None:
    """Rules over the whole request — documents cite all or none, more than 20 images
    must each fit 2,000 px — count what came before the point too."""
    from tests.unit.test_repair import MANY_IMAGES_PNG  # type: ignore[attr-defined]

    cited = [u(_document(True), "a"), a("b"), u("c"), a("d")]
    _none, point = validate_from(cited, None)
    longer = [*cited, u(_document(False), "e")]
    assert validate_from(longer, point)[0] == validate(longer) != []
    wide = [u("see", *[ImageBlock("image/png", MANY_IMAGES_PNG)] * 15), a("ok"), u("c"), a("d")]
    _none, point = validate_from(wide, None)
    longer = [*wide, u("more", *[ImageBlock("image/png", MANY_IMAGES_PNG)] * 6)]
    assert validate_from(longer, point)[0] == validate(longer) != []
