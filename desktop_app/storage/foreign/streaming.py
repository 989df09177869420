"""Reading a large JSON array one item at a time: a 1 GB `conversations.json` is a list
of conversations, and only one needs to be in memory at once. Standard library only: the
buffer is filled in chunks and `json.JSONDecoder.raw_decode` takes each whole item from
it (an item cut by a chunk's end is read again with the next chunk)."""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Collection, Iterator
from typing import IO, Any

CHUNK = 1 << 20
_DECODER = json.JSONDecoder()
_SPACE = " \t\r\n"


def array_items(stream: IO[bytes], on_read: Callable[[int], None] | None = None) -> Iterator[Any]:
    """Each item of the JSON array `stream` holds (`{"conversations": [...]}` too: the
    array under its one key), parsed; `on_read(n)` after each chunk of n bytes. Raises
    ValueError where the JSON is broken."""
    text = _Text(stream, on_read)
    text.skip_space()
    if text.peek() == "{":  # {"conversations": [ … ]}
        text.take("{")
        text.skip_space()
        text.item()  # its key
        text.skip_space()
        text.take(":")
        text.skip_space()
    yield from text.items()


def object_members(
    stream: IO[bytes],
    streamed: Collection[str],
    decoder: json.JSONDecoder = _DECODER,
    on_read: Callable[[int], None] | None = None,
) -> Iterator[tuple[str, Any]]:
    """Each member of the JSON object `stream` holds, in the file's order, as (key,
    value) — the value parsed, except an array under a key in `streamed`: an iterator
    of its items, each parsed as it is reached (read it to its end before asking for
    the next member); `on_read(n)` after each n bytes read. Raises ValueError where the
    JSON is broken (saying where in the file), or goes on after the object."""
    text = _Text(stream, on_read, decoder)
    text.skip_space()
    text.take("{")
    text.skip_space()
    more = text.peek() != "}"
    while more:
        key = text.item()
        if not isinstance(key, str):
            raise ValueError(f"a member's name expected, near character {text.where}")
        text.skip_space()
        text.take(":")
        text.skip_space()
        if key in streamed and text.peek() == "[":
            items = text.items()
            yield key, items
            for _unread in items:  # (what the caller left: the file reads on after it)
                pass
        else:
            yield key, text.item()
        text.skip_space()
        more = text.peek() == ","
        if more:
            text.take(",")
            text.skip_space()
    text.take("}")
    text.skip_space()
    if text.peek_or_end():
        raise ValueError(f"more follows the object, at character {text.where}")


class _Text:
    def __init__(
        self,
        stream: IO[bytes],
        on_read: Callable[[int], None] | None,
        decoder: json.JSONDecoder = _DECODER,
    ) -> None:
        self.stream = stream
        self.on_read = on_read
        self.decoder = decoder
        self.buffer = ""
        self.at = 0
        self.dropped = 0  # characters read and let go of, before the buffer
        self.done = False
        # (a character cut by a chunk's end waits for the rest of it)
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")()

    def _more(self, size: int = 0) -> bool:
        if self.done:
            return False
        raw = self.stream.read(size or CHUNK)
        if self.on_read is not None and raw:
            self.on_read(len(raw))
        if not raw:
            self.done = True
            self._decoder.decode(b"", final=True)  # raises if the file ends mid-character
            return False
        self.dropped += self.at
        self.buffer = self.buffer[self.at :] + self._decoder.decode(raw)
        self.at = 0
        return True

    @property
    def where(self) -> int:
        """How far into the file reading is, in characters."""
        return self.dropped + self.at

    def peek_or_end(self) -> str:
        """The next character, or "" at the end of the file."""
        while self.at >= len(self.buffer):
            if not self._more():
                return ""
        return self.buffer[self.at]

    def peek(self) -> str:
        while self.at >= len(self.buffer):
            if not self._more():
                raise ValueError("the file ends before the list does")
        return self.buffer[self.at]

    def skip_space(self) -> None:
        while True:
            while self.at < len(self.buffer) and self.buffer[self.at] in _SPACE:
                self.at += 1
            if self.at < len(self.buffer) or not self._more():
                return

    def take(self, char: str) -> None:
        if self.peek() != char:
            raise ValueError(
                f"{char!r} expected near character {self.where:,} of the file, at "
                f"{self.buffer[self.at : self.at + 20]!r}"
            )
        self.at += 1

    def items(self) -> Iterator[Any]:
        """The items of the array that starts here, each parsed as it is reached."""
        self.take("[")
        self.skip_space()
        if self.peek() == "]":
            self.take("]")
            return
        while True:
            yield self.item()
            self.skip_space()
            if self.peek() != ",":
                self.take("]")
                return
            self.take(",")
            self.skip_space()

    def item(self) -> Any:
        size = 0  # (a chunk)
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buffer, self.at)
            except json.JSONDecodeError as exc:
                # An item cut by the chunk's end (it breaks there, or in a string not
                # ended): read on — as much again as is held, so that a 50 MB value is
                # parsed a few times, not once per megabyte. Broken before: said at once.
                cut = exc.pos >= len(self.buffer) - 8 or exc.msg.startswith("Unterminated")
                if cut and self._more(size):
                    size = len(self.buffer) - self.at
                    continue
                where = self.dropped + exc.pos  # (the exception's own line is the buffer's)
                raise ValueError(f"{exc.msg}, near character {where:,} of the file") from None
            if end == len(self.buffer) and not self.done and self._more():
                continue  # a number may go on in the next chunk
            self.at = end
            return value
