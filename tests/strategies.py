"""Hypothesis strategies for histories, from well-formed to thoroughly broken."""

from __future__ import annotations

import base64
import io

from hypothesis import strategies as st

from desktop_app.core.blocks import (
    Block,
    ImageBlock,
    OpaqueBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from desktop_app.core.messages import Message

# Text that exercises what breaks chat apps: emoji, CJK, right-to-left, whitespace, and
# now and then a lone surrogate.
WORDS = [
    "hello",
    "847.20",
    "2026-04-13",
    "请退款",
    "مرحبا",
    "😀👍🏽",
    "path/to/x.py",
    " ",
    "\n",
    "\t",
]
texts = st.one_of(
    st.lists(st.sampled_from(WORDS), min_size=0, max_size=6).map("".join),
    st.text(max_size=12),
)
TOOL_IDS = ["toolu_1", "toolu_2", "toolu_3", "toolu_4", "bad id", ""]
tool_ids = st.sampled_from(TOOL_IDS)

text_blocks = texts.map(TextBlock)
thinking_blocks = st.builds(ThinkingBlock, texts, st.sampled_from(["sig==", ""]))
tool_uses = st.builds(
    ToolUseBlock,
    tool_ids,
    st.sampled_from(["read_file", "run", ""]),
    st.dictionaries(texts, texts, max_size=2),
)
tool_results = st.builds(
    ToolResultBlock,
    tool_ids,
    st.one_of(texts, st.lists(text_blocks, max_size=2).map(tuple)),
    st.booleans(),
)
ONE_PIXEL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def _png(width: int, height: int) -> str:
    """A real PNG of one colour, as base64 (Pillow writes it)."""
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (width, height), "teal").save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode("ascii")


WIDE_PNG = _png(8100, 4)  # over the API's 8,000 px: repair scales it down
MANY_IMAGES_PNG = _png(2100, 4)  # over 2,000 px: refused when a request has > 20 images
images = st.builds(
    ImageBlock,
    st.sampled_from(["image/png", "image/jpeg", "image/bmp", ""]),
    st.sampled_from(
        [ONE_PIXEL_PNG, WIDE_PNG, MANY_IMAGES_PNG, "iVBORw0KGgo=", "/9j/4AAQ", "zzzz", ""]
    ),
)
other_blocks = st.one_of(
    st.just(RedactedThinkingBlock("EmwKAh")),
    st.just(  # a server call whose id breaks ^srvtoolu_[a-zA-Z0-9_]+$
        OpaqueBlock(
            "server_tool_use",
            {"type": "server_tool_use", "id": "toolu-9", "name": "web_fetch", "input": {}},
        )
    ),
    st.just(  # a server tool's call and result (web search): the result needs the call
        OpaqueBlock(
            "server_tool_use",
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
        )
    ),
    st.just(
        OpaqueBlock(
            "web_search_tool_result",
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
        )
    ),
    st.just(
        OpaqueBlock("document", {"type": "document", "source": {"type": "text", "data": "doc"}})
    ),
)
any_block: st.SearchStrategy[Block] = st.one_of(
    text_blocks, thinking_blocks, tool_uses, tool_results, images, other_blocks
)

messy_messages = st.builds(
    lambda role, blocks: Message(role=role, blocks=tuple(blocks)),
    st.sampled_from(["user", "assistant"]),
    st.lists(any_block, max_size=5),
)
messy_histories = st.lists(messy_messages, max_size=12)
