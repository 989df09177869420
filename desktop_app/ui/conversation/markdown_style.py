"""A message's Markdown, made to read well: Qt's Markdown reader builds the document;
this styles what it leaves plain.

- Fenced code: room for a header strip (the language and a Copy button) and padding,
  wrapped instead of running past the column, coloured by Pygments.
- Inline code: a tinted background.
- Tables: collapsed borders, padding, a tinted header row, every cell aligned alike.
- HTML: shown as written (as Claude's own apps do). Qt's reader would drop the text
  after an HTML block, and an <img> in it would be loaded.
- Images: never loaded. Qt would open an image's path while laying the text out — any
  file, a FIFO (the window hangs), /dev/zero (memory runs out) — so a Markdown image is
  its alt text, a link to where it points; a message's pictures are its image blocks.

Laid out once per message layout (the delegate caches it by id, revision and width), so
scrolling never highlights again; a streaming reply is plain text until it is complete.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import (
    QColor,
    QFont,
    QGuiApplication,
    QImage,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextTable,
)

from desktop_app.ui import theme

# GitHub's Markdown, raw HTML kept as text
MARKDOWN = (
    QTextDocument.MarkdownFeature.MarkdownDialectGitHub
    | QTextDocument.MarkdownFeature.MarkdownNoHTML
)
HEADER_PX = 24  # the strip above the code: language on the left, Copy on the right
PAD_PX = 10
GAP_AFTER_PX = 8  # between a code block's frame and what follows it
PYGMENTS_STYLES = ("default", "github-dark")  # (light, dark); the page is theme's "code"
MAX_HIGHLIGHTED_CHARS = 30_000  # beyond this a block is shown uncoloured: layout stays fast
FOLD_LINES = 40  # a fenced block longer than this is folded…
FOLD_KEEP = 24  # …to its first lines, with "Show all N lines" in its header strip


@dataclass
class CodeBlock:
    """One fenced block of a document: its text as written (whole, even folded), its
    language (may be ""), and, once laid out, where it is (document coordinates, header
    strip included)."""

    language: str
    code: str
    first: int  # the document's block numbers it spans (as shown: folded, fewer)
    last: int
    top: float = 0.0
    bottom: float = 0.0
    folded: int = 0  # lines not shown (a long block shows its first FOLD_KEEP lines)
    key: int = -1  # its first block number before any folding: which block it is

    def __post_init__(self) -> None:
        if self.key < 0:
            self.key = self.first

    @property
    def lines(self) -> int:
        return self.code.count("\n") + 1

    @property
    def foldable(self) -> bool:
        return self.lines > FOLD_LINES


def style_code(
    doc: QTextDocument, dark: bool, unfolded: Collection[int] = (), *, colour: bool = True
) -> list[CodeBlock]:
    """Find and style the fenced code of `doc` (made by setMarkdown, after `style_text`:
    it takes lines out of tables, which would move the blocks found here); call `place`
    after `setTextWidth` to learn where each block ended up. A block of more than
    FOLD_LINES lines shows its first FOLD_KEEP, unless its `key` is in `unfolded` (the
    reader asked for all of it). Without `colour`, the code is framed but left plain:
    `colour_code` colours a block later (a long reply's code, a block per event)."""
    blocks: list[CodeBlock] = []
    block = doc.begin()
    while block.isValid():
        fmt = block.blockFormat()
        if not fmt.hasProperty(QTextFormat.Property.BlockCodeFence):
            block = block.next()
            continue
        language = fmt.stringProperty(QTextFormat.Property.BlockCodeLanguage)
        first = block
        lines = []
        # Qt leaves nothing between two fences a blank line apart: a new language
        # starts a new block (two fences of one language still read as one)
        while (
            block.isValid()
            and block.blockFormat().hasProperty(QTextFormat.Property.BlockCodeFence)
            and block.blockFormat().stringProperty(QTextFormat.Property.BlockCodeLanguage)
            == language
        ):
            lines.append(block.text())
            last = block
            block = block.next()
        blocks.append(
            CodeBlock(language, "\n".join(lines), first.blockNumber(), last.blockNumber())
        )
    # Last to first: folding one removes lines, which must not move those still to do
    for n in range(len(blocks) - 1, -1, -1):
        code = blocks[n]
        if code.foldable and code.key not in unfolded:
            _fold(doc, code)
            for later in blocks[n + 1 :]:
                later.first -= code.folded
                later.last -= code.folded
        _frame(doc, code.first, code.last)
        if colour:
            colour_code(doc, code, dark)
    return blocks


def colour_code(doc: QTextDocument, code: CodeBlock, dark: bool) -> None:
    """Highlight one framed block of `doc`'s code (as much of it as is shown). Colours,
    bold and italic only: in a fixed-pitch font no line's width changes, so the layout
    keeps its height."""
    shown = "\n".join(code.code.split("\n")[: code.last - code.first + 1])
    _colour(doc, doc.findBlockByNumber(code.first).position(), shown, code.language, dark)


def _fold(doc: QTextDocument, code: CodeBlock) -> None:
    """Keep the block's first FOLD_KEEP lines in the document (its `code` stays whole:
    Copy copies all of it); later blocks' numbers move up by the lines taken out."""
    keep_last = doc.findBlockByNumber(code.first + FOLD_KEEP - 1)
    end = doc.findBlockByNumber(code.last)
    cursor = QTextCursor(doc)
    cursor.setPosition(keep_last.position() + keep_last.length() - 1)
    cursor.setPosition(end.position() + end.length() - 1, QTextCursor.MoveMode.KeepAnchor)
    cursor.removeSelectedText()
    code.folded = code.last - code.first + 1 - FOLD_KEEP
    code.last = code.first + FOLD_KEEP - 1


def place(doc: QTextDocument, blocks: list[CodeBlock]) -> None:
    layout = doc.documentLayout()
    for code in blocks:
        first, last = doc.findBlockByNumber(code.first), doc.findBlockByNumber(code.last)
        # A block's bounding rect leaves out its margins: the frame takes them in.
        code.top = layout.blockBoundingRect(first).top() - first.blockFormat().topMargin()
        code.bottom = layout.blockBoundingRect(last).bottom() + PAD_PX


def background(dark: bool) -> QColor:
    return theme.tone("code", dark)


class OfflineDocument(QTextDocument):
    """A text document that reads no resource: from the disk, the network or a `data:`
    URL (what a message says is never a reason to open a file). Nobody edits it, so it
    keeps no undo history: colouring code, ruling tables and folding are edits, and
    recording them took half of a long reply's styling (330 → 190 ms at 19,000
    characters with 42 code blocks)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.setUndoRedoEnabled(False)

    def loadResource(self, kind: int, name: QUrl | str, /) -> Any:
        return QImage() if kind == QTextDocument.ResourceType.ImageResource.value else None


def images_as_links(doc: QTextDocument) -> int:
    """Every image Qt's Markdown reader made becomes "Image: alt" (words every font has)
    linking to its address, before anything lays the document out; returns how many."""
    images = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            if fragment.isValid() and fragment.charFormat().isImageFormat():
                images.append((fragment.position(), fragment.length(), fragment.charFormat()))
            it += 1
        block = block.next()
    link = QGuiApplication.palette().link()
    for position, length, fmt in reversed(images):  # from the end: positions stay put
        image = fmt.toImageFormat()
        alt = str(image.property(QTextFormat.Property.ImageAltText) or "").strip()
        text = QTextCharFormat()
        text.setAnchor(True)
        text.setAnchorHref(image.name())
        text.setToolTip(image.name())
        text.setForeground(link)
        text.setFontUnderline(True)
        cursor = QTextCursor(doc)
        cursor.setPosition(position)
        cursor.setPosition(position + length, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(f"Image: {alt}" if alt else "Image", text)
    return len(images)


def has_inline_code(text: str) -> bool:
    """Does Markdown `text` have `inline code` (a backtick outside a fence line)? Looking
    for it in the document walks every fragment: most of styling a long reply's text."""
    return "`" in text and any(
        "`" in line for line in text.split("\n") if not line.lstrip().startswith(("```", "~~~"))
    )


def style_text(doc: QTextDocument, dark: bool, *, inline_code: bool = True) -> None:
    """Inline code tinted (unless there is none), tables ruled and aligned (fenced code:
    `style_code`)."""
    tint = theme.tone("code_inline", dark)
    rule = theme.tone("rule", dark)
    block = doc.begin() if inline_code else doc.end()
    while block.isValid():
        if not block.blockFormat().hasProperty(QTextFormat.Property.BlockCodeFence):
            it = block.begin()
            while not it.atEnd():
                fragment = it.fragment()
                if fragment.isValid() and fragment.charFormat().fontFixedPitch():
                    cursor = QTextCursor(doc)
                    cursor.setPosition(fragment.position())
                    cursor.setPosition(
                        fragment.position() + fragment.length(), QTextCursor.MoveMode.KeepAnchor
                    )
                    fmt = QTextCharFormat()
                    fmt.setBackground(tint)
                    cursor.mergeCharFormat(fmt)
                it += 1
        block = block.next()
    for frame in doc.rootFrame().childFrames():
        if isinstance(frame, QTextTable):
            _rule(frame, tint, rule)


def _rule(table: QTextTable, tint: QColor, rule: QColor) -> None:
    fmt = table.format()
    fmt.setBorder(1)
    fmt.setBorderBrush(rule)
    fmt.setBorderCollapse(True)
    fmt.setCellSpacing(0)
    fmt.setCellPadding(6)
    table.setFormat(fmt)
    for row in range(table.rows()):
        for column in range(table.columns()):
            cell = table.cellAt(row, column)
            cell_format = cell.format().toTableCellFormat()
            cell_format.setVerticalAlignment(QTextCharFormat.VerticalAlignment.AlignTop)
            header = row < max(1, fmt.headerRowCount())
            if header:
                cell_format.setBackground(tint)
            cell.setFormat(cell_format)
            cursor = cell.firstCursorPosition()
            if not cursor.block().text() and cursor.block() != cell.lastCursorPosition().block():
                cursor.deleteChar()  # Qt's reader opens a header cell with an empty line
            if header:
                words = cell.firstCursorPosition()
                words.setPosition(
                    cell.lastCursorPosition().position(), QTextCursor.MoveMode.KeepAnchor
                )
                bold = QTextCharFormat()
                bold.setFontWeight(QFont.Weight.Bold)
                words.mergeCharFormat(bold)
            block_format = cursor.blockFormat()
            block_format.setAlignment(Qt.AlignmentFlag.AlignLeft)
            block_format.setTopMargin(0)
            block_format.setBottomMargin(0)
            cursor.setBlockFormat(block_format)


def _frame(doc: QTextDocument, first: int, last: int) -> None:
    """Padding around the code and room for the header strip; long lines wrap."""
    cursor = QTextCursor(doc)
    for number in range(first, last + 1):
        block = doc.findBlockByNumber(number)
        fmt = QTextBlockFormat(block.blockFormat())
        fmt.setNonBreakableLines(False)  # wrap in the column rather than run past it
        fmt.setLeftMargin(PAD_PX)
        fmt.setRightMargin(PAD_PX)
        fmt.setTopMargin(HEADER_PX if number == first else 0)
        fmt.setBottomMargin(PAD_PX + GAP_AFTER_PX if number == last else 0)
        cursor.setPosition(block.position())
        cursor.setBlockFormat(fmt)


def _colour(doc: QTextDocument, start: int, code: str, language: str, dark: bool) -> None:
    if not code or len(code) > MAX_HIGHLIGHTED_CHARS:
        return
    formats = _formats(dark)
    cursor = QTextCursor(doc)
    offset = 0
    for token, text in _lexer(language).get_tokens(code):
        fmt = formats(token)
        if fmt is not None and text.strip():
            cursor.setPosition(start + offset)
            cursor.setPosition(start + offset + utf16_length(text), QTextCursor.MoveMode.KeepAnchor)
            cursor.mergeCharFormat(fmt)
        offset += utf16_length(text)


def utf16_length(text: str) -> int:
    """`text`'s length as a document counts positions (UTF-16: an emoji is two)."""
    return len(text.encode("utf-16-le")) // 2


# The languages most replies' code is in: their lexers are made off the GUI thread after
# start-up (`warm_up_highlighting`). Making one compiles its rules: 10–110 ms each, paid
# by the first paint that shows such code — or by Stop, when a reply ends with it.
COMMON_LANGUAGES = ("python", "javascript", "typescript", "bash", "json")


def warm_up_highlighting() -> int:
    """Make the common languages' lexers now (on a worker): how many were made."""
    return len([_lexer(language) for language in COMMON_LANGUAGES])


@lru_cache(maxsize=64)
def _lexer(language: str) -> Any:
    """The lexer for a fence's language; plain text when Pygments does not know it (it
    never guesses: a wrong guess colours prose as code)."""
    from pygments.lexers import get_lexer_by_name
    from pygments.lexers.special import TextLexer
    from pygments.util import ClassNotFound

    try:
        # stripnl=False: the tokens' text must add up to the code, character for character
        return (
            get_lexer_by_name(language, stripnl=False, ensurenl=False) if language else TextLexer()
        )
    except ClassNotFound:
        return TextLexer()


@lru_cache(maxsize=2)
def _formats(dark: bool) -> Any:
    """Token type → the char format to merge (None: leave the text as it is)."""
    from pygments.styles import get_style_by_name

    style = get_style_by_name(PYGMENTS_STYLES[dark])
    made: dict[Any, QTextCharFormat | None] = {}

    def of(token: Any) -> QTextCharFormat | None:
        if token not in made:
            spec = style.style_for_token(token)
            fmt = QTextCharFormat()
            if spec["color"]:
                fmt.setForeground(QColor(f"#{spec['color']}"))
            if spec["bold"]:
                fmt.setFontWeight(QFont.Weight.Bold)
            if spec["italic"]:
                fmt.setFontItalic(True)
            made[token] = fmt if (spec["color"] or spec["bold"] or spec["italic"]) else None
        return made[token]

    return of
