"""The API's web tools as a request offers them to one model (core/server_tools.py)."""

from __future__ import annotations

from dataclasses import replace

from desktop_app.api.models import facts_with_listing
from desktop_app.core.model_facts import facts_for
from desktop_app.core.ports import ModelInfo
from desktop_app.core.server_tools import WebChoice, web_tools


def test_each_model_gets_the_versions_it_takes() -> None:
    both = WebChoice(search=True, fetch=True, max_uses=2, blocked_domains=("x.com",))
    newer = [t.to_api() for t in web_tools(both, facts_for("claude-opus-4-6"))]
    assert [t["type"] for t in newer] == ["web_search_20260318", "web_fetch_20260318"]
    assert all(t["allowed_callers"] == ["direct"] for t in newer)
    assert all(t["blocked_domains"] == ["x.com"] for t in newer)
    older = [t.to_api() for t in web_tools(both, facts_for("claude-opus-4-5"))]
    assert [t["type"] for t in older] == ["web_search_20250305", "web_fetch_20250910"]
    assert all("allowed_callers" not in t for t in older)
    assert web_tools(both, facts_for("llama3.2")) == ()  # another server's model


def test_a_model_the_models_api_says_takes_no_web_search_is_not_offered_it() -> None:
    listed = ModelInfo("claude-sonnet-5-5", "Sonnet", 1_000_000, 64_000, source="server")
    facts = facts_with_listing("claude-sonnet-5-5", replace(listed, web_search=False))
    offered = web_tools(WebChoice(search=True, fetch=True), facts)
    assert [t.name for t in offered] == ["web_fetch"]
    facts = facts_with_listing("claude-sonnet-5-5", listed)  # (it said nothing: the table's)
    assert [t.name for t in web_tools(WebChoice(search=True), facts)] == ["web_search"]
