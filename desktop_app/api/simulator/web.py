"""The simulator's web: the API's server tools (web search, web fetch) as the docs
describe them (platform.claude.com/docs/en/agents-and-tools/tool-use/web-search-tool,
…/web-fetch-tool, …/server-tools; SDK types `web_search_tool_result_block.py`,
`web_fetch_tool_result_block.py`, `citations_web_search_result_location.py`; read
2026-12-03): the checks a request's tool definitions must pass, and replies that search
or fetch offline — `server_tool_use`, its result in the same reply, then text whose
blocks cite what was found. Written apart from the client's side (core/server_tools.py)
so that a mistake on one side fails a test.
"""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any
from urllib.parse import urlparse

from desktop_app.api.simulator.script import Reply
from desktop_app.core.model_facts import facts_for

SEARCH_VERSIONS = ("web_search_20250305", "web_search_20260209", "web_search_20260318")
FETCH_VERSIONS = (
    "web_fetch_20250910",
    "web_fetch_20260209",
    "web_fetch_20260309",
    "web_fetch_20260318",
)
FIRST_VERSIONS = ("web_search_20250305", "web_fetch_20250910")
# Programmatic tool calling (what the newer versions call through by default) comes with
# Claude 4.6: Sonnet 4.6's `ModelFacts.generation`. (Apart from core/server_tools.py's.)
PROGRAMMATIC_FROM = 43
SEARCH_WORDS = ("search", "look up", "latest", "news", "today", "current", "web")
URL = re.compile(r"https?://[^\s)>\]]+")
# The offline web: a few pages, always the same, under example domains.
PAGES = (
    (
        "https://docs.example.org/release-notes",
        "Release notes | Example Docs",
        "Version 4.2 was released on 2026-11-30. It adds offline mode and fixes the sync bug.",
    ),
    (
        "https://news.example.com/2026/12/roundup",
        "December roundup | Example News",
        "The December roundup lists three releases; the largest is version 4.2 of Example.",
    ),
    (
        "https://blog.example.net/why-offline",
        "Why offline mode matters | Example Blog",
        "Offline mode keeps working without a network, which users asked for since 2024.",
    ),
)


def tools_problem(body: dict[str, Any]) -> str:
    """The 400 message for server tool definitions the API would refuse ("" if none)."""
    model = str(body.get("model", ""))
    facts = facts_for(model)
    for i, tool in enumerate(body.get("tools") or []):
        kind = tool.get("type") if isinstance(tool, dict) else None
        if not isinstance(kind, str) or kind == "custom":
            continue
        if kind not in (*SEARCH_VERSIONS, *FETCH_VERSIONS):
            continue  # another server tool: not this stand-in's to judge
        wanted = "web_search" if kind.startswith("web_search") else "web_fetch"
        if tool.get("name") != wanted:
            return f"tools.{i}.name: Input should be '{wanted}'"
        if tool.get("allowed_domains") and tool.get("blocked_domains"):
            return (
                f"tools.{i}: Cannot specify both allowed_domains and blocked_domains in the "
                "same request"
            )
        uses = tool.get("max_uses")
        if uses is not None and not (isinstance(uses, int) and uses >= 1):
            return f"tools.{i}.max_uses: Input should be greater than or equal to 1"
        newer = kind not in FIRST_VERSIONS
        direct = tool.get("allowed_callers") == ["direct"]
        if newer and not direct and 0 < facts.generation < PROGRAMMATIC_FROM:
            return (
                f"tools.{i}: {kind} defaults allowed_callers to code execution, which "
                f"'{model}' does not support; set allowed_callers to [\"direct\"]"
            )
    return ""


def offers_server_tools(body: dict[str, Any]) -> bool:
    """count_tokens refuses these (token-counting page)."""
    return any(
        isinstance(t, dict) and str(t.get("type", "")).startswith(("web_search_", "web_fetch_"))
        for t in body.get("tools") or []
    )


def web_reply(body: dict[str, Any], label: str) -> Reply | None:
    """A reply that searches or fetches, when the request offers the tool and the user's
    last words ask for it (a URL: fetch it; words like "search", "latest": search);
    None otherwise. One use per reply; its results are cited in the text that follows."""
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    if not isinstance(last, dict) or last.get("role") != "user":
        return None
    texts = [b for b in _blocks(last) if b.get("type") == "text"]
    if not texts or any(b.get("type") == "tool_result" for b in _blocks(last)):
        return None
    text = "\n".join(str(b.get("text", "")) for b in texts)
    offered = {
        str(t.get("name")): t
        for t in body.get("tools") or []
        if isinstance(t, dict) and str(t.get("type", "")).startswith(("web_search_", "web_fetch_"))
    }
    seq = hashlib.sha256(f"{len(messages)}:{text}".encode()).hexdigest()[:20]
    url = URL.search(text)
    if url and "web_fetch" in offered:
        return _fetch(url.group(0).rstrip(".,"), offered["web_fetch"], seq, label)
    if "web_search" in offered and any(w in text.lower() for w in SEARCH_WORDS):
        return _search(text, offered["web_search"], seq, label)
    return None


