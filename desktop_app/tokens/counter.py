"""Per-block token counts: cached, calibrated, and honest about being estimates.

There is no per-block count anywhere in the API, so every per-block number is a local
estimate. Counts are cached by content (a block counted once is never counted again) and
per message (an unchanged message costs one dictionary lookup), which keeps the live
meter cheap on long chats.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

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
from desktop_app.core.messages import Message, MessageStatus
from desktop_app.core.request import ChatRequest, SystemPart, ToolSpec
from desktop_app.tokens.calibration import (
    CJK,
    CODE,
    IMAGE,
    KINDS,
    PROSE,
    TOOL_JSON,
    Calibration,
)
from desktop_app.tokens.encoding import TextEncoder, load_encoder
from desktop_app.tokens.images import base64_image_tokens

# The encoding whose per-block counts are stored with the blocks (`remember`): another
# one (the heuristic, or a future encoding) neither stores nor reads them. A change of
# encoding needs a migration that forgets the stored counts.
STORED_ENCODING = "cl100k"

# Framing the API adds around content (roles, block headers): small, and folded into
# the calibration factor anyway, but they keep empty-ish blocks from counting as zero.
MESSAGE_OVERHEAD = 4
BLOCK_OVERHEAD = 3
TOOL_OVERHEAD = 12
REQUEST_OVERHEAD = 8

_CJK_CHARS = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]")
_FENCED = re.compile(r"```.*?(?:```|\Z)", re.S)
_CODE_SYMBOLS = re.compile(r"[{}()\[\];=<>]")
_KIND_INDEX = {kind: i for i, kind in enumerate(KINDS)}
Mix = tuple[int, ...]  # raw tokens by kind, in the order of calibration.KINDS


def text_kind(text: str) -> str:
    """What a piece of text mostly is, for calibration: CJK, code or prose."""
    if not text:
        return PROSE
    if len(_CJK_CHARS.findall(text)) * 4 >= len(text):
        return CJK
    fenced = sum(len(m) for m in _FENCED.findall(text)) if "```" in text else 0
    if fenced * 2 >= len(text):
        return CODE
    if "\n" in text.strip() and len(_CODE_SYMBOLS.findall(text)) * 16 >= len(text):
        return CODE
    return PROSE


def _looks_like_json(text: str) -> bool:
    head = text.lstrip()[:1]
    if head not in ("{", "["):
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class TokenFigure:
    """A token number and whether it is exact (reported by the API) or an estimate."""

    value: int
    exact: bool = False

    def __str__(self) -> str:
        return f"{self.value:,}" if self.exact else f"≈{self.value:,}"


class TokenCounter:
    """Counts text, blocks, messages and whole requests. Implements core's `TokenCounter`."""

    def __init__(
        self, encoder: TextEncoder | None = None, calibration: Calibration | None = None
    ) -> None:
        self._encoder = encoder
        self._loading = threading.Lock()
        self.calibration = calibration or Calibration()
        self._by_content: dict[object, int] = {}
        self._by_message: dict[str, tuple[tuple[Block, ...], tuple[int, ...]]] = {}
        # One tuple for each distinct set of counts (`_shared`): a long chat's messages
        # repeat a few thousand, and 100,000 tuples of their own held ~5 MB.
        self._shared_counts: dict[tuple[int, ...], tuple[int, ...]] = {}
        self._mix_by_message: dict[str, tuple[tuple[Block, ...], Mix]] = {}
        self._by_schema: dict[int, tuple[object, str]] = {}
        # Messages counted here whose counts are not stored yet (`to_store`): a set of the
        # few, not of the 100,000 read with their counts (4 MB at that size)
        self._unsaved: set[str] = set()
        # Replies' counts not learned from yet (`learn_from_usage_later`)
        self._lessons: deque[tuple[ChatRequest, int]] = deque()
        self._learning = threading.Lock()  # one lesson at a time, whichever thread learns

    @property
    def encoder(self) -> TextEncoder:
        """Loaded on first use (~0.3 s), so whoever counts first pays, not whoever builds
        the counter: the GUI builds it on its thread and counts first on a worker."""
        if self._encoder is None:
            with self._loading:
                if self._encoder is None:
                    self._encoder = load_encoder()
        return self._encoder

    @property
    def ready(self) -> bool:
        """Counting will not stop to load the encoding."""
        return self._encoder is not None

    # -- raw local estimates (before calibration) ------------------------------------------

    def text(self, text: str) -> int:
        count = self._by_content.get(text)
        if count is None:
            count = self._by_content[text] = self.encoder.count(text) if text else 0
        return count

    def block(self, block: Block) -> int:
        """One block's raw estimate, cached by its content."""
        if isinstance(block, TextBlock):
            return BLOCK_OVERHEAD + self.text(block.text)
        if isinstance(block, ThinkingBlock):
            return BLOCK_OVERHEAD + self.text(block.thinking)
        if isinstance(block, ToolUseBlock):
            return BLOCK_OVERHEAD + self.text(block.name) + self.text(json.dumps(block.input))
        if isinstance(block, ToolResultBlock):
            if isinstance(block.content, str):
                return BLOCK_OVERHEAD + self.text(block.content)
            return BLOCK_OVERHEAD + sum(self.block(part) for part in block.content)
        if isinstance(block, ImageBlock):
            key = ("image", block.data)
            count = self._by_content.get(key)
            if count is None:
                count = self._by_content[key] = base64_image_tokens(block.data)
            return count
        if isinstance(block, RedactedThinkingBlock):
            return BLOCK_OVERHEAD + len(block.data) // 4  # encrypted: length is all we know
        if block.type == "document":  # a PDF: its pages and text, not its base64's length
            source = block.raw.get("source")
            data = source.get("data") if isinstance(source, dict) else None
            # (its base64 text as the key: a str caches its hash, so a plan asks in O(1))
            key = ("document", data if isinstance(data, str) else json.dumps(block.raw))
            found = self._by_content.get(key)
            if found is None:
                from desktop_app.tokens.documents import document_tokens

                counted = document_tokens(block.raw, self.text)
                found = counted if counted is not None else self.text(json.dumps(block.raw))
                self._by_content[key] = found
            return BLOCK_OVERHEAD + found
        return BLOCK_OVERHEAD + self.text(json.dumps(block.raw))

    def blocks_of(self, message: Message) -> tuple[int, ...]:
        """Per-block raw estimates of a message; an unchanged message is one lookup."""
        memo = self._by_message.get(message.id)
        if memo is not None:
            if memo[0] is message.blocks:
                return memo[1]
            if memo[0] == message.blocks:  # the same blocks read again (an export, a
                self._by_message[message.id] = (message.blocks, memo[1])  # reload): held
                return memo[1]
        counts = self._shared(tuple(self.block(b) for b in message.blocks))
        self._by_message[message.id] = (message.blocks, counts)
        self._unsaved.add(message.id)
        return counts

    def message_as_sent(self, message: Message) -> int:
        """A message as one request sends it — its thinking stripped, merged with a
        neighbour: counted, but not kept under its id, which is a transcript message's
        (kept, it would displace that message's counts, to be counted and stored again
        after every plan)."""
        if self._by_message.get(message.id, (None,))[0] is message.blocks:
            return self.message(message)
        return MESSAGE_OVERHEAD + sum(self.block(b) for b in message.blocks)

    def forget(self, messages: Iterable[Message]) -> None:
        """Drop what is kept of these messages (their counts, and their texts' counts: the
        texts themselves): an import of thousands of chats counts each once, and holds
        none of them after."""
        for message in messages:
            self._by_message.pop(message.id, None)
            self._mix_by_message.pop(message.id, None)
            self._unsaved.discard(message.id)
            for block in message.blocks:
                if isinstance(block, TextBlock):
                    self._by_content.pop(block.text, None)

    def remember(self, messages: Iterable[Message], stored: Mapping[str, Sequence[int]]) -> int:
        """Take these messages' per-block counts as stored (made by this encoding before):
        a 100,000-message chat's first plan does not count it all again (8 s). Returns
        how many messages were taken."""
        if self.encoder.name != STORED_ENCODING:
            return 0
        taken = 0
        for message in messages:
            counts = stored.get(message.id)
            if counts is not None and len(counts) == len(message.blocks):
                self._by_message[message.id] = (message.blocks, self._shared(tuple(counts)))
                self._unsaved.discard(message.id)
                taken += 1
        return taken

    def _shared(self, counts: tuple[int, ...]) -> tuple[int, ...]:
        return self._shared_counts.setdefault(counts, counts)

    def to_store(self, messages: Iterable[Message]) -> dict[str, tuple[int, ...]]:
        """These messages' per-block counts made here and not stored yet, by id: only
        for these very blocks (a plan also counts its own versions of a message — a
        cleared result, a trimmed text — under the same id), never a streaming reply's.
        From then on they count as stored."""
        if not self._unsaved or not self.ready or self.encoder.name != STORED_ENCODING:
            return {}  # (a plan that counted nothing new: no walk over a long history)
        found: dict[str, tuple[int, ...]] = {}
        unsaved = self._unsaved
        for message in messages:
            if message.id not in unsaved or message.status is MessageStatus.STREAMING:
                continue
            memo = self._by_message.get(message.id)
            if memo is not None and memo[0] is message.blocks:
                found[message.id] = memo[1]
        unsaved.difference_update(found)
        return found

    def block_kind(self, block: Block) -> str:
        """The kind of content a block is, for calibration."""
        if isinstance(block, (TextBlock, ThinkingBlock)):
            return text_kind(block.text if isinstance(block, TextBlock) else block.thinking)
        if isinstance(block, ImageBlock):
            return IMAGE
        if isinstance(block, ToolResultBlock):
            text = block.content if isinstance(block.content, str) else ""
            if not isinstance(block.content, str):
                text = "\n".join(p.text for p in block.content if isinstance(p, TextBlock))
            return TOOL_JSON if _looks_like_json(text) else text_kind(text)
        if isinstance(block, ToolUseBlock):
            return TOOL_JSON
        if isinstance(block, OpaqueBlock) and block.type == "document":
            return IMAGE  # priced by its pages, as an image is: never scaled as text
        return PROSE

    def mix_of(self, message: Message) -> Mix:
        """A message's raw tokens by kind of content (cached like its counts)."""
        memo = self._mix_by_message.get(message.id)
        if memo is not None and memo[0] is message.blocks:
            return memo[1]
        mix = [0] * len(KINDS)
        mix[_KIND_INDEX[PROSE]] = MESSAGE_OVERHEAD
        for block, raw in zip(message.blocks, self.blocks_of(message), strict=True):
            if isinstance(block, ToolResultBlock) and not isinstance(block.content, str):
                images = sum(self.block(p) for p in block.content if isinstance(p, ImageBlock))
                mix[_KIND_INDEX[IMAGE]] += images
                raw -= images
            mix[_KIND_INDEX[self.block_kind(block)]] += raw
        result = tuple(mix)
        self._mix_by_message[message.id] = (message.blocks, result)
        return result

    def request_mix(self, request: ChatRequest) -> dict[str, int]:
        """The whole request's raw tokens by kind of content."""
        mix = [0] * len(KINDS)
        mix[_KIND_INDEX[PROSE]] = REQUEST_OVERHEAD
        for part in request.system:
            if part.text:
                mix[_KIND_INDEX[text_kind(part.text)]] += self.system((part,))
        mix[_KIND_INDEX[TOOL_JSON]] += self.tools(request.tools)
        for message in request.messages:
            for i, raw in enumerate(self.mix_of(message)):
                mix[i] += raw
        return {kind: raw for kind, raw in zip(KINDS, mix, strict=True) if raw}

    def message(self, message: Message) -> int:
        memo = self._by_message.get(message.id)  # (`blocks_of`'s lookup, inlined: every plan
        if memo is not None and memo[0] is message.blocks:  # asks it of every message)
            return MESSAGE_OVERHEAD + sum(memo[1])
        return MESSAGE_OVERHEAD + sum(self.blocks_of(message))

    def messages(self, messages: Iterable[Message]) -> int:
        return sum(self.message(m) for m in messages)

    def system(self, parts: Sequence[SystemPart]) -> int:
        return sum(self.text(p.text) + BLOCK_OVERHEAD for p in parts if p.text)

    def tools(self, specs: Sequence[ToolSpec]) -> int:
        return sum(
            TOOL_OVERHEAD
            + self.text(s.name)
            + self.text(s.description)
            + self.text(self._schema_json(s.input_schema))
            for s in specs
        )

    def _schema_json(self, schema: object) -> str:
        """A tool's schema as JSON, serialised once per schema object: a hundred MCP tools
        are planned on every keystroke, and their schemas do not change."""
        memo = self._by_schema.get(id(schema))
        if memo is not None and memo[0] is schema:  # (the entry keeps the object alive)
            return memo[1]
        text = json.dumps(schema)
        if len(self._by_schema) > 5_000:  # schemas rebuilt with every planner: keep it small
            self._by_schema.clear()
        self._by_schema[id(schema)] = (schema, text)
        return text

    def raw_request(self, request: ChatRequest) -> int:
        return (
            REQUEST_OVERHEAD
            + self.system(request.system)
            + self.tools(request.tools)
            + self.messages(request.messages)
        )

    # -- calibrated (totals only: a block's own count is never scaled) -----------------------

    def calibrated(self, raw: int, model: str) -> int:
        """A total scaled by the model's whole-request factor."""
        self.take_lessons()
        return round(raw * self.calibration.factor(model))

    def request_factor(self, request: ChatRequest) -> float:
        """The calibration for this request's mix of content (one lookup while the
        model has no factor per kind yet)."""
        self.take_lessons()
        if not self.calibration.factors(request.model):
            return self.calibration.factor(request.model)
        return self.calibration.blend(request.model, self.request_mix(request))

    def count_request(self, request: ChatRequest) -> int:
        """Estimated input tokens of the whole request, as the API would count them."""
        return round(self.raw_request(request) * self.request_factor(request))

    def learn_from_usage(self, request: ChatRequest, reported_prompt_tokens: int) -> float:
        """Calibrate with the API's exact count for `request` (usage.prompt_tokens)."""
        mix = self.request_mix(request)
        with self._learning:
            return self.calibration.learn(request.model, reported_prompt_tokens, mix)

    def learn_from_usage_later(self, request: ChatRequest, reported_prompt_tokens: int) -> None:
        """As `learn_from_usage`, by the next projection or estimate (`take_lessons`): a
        reply's count arrives on the window's thread, and the first lesson from a long
        chat reads every message's content for its mix (~40 ms at 5,000 messages), which
        the plan after the turn does on its own thread."""
        self._lessons.append((request, reported_prompt_tokens))

    def take_lessons(self) -> None:
        """Learn from the replies' counts waiting (`learn_from_usage_later`)."""
        while self._lessons:
            try:
                request, reported = self._lessons.popleft()
            except IndexError:  # another thread took the last one
                return
            self.learn_from_usage(request, reported)
