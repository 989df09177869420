"""MCP results as tool_result content, from the SDK's own result types (no server needed):
what structured content adds, and what it must never add."""

from __future__ import annotations

import base64
import json

from mcp_types import CallToolResult, TextContent

from desktop_app.tools.mcp_results import outcome
from tests.fakes.mcp_server import png


def test_structured_content_alone_is_sent_as_json() -> None:
    result = CallToolResult(content=[], structured_content={"rows": [1, 2]})
    assert json.loads(str(outcome(result).content)) == {"rows": [1, 2]}


def test_base64_image_data_in_structured_content_is_never_sent_as_text() -> None:
    data = base64.b64encode(png(64, 64)).decode()
    result = CallToolResult(
        content=[TextContent(type="text", text="Rendered.")],
        structured_content={"thumbnail": data, "url": f"data:image/png;base64,{data}", "n": 1},
    )
    sent = str(outcome(result).content)
    assert data not in sent
    assert sent.startswith("Rendered.")
    shown = json.loads(sent.removeprefix("Rendered.").strip())
    assert shown["n"] == 1
    assert shown["thumbnail"].startswith("[image/png image, ")
    assert shown["url"].endswith("not sent as text]")


def test_a_long_string_that_is_not_an_image_stays() -> None:
    text = "a" * 500
    result = CallToolResult(content=[], structured_content={"text": text})
    assert json.loads(str(outcome(result).content)) == {"text": text}
