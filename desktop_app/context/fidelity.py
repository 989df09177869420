"""The fidelity check: which hard facts of a span did its summary lose?

Summaries blur exactly what is needed later: "$847.20, order #88213, due Friday" becomes
"a large order". Before a summary is accepted we extract the span's hard
facts — amounts and numbers, dates, ticket/order/commit ids, paths, URLs, e-mail
addresses, quoted names — and list those found in neither the summary nor the pinned
facts. The preview shows them; auto-compaction retries once naming them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_PATTERNS = [
    re.compile(r"https?://[^\s<>()\"'\]]+[^\s<>()\"'\].,;:!?]"),  # URLs
    re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"),  # e-mail addresses
    re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b"),  # ISO dates, times
    re.compile(r"\b\d{1,2}/\d{1,2}/\d{2,4}\b"),  # 14/03/2026
    re.compile(r"(?<![\w/:.])(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]*[\w-]"),  # paths with a slash
    re.compile(
        r"\b[\w-]+\.(?:py|js|ts|json|md|txt|sql|yaml|yml|toml|csv|html|css|go|rs|java|c|h|cpp)\b"
    ),
    re.compile(r"#\d{2,}\b"),  # #88213
    re.compile(r"\b[A-Z][A-Z0-9]{0,9}-\d+\b"),  # ISSUE-1, C-20931, JIRA-123
    re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b"),  # commit hashes
    re.compile(r"[$€£¥]\s?(\d[\d,]*(?:\.\d+)?)"),  # amounts with a currency sign
    re.compile(r"(?<![\w.-])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w-])"),  # 1,234,567.89
    re.compile(r"(?<![\w.-])\d+\.\d+(?![\w-])"),  # 847.20
    re.compile(r"(?<![\w.#/-])\d{3,}(?![\w./-])"),  # bare numbers of 3+ digits
    # "Quoted Names": capitalised or non-Latin, and not a JSON key ("total": …)
    re.compile(r"[\"“]((?=[A-Z\u00c0-\uffff])[^\"”\n]{2,60})[\"”](?!\s*:)"),
]


def hard_facts(text: str) -> list[str]:
    """The hard facts in `text`, in order of first appearance, without duplicates or
    items contained in a longer item already found (a date inside a path, say)."""
    found: dict[str, int] = {}
    for pattern in _PATTERNS:
        for match in pattern.finditer(text):
            item = (match.group(1) if match.groups() else match.group(0)).strip()
            if item and item not in found:
                found[item] = match.start()
    items = sorted(found, key=lambda k: found[k])
    return [i for i in items if not any(i != other and i in other for other in items)]


def missing_facts(source: str, summary: str, kept_elsewhere: Iterable[str] = ()) -> list[str]:
    """Hard facts of `source` that appear in neither `summary` nor `kept_elsewhere`
    (the pinned facts)."""
    haystack = "\n".join([summary, *kept_elsewhere])
    return [item for item in hard_facts(source) if item not in haystack]
