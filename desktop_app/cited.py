"""Answers that cite, in words the window and the command line share (as `said`).

The API splits a cited answer into many text blocks, each cited part its own block with
its `citations` (web search results, fetched pages, documents). Read as one text — the
blocks joined without a separator, as the citations page says — each cited part is
followed by a footnote mark that links to its source, and the sources are listed under
it; hovering a mark shows the passage cited. The web's own steps (a search, a fetch)
read as quiet lines of Claude's turn."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlparse

from desktop_app.core.blocks import OpaqueBlock, TextBlock

_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
CITE_SCHEME = "cite"  # a mark's link when its source has no address (a document's page)


@dataclass(frozen=True, slots=True)
class Source:
    """One source an answer cites: what the footnote lists and its mark's tooltip."""

    number: int
    title: str
    url: str  # "" for a document (its pages are not on the web)
    where: str  # "page 3", "pages 3–4", or ""
    passage: str  # the cited text

    @property
    def link(self) -> str:
        return self.url or f"{CITE_SCHEME}:{self.number}"


@dataclass(frozen=True, slots=True)
class CitedRun:
    """Consecutive text blocks read as one: its Markdown (marks and sources added), the
    blocks it stands for after the first, and its sources."""

    markdown: str
    others: tuple[int, ...]
    sources: tuple[Source, ...]


def mark(number: int) -> str:
    return str(number).translate(_SUPERSCRIPT)


def cited_runs(blocks: Sequence[object]) -> dict[int, CitedRun]:
    """Each run of consecutive text blocks with a citation, by its first block's index;
    the sources numbered once across the message (a mark means one source wherever it
    stands)."""
    runs: dict[int, CitedRun] = {}
    sources: dict[tuple[str, str, str, str], Source] = {}
    j = 0
    while j < len(blocks):
        if not isinstance(blocks[j], TextBlock):
            j += 1
            continue
        end = j
        while end < len(blocks) and isinstance(blocks[end], TextBlock):
            end += 1
        run = [b for b in blocks[j:end] if isinstance(b, TextBlock)]
        if any(b.citations for b in run):
            runs[j] = _joined(run, tuple(range(j + 1, end)), sources)
        j = end
    return runs


def _joined(
    run: list[TextBlock],
    others: tuple[int, ...],
    sources: dict[tuple[str, str, str, str], Source],
) -> CitedRun:
    """One run's Markdown: its text with a mark after each cited part, then its sources
    (numbered in `sources`, the message's)."""
    text = []
    used: list[Source] = []
    for block in run:
        text.append(block.text)
        marks: list[Source] = []
        for citation in block.citations:
            title, url, where = _origin(citation)
            passage = str(citation.get("cited_text") or "").strip()
            key = (title, url, where, passage)
            if key not in sources:
                sources[key] = Source(len(sources) + 1, title, url, where, passage)
            if sources[key] not in marks:
                marks.append(sources[key])
        text.extend(f"[{mark(s.number)}](<{_address(s.link)}>)" for s in marks)
        used += [s for s in marks if s not in used]
    listed = " · ".join(
        f"{mark(s.number)} [{_escaped(s.title)}](<{_address(s.link)}>)"
        + (f", {s.where}" if s.where else "")
        for s in used
    )
    markdown = "".join(text).rstrip() + f"\n\nSources: {listed}"
    return CitedRun(markdown, others, tuple(used))


def _address(link: str) -> str:
    """A link as a Markdown destination between < >: no space, bracket or newline in it."""
    return "".join(f"%{ord(c):02X}" if c in " <>\n" else c for c in link)


def _origin(citation: dict[str, object]) -> tuple[str, str, str]:
    """(title, address, where in it) of a citation, whichever kind it is."""
    url = str(citation.get("url") or "")
    title = str(citation.get("title") or citation.get("document_title") or "")
    title = title or (urlparse(url).netloc if url else "a document")
    start, end = citation.get("start_page_number"), citation.get("end_page_number")
    where = ""
    if isinstance(start, int):  # page_location: end is exclusive
        last = end - 1 if isinstance(end, int) and end - 1 > start else start
        where = f"page {start}" if last == start else f"pages {start}–{last}"
    return title, url, where


def _escaped(text: str) -> str:
    return text.replace("[", "\\[").replace("]", "\\]")


def passage_for(blocks: Sequence[object], link: str) -> str:
    """The tooltip of a footnote mark whose link is `link`: the source and what it says."""
    for run in cited_runs(blocks).values():
        for source in run.sources:
            if link in (source.link, _address(source.link)):
                where = f", {source.where}" if source.where else ""
                said = f"\n“{source.passage}”" if source.passage else ""
                return f"{source.title}{where}{said}"
    return ""


def web_step(block: OpaqueBlock) -> str:
    """The line a web search or fetch (or its result) reads as in Claude's turn; "" for
    other blocks."""
    raw = block.raw
    if block.type == "server_tool_use":
        given = raw.get("input") if isinstance(raw.get("input"), dict) else {}
        assert isinstance(given, dict)
        if raw.get("name") == "web_search":
            return f"Searched the web: “{given.get('query', '')}”"
        if raw.get("name") == "web_fetch":
            return f"Read a page: {given.get('url', '')}"
        return f"Ran {raw.get('name', 'a server tool')} on the API's side"
    content = raw.get("content")
    if block.type == "web_search_tool_result":
        if not isinstance(content, list):
            code = content.get("error_code", "an error") if isinstance(content, dict) else ""
            return f"↳ The search failed: {code}"
        found = [r for r in content if isinstance(r, dict)]
        if not found:
            return "↳ No results"
        names = ", ".join(
            f"{r.get('title', '')} ({urlparse(str(r.get('url', ''))).netloc})" for r in found[:3]
        )
        more = f" and {len(found) - 3} more" if len(found) > 3 else ""
        return f"↳ {len(found)} result{'s' * (len(found) != 1)}: {names}{more}"
    if block.type == "web_fetch_tool_result":
        if not isinstance(content, dict) or content.get("type") != "web_fetch_result":
            code = content.get("error_code", "an error") if isinstance(content, dict) else ""
            return f"↳ The page could not be read: {code}"
        document = content.get("content") if isinstance(content.get("content"), dict) else {}
        assert isinstance(document, dict)
        title = document.get("title") or content.get("url", "")
        return f"↳ Page read: {title}"
    return ""