def _search(text: str, tool: dict[str, Any], seq: str, label: str) -> Reply:
    call_id = "srvtoolu_sim" + seq
    query = " ".join(text.split()[:8])
    pages = [p for p in PAGES if _allowed(p[0], tool)]
    results = [
        {
            "type": "web_search_result",
            "url": url,
            "title": title,
            "encrypted_content": _sealed(body),
            "page_age": "3 days ago",
        }
        for url, title, body in pages
    ]
    blocks: list[dict[str, Any]] = [
        {"type": "text", "text": f"{label}\nI'll search the web for that."},
        {"type": "server_tool_use", "id": call_id, "name": "web_search", "input": {"query": query}},
        {"type": "web_search_tool_result", "tool_use_id": call_id, "content": results},
    ]
    if not pages:
        blocks.append({"type": "text", "text": "Nothing came back from the allowed domains."})
        return Reply(tuple(blocks))
    joins = ("Here is what the web says: ", " Also: ")
    for join, (url, title, body) in zip(joins, pages, strict=False):
        cited = body.split(". ")[0].rstrip(".") + "."
        blocks.append({"type": "text", "text": join})
        blocks.append(
            {
                "type": "text",
                "text": cited,
                "citations": [
                    {
                        "type": "web_search_result_location",
                        "url": url,
                        "title": title,
                        "cited_text": cited,
                        "encrypted_index": _sealed(url),
                    }
                ],
            }
        )
    blocks.append({"type": "text", "text": " (Simulated search: these pages are examples.)"})
    return Reply(tuple(blocks))


def _fetch(url: str, tool: dict[str, Any], seq: str, label: str) -> Reply:
    call_id = "srvtoolu_sim" + seq
    page = next((p for p in PAGES if p[0] == url), None)
    text = page[2] if page else f"This is the offline simulator's copy of {url}."
    title = page[1] if page else urlparse(url).netloc
    call = {"type": "server_tool_use", "id": call_id, "name": "web_fetch", "input": {"url": url}}
    if not _allowed(url, tool):
        result: dict[str, Any] = {
            "type": "web_fetch_tool_result_error",
            "error_code": "url_not_allowed",
        }
        return Reply(
            (
                call,
                {"type": "web_fetch_tool_result", "tool_use_id": call_id, "content": result},
                {
                    "type": "text",
                    "text": f"{label}\nThe chat's domain rules do not let me read that.",
                },
            )
        )
    cites = bool((tool.get("citations") or {}).get("enabled"))
    document = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": text},
        "title": title,
    }
    if cites:
        document["citations"] = {"enabled": True}
    result = {
        "type": "web_fetch_result",
        "url": url,
        "retrieved_at": "2026-12-03T12:00:00Z",
        "content": document,
    }
    first = text.split(". ")[0].rstrip(".") + "."
    answer: dict[str, Any] = {"type": "text", "text": first}
    if cites:
        answer["citations"] = [
            {
                "type": "char_location",
                "document_index": 0,
                "document_title": title,
                "cited_text": first,
                "start_char_index": 0,
                "end_char_index": len(first),
            }
        ]
    return Reply(
        (
            {"type": "text", "text": f"{label}\nI'll read that page."},
            call,
            {"type": "web_fetch_tool_result", "tool_use_id": call_id, "content": result},
            {"type": "text", "text": "The page says: "},
            answer,
        )
    )


def server_tool_usage(content: list[dict[str, Any]]) -> dict[str, int] | None:
    """`usage.server_tool_use` for a reply's blocks (None when it ran none)."""
    calls = [b.get("name") for b in content if b.get("type") == "server_tool_use"]
    if not calls:
        return None
    return {
        "web_search_requests": calls.count("web_search"),
        "web_fetch_requests": calls.count("web_fetch"),
    }


def _allowed(url: str, tool: dict[str, Any]) -> bool:
    host = urlparse(url).netloc.lower()

    def under(domains: Any) -> bool:
        return any(host == d or host.endswith("." + d) for d in domains or ())

    if tool.get("allowed_domains"):
        return under(tool["allowed_domains"])
    return not under(tool.get("blocked_domains"))


def _sealed(text: str) -> str:
    """An opaque stand-in for the API's encrypted fields (sent back as they came)."""
    return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]
