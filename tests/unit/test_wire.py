"""Messages-API JSON ↔ typed blocks: exact round trips and path-named shape errors."""

from __future__ import annotations

import json

import pytest

from desktop_app.core.blocks import (
    ImageBlock,
    OpaqueBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    block_to_api,
    block_type,
)
from desktop_app.core.errors import HistoryFormatError
from desktop_app.core.messages import Usage
from desktop_app.core.wire import block_from_api, messages_from_api, usage_from_api

API_HISTORY = [
    {"role": "user", "content": [{"type": "text", "text": "Read notes.md 📄 请"}]},
    {
        "role": "assistant",
        "content": [
            {
                "type": "thinking",
                "thinking": "The user wants\nthe file.  ",
                "signature": "EqQBCkYIARgCIkB+/==",
            },
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDF"},
            {"type": "text", "text": "Reading it."},
            {
                "type": "tool_use",
                "id": "toolu_01A",
                "name": "read_file",
                "input": {"path": "notes.md", "lines": [1, 2]},
            },
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "hello"},
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01B",
                "content": [
                    {"type": "text", "text": "part"},
                    {
                        "type": "image",
                        "source": {
                            "type": "base64",
                            "media_type": "image/png",
                            "data": "iVBORw0KGgo=",
                        },
                    },
                ],
                "is_error": True,
            },
            {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": "doc"},
            },
        ],
    },
]


def test_api_history_round_trips_exactly() -> None:
    messages = messages_from_api(API_HISTORY)
    assert [m.to_api() for m in messages] == API_HISTORY


def test_thinking_round_trips_byte_for_byte() -> None:
    raw = '{"type": "thinking", "thinking": "Let me think\\u2026 \\ud83d\\ude00 \\n", "signature": "Sig+/=="}'
    block = block_from_api(json.loads(raw))
    assert isinstance(block, ThinkingBlock)
    assert json.dumps(block_to_api(block)) == raw
    assert (
        json.dumps(block_to_api(block), ensure_ascii=False).encode()
        == json.dumps(json.loads(raw), ensure_ascii=False).encode()
    )


def test_string_content_becomes_one_text_block() -> None:
    [msg] = messages_from_api([{"role": "user", "content": "hi"}])
    assert msg.blocks == (TextBlock("hi"),)


def test_unknown_block_types_are_kept_whole_without_cache_control() -> None:
    raw = {
        "type": "server_tool_use",
        "id": "srvtoolu_1",
        "name": "web_search",
        "input": {},
        "cache_control": {"type": "ephemeral"},
    }
    block = block_from_api(raw)
    assert block == OpaqueBlock(
        "server_tool_use",
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
    )
    assert block_type(block) == "server_tool_use"


def test_url_images_are_kept_as_they_are() -> None:
    raw = {"type": "image", "source": {"type": "url", "url": "https://example.invalid/cat.png"}}
    assert block_from_api(raw) == OpaqueBlock("image", raw)


def test_block_types() -> None:
    assert [block_type(b) for b in messages_from_api(API_HISTORY)[1].blocks] == [
        "thinking",
        "redacted_thinking",
        "text",
        "tool_use",
    ]
    assert isinstance(messages_from_api(API_HISTORY)[1].blocks[1], RedactedThinkingBlock)
    result = messages_from_api(API_HISTORY)[2].blocks[1]
    assert isinstance(result, ToolResultBlock)
    assert result.is_error
    assert result.text == "part"
    assert isinstance(result.content, tuple)
    assert isinstance(result.content[1], ImageBlock)


@pytest.mark.parametrize(
    ("data", "path", "message"),
    [
        ({"role": "user"}, "messages", "Input should be a valid list"),
        (
            [{"role": "system", "content": "x"}],
            "messages.0.role",
            "Input should be 'user' or 'assistant'",
        ),
        ([{"role": "user"}], "messages.0.content", "Field required"),
        (
            [{"role": "user", "content": 5}],
            "messages.0.content",
            "Input should be a valid list or string",
        ),
        (
            [{"role": "user", "content": [7]}],
            "messages.0.content.0",
            "Input should be a valid dictionary",
        ),
        (
            [{"role": "user", "content": [{"text": "x"}]}],
            "messages.0.content.0.type",
            "Field required",
        ),
        (
            [{"role": "user", "content": [{"type": "text", "text": 3}]}],
            "messages.0.content.0.text",
            "Input should be a valid string",
        ),
        (
            [
                {"role": "user", "content": "a"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t", "name": "x", "input": []}],
                },
            ],
            "messages.1.content.0.input",
            "Input should be a valid dictionary",
        ),
        (
            [
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t", "is_error": "yes"}],
                }
            ],
            "messages.0.content.0.is_error",
            "Input should be a valid boolean",
        ),
    ],
)
def test_shape_errors_name_their_json_path(data: object, path: str, message: str) -> None:
    with pytest.raises(HistoryFormatError) as caught:
        messages_from_api(data)
    first = caught.value.problems[0]
    assert first.path == path
    assert first.message.startswith(message)
    assert path in caught.value.message


def test_system_role_error_says_where_system_goes() -> None:
    with pytest.raises(HistoryFormatError) as caught:
        messages_from_api([{"role": "system", "content": "be nice"}])
    assert "top-level `system` field" in caught.value.problems[0].message


def test_all_shape_problems_are_listed_not_just_the_first() -> None:
    bad = [{"role": "bot", "content": "x"}, {"role": "user", "content": [{"type": "text"}]}]
    with pytest.raises(HistoryFormatError) as caught:
        messages_from_api(bad)
    assert [p.path for p in caught.value.problems] == [
        "messages.0.role",
        "messages.1.content.0.text",
    ]


def test_usage_from_api_tolerates_junk() -> None:
    assert usage_from_api(
        {"input_tokens": 5, "output_tokens": "7", "cache_read_input_tokens": -1}
    ) == Usage(input_tokens=5)
    assert usage_from_api(None) is None
    assert Usage(1, 2, 3, 4).prompt_tokens == 8


def test_tool_use_input_keeps_key_order() -> None:
    raw = {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "f",
        "input": {"z": 1, "a": {"y": 2, "b": 3}},
    }
    block = block_from_api(raw)
    assert isinstance(block, ToolUseBlock)
    assert json.dumps(block_to_api(block)) == json.dumps(raw)
