"""A message's text as the conversation lays it out: bounded, so no message holds the
window. Qt lays a document out in one go on the GUI thread, and its cost grows with the
text (a 2,000-row table took seconds, a 1 MB line without spaces most of a minute). So
a long table shows its first rows and a long text its first characters, each followed
by a line saying how much more there is, with *Show all* — which opens the whole text in
a viewer that lays out only what is on screen. What is sent, copied and searched is
always the whole text."""

from __future__ import annotations

import re
from dataclasses import dataclass

SHOWN_CHARS = 20_000  # ≈25 ms to lay out even as one line without a space
TABLE_ROWS = 100  # a table longer than this shows its first TABLE_KEEP rows
TABLE_KEEP = 50
SHOW_ALL = "contextdesk:show-all"  # the link's address: the delegate answers it
VIEWER_LINE = 2_000  # the viewer shows longer lines in pieces of this many characters

_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


@dataclass(frozen=True, slots=True)
class Shown:
    """The text to lay out, and whether it is all of it."""

    text: str
    whole: bool


def shown_markdown(text: str) -> Shown:
    """`text` with each long table cut to its first rows and the whole cut to
    `SHOWN_CHARS`, each cut followed by a line with a *Show all* link."""
    lines = text.split("\n")
    kept: list[str] = []
    whole = True
    fenced = False  # inside ``` code, a table is code
    i = 0
    while i < len(lines):
        kept.append(lines[i])
        if lines[i].lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif (
            not fenced
            and i + 1 < len(lines)
            and "|" in lines[i]
            and _TABLE_RULE.match(lines[i + 1])
        ):
            rows = _table_rows(lines, i + 2)
            kept.append(lines[i + 1])
            if rows > TABLE_ROWS:
                kept.extend(lines[i + 2 : i + 2 + TABLE_KEEP])
                kept.extend(("", _more(f"{rows - TABLE_KEEP:,} more rows"), ""))
                whole = False
            else:
                kept.extend(lines[i + 2 : i + 2 + rows])
            i += 2 + rows
            continue
        i += 1
    folded = "\n".join(kept)
    if len(folded) <= SHOWN_CHARS:
        return Shown(folded, whole)
    cut = _cut(folded)
    rest = f"{len(text) - len(cut):,} more characters" if whole else "the rest"
    fences = sum(line.lstrip().startswith(("```", "~~~")) for line in cut.split("\n"))
    closed = "\n```" if fences % 2 else ""  # cut inside code: the link must be outside it
    return Shown(f"{cut}{closed}\n\n{_more(rest)}", False)


def shown_plain(text: str) -> Shown:
    """Plain text (a reply as it streams) cut to `SHOWN_CHARS`, the rest counted."""
    if len(text) <= SHOWN_CHARS:
        return Shown(text, True)
    cut = _cut(text)
    return Shown(f"{cut}\n… {len(text) - len(cut):,} more characters", False)


def in_pieces(text: str) -> str:
    """Text for the viewer: a line longer than `VIEWER_LINE` in pieces of that length
    (one line of a megabyte is laid out in one go even there)."""
    return "\n".join(
        "\n".join(line[k : k + VIEWER_LINE] for k in range(0, len(line), VIEWER_LINE)) or line
        for line in text.split("\n")
    )


def _table_rows(lines: list[str], start: int) -> int:
    rows = 0
    while start + rows < len(lines) and "|" in lines[start + rows] and lines[start + rows].strip():
        rows += 1
    return rows


def _cut(text: str) -> str:
    """The first `SHOWN_CHARS`, ending at a line's end when one is near."""
    head = text[:SHOWN_CHARS]
    end = head.rfind("\n", SHOWN_CHARS - 2_000)
    return head[:end] if end > 0 else head


def _more(what: str) -> str:
    return f"*… {what} —* [Show all]({SHOW_ALL})"
