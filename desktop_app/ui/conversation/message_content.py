"""What each block of a message shows (`block_content`, `thinking_content`): its laid-out
document, or none, and the line beside its chip — text as Markdown, a tool call and its
result as a step of the turn, thinking as reasoning or a note before a step."""

from __future__ import annotations

import json

from PySide6.QtGui import QFont, QTextDocument, QTextOption

from desktop_app.chats import image_size
from desktop_app.cited import web_step
from desktop_app.core.blocks import (
    ImageBlock,
    OpaqueBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from desktop_app.core.messages import Message
from desktop_app.ui.conversation.long_text import shown_markdown, shown_plain
from desktop_app.ui.conversation.markdown_style import MARKDOWN, OfflineDocument, images_as_links
from desktop_app.ui.conversation.message_words import (
    call_line,
    result_preview,
    result_text,
    tool_name,
)


def block_content(
    block: object,
    open_: bool,
    font: QFont,
    width: int,
    mono: QFont,
    call: ToolUseBlock | None = None,
) -> tuple[QTextDocument | None, bool, str]:
    """(document or None, can it be collapsed, text beside the chip); `mono`: the font
    arguments and results are shown in."""
    if isinstance(block, TextBlock):  # bounded: a long text shows its first part
        shown = shown_markdown(block.text)
        return make_document(shown.text, font, width, markdown=True), False, ""
    if isinstance(block, ToolUseBlock):
        if not open_:  # a step of the turn, said in a line; the arguments on a click
            return None, True, f"▸ {call_line(block)} — click for the arguments"
        arguments = json.dumps(block.input, indent=2, ensure_ascii=False)
        doc = make_document(shown_plain(arguments).text, mono, width)
        return doc, True, f"▾ Calls {tool_name(block.name)} — click to hide"
    if isinstance(block, ToolResultBlock):
        text = block.content if isinstance(block.content, str) else result_text(block.content)
        lines = text.count("\n") + 1
        # the step's second half: what the call (named) gave back
        what = f"↳ {tool_name(call.name)}" if call is not None else "↳ Result"
        what += " failed" if block.is_error else ""
        first = result_preview(text)
        if not open_:
            return None, True, f"▸ {what}: {lines:,} line{'s' * (lines != 1)} — {first}"
        doc = make_document(shown_plain(text).text, mono, width)
        return doc, True, f"▾ {what}: {lines:,} line{'s' * (lines != 1)} — click to hide"
    if isinstance(block, ImageBlock):
        size = image_size(block.data)
        return None, False, f"image, {size[0]}×{size[1]} px" if size else "image"
    if isinstance(block, RedactedThinkingBlock):
        return None, False, "redacted thinking (encrypted; sent back unchanged)"
    if isinstance(block, OpaqueBlock) and block.type == "document":
        title = block.raw.get("title") or "a document"
        source = block.raw.get("source")
        kind = source.get("media_type") if isinstance(source, dict) else None
        read = "Claude reads its pages" if kind == "application/pdf" else "sent whole"
        return None, False, f"Document: {title} — {read}"
    if isinstance(block, OpaqueBlock) and (step := web_step(block)):
        return None, False, step  # the web, searched or read by the API: a quiet step
    return None, False, "kept exactly as received"


def thinking_content(
    message: Message, j: int, block: ThinkingBlock, open_: bool, font: QFont, width: int
) -> tuple[QTextDocument | None, bool, str]:
    """Thinking as today's models send it: reasoning before the answer, or a note
    before a tool call (a quiet step of the turn); its text may be omitted by the
    model's `display` setting, and then only that it happened (and its tokens) is said."""
    after = message.blocks[j + 1] if j + 1 < len(message.blocks) else None
    note = j > 0 and isinstance(after, ToolUseBlock)
    text = block.thinking.strip()
    if not text:
        spent = message.usage.thinking_tokens if message.usage else 0
        tokens = f" · {spent:,} thinking tokens in this reply" if spent and not note else ""
        if note:
            return None, False, "✎ A note before the next step (its text is not shown)"
        return None, False, f"Thought — its text is not shown (display: omitted){tokens}"
    if note and "\n" not in text and len(text) <= 160:
        return None, False, f"✎ {text}"
    first = text.splitlines()[0][:80]
    if not open_:
        what = "✎ Note" if note else f"▸ Thinking, {len(text.split()):,} words"
        return None, True, f"{what} — {first}" if note else f"{what} — click to show"
    doc = make_document(shown_plain(block.thinking).text, font, width)
    return doc, True, "▾ Note — click to hide" if note else "▾ Thinking — click to hide"


def make_document(text: str, font: QFont, width: int, *, markdown: bool = False) -> QTextDocument:
    doc = OfflineDocument()
    doc.setDefaultFont(font)
    doc.setDocumentMargin(0)
    option = QTextOption()
    option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
    doc.setDefaultTextOption(option)
    if markdown:
        doc.setMarkdown(text, MARKDOWN)
        if "![" in text:  # (walking every fragment costs; only this makes an image)
            images_as_links(doc)
    else:
        doc.setPlainText(text)
    doc.setTextWidth(width)
    return doc
