"""A chat's title from a message: its plain words, not its Markdown. A title is read in
the chat list beside others, so code, links' addresses and markup characters are left
out; a message that is only code is named by its language ("Python code")."""

from __future__ import annotations

import re

TITLE_CHARS = 48  # about one line of the chat list
READ_CHARS = 2_000  # a title comes from the start; a 100 KB paste is not read for it

_FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+#.-]*)")  # a line that opens or closes code
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_AUTOLINK = re.compile(r"<(https?://[^>]+)>")
_LINE_MARK = re.compile(r"^\s*(?:#{1,6}\s+|>\s?|[-*+]\s+|\d+[.)]\s+|\|)+")
_EMPHASIS = re.compile(
    r"(\*\*|\*|~~|`+)(?=\S)(.+?)(?<=\S)\1"  # anywhere
    r"|(?<!\w)(__|_)(?=\S)(.+?)(?<=\S)\3(?!\w)"  # not inside a word: snake_case stays
)
_TABLE_RULE = re.compile(r"^[\s|:-]+$")


def plain_text(markdown: str) -> str:
    """The words of `markdown` on one line: fenced code, markup and addresses left out."""
    kept: list[str] = []
    in_code = False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            in_code = not in_code
            continue
        if in_code or _TABLE_RULE.match(line):
            continue
        if "```" in line:  # "Here is my code: ```python" opens a block
            line, _, rest = line.partition("```")
            in_code = "```" not in rest
        line = _IMAGE.sub(r"\1", line)
        line = _LINK.sub(r"\1", line)
        line = _AUTOLINK.sub(r"\1", line)
        line = _LINE_MARK.sub("", line).replace("|", " ")
        previous = None
        while previous != line:  # nested emphasis: **_word_**
            previous, line = line, _EMPHASIS.sub(lambda m: m.group(2) or m.group(4), line)
        kept.append(line)
    return " ".join(" ".join(kept).split())


def title_from(text: str, untitled: str, limit: int = TITLE_CHARS) -> str:
    """A title for a chat whose first message is `text` (`untitled` when it has no words),
    cut at a word within `limit` characters."""
    text = text[:READ_CHARS]
    words = plain_text(text)
    if not words:
        fence = next((m for m in map(_FENCE.search, text.splitlines()) if m), None)
        language = fence.group(2) if fence else ""
        words = f"{language.capitalize()} code" if language else ("Code" if fence else "")
    if not words:
        return untitled
    if len(words) <= limit:
        return words
    cut = words[: limit - 1].rsplit(" ", 1)[0] if " " in words[: limit - 1] else words[: limit - 1]
    return cut.rstrip(" ,;:-") + "…"
