"""Token counting: offline cl100k, a CJK-aware fallback, per-block caching, images, calibration."""

from __future__ import annotations

import base64
import logging
import socket
import struct
import zlib
from pathlib import Path

import pytest

from desktop_app.core.blocks import (
    Block,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from desktop_app.core.messages import Message
from desktop_app.core.request import ChatRequest, SystemPart, ToolSpec
from desktop_app.tokens.calibration import Calibration, MemoryCalibrationStore
from desktop_app.tokens.counter import (
    MESSAGE_OVERHEAD,
    REQUEST_OVERHEAD,
    TokenCounter,
    TokenFigure,
    text_kind,
)
from desktop_app.tokens.encoding import (
    HEURISTIC,
    TextEncoder,
    bundled_encoding_path,
    heuristic_count,
    load_cl100k,
    load_encoder,
)
from desktop_app.tokens.errors import EncodingUnavailable
from desktop_app.tokens.images import image_size, image_tokens


@pytest.fixture(scope="module")
def cl100k() -> TextEncoder:
    return load_cl100k()


def test_cl100k_loads_with_every_socket_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("network is off in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr("desktop_app.tokens.encoding._built", None)  # built here, not before
    encoder = load_cl100k()
    assert encoder.exact_tokenizer
    assert encoder.count("hello world") == 2  # cl100k: "hello", " world"
    assert encoder.count("请尽快处理") > 0


def test_the_encoding_is_built_once_and_its_file_checked_every_time(tmp_path: Path) -> None:
    original = bundled_encoding_path()
    assert original is not None
    assert load_cl100k() is load_cl100k()  # every counter in a process shares one
    copy = tmp_path / "cl100k_base.tiktoken"
    copy.write_bytes(original.read_bytes())
    assert load_cl100k(copy) is load_cl100k()
    copy.write_bytes(original.read_bytes()[:-10] + b"0000000000")  # altered after a load
    with pytest.raises(EncodingUnavailable, match="SHA-256"):
        load_cl100k(copy)


def test_known_cl100k_counts(cl100k: TextEncoder) -> None:
    assert cl100k.count("") == 0
    assert cl100k.count("The quick brown fox jumps over the lazy dog.") == 10
    assert cl100k.count("hello world, 请尽快处理 🙂") == 11


def test_a_tampered_encoding_file_is_refused(tmp_path: Path) -> None:
    original = bundled_encoding_path()
    assert original is not None
    tampered = tmp_path / "cl100k_base.tiktoken"
    tampered.write_bytes(original.read_bytes()[:-10] + b"0000000000")
    with pytest.raises(EncodingUnavailable, match="SHA-256"):
        load_cl100k(tampered)


def test_the_fallback_is_announced_not_silent(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr("desktop_app.tokens.encoding.bundled_encoding_path", lambda: None)
    with caplog.at_level(logging.WARNING):
        encoder = load_encoder()
    assert encoder is HEURISTIC
    assert not encoder.exact_tokenizer
    assert "fall back to a character heuristic" in caplog.text


def test_the_heuristic_knows_cjk_from_latin(cl100k: TextEncoder) -> None:
    english = "Please process the refund for order 88213 before Friday."
    chinese = "请在周五之前处理订单八八二一三的退款事宜谢谢"
    assert heuristic_count(english) == pytest.approx(cl100k.count(english), rel=0.5)
    assert heuristic_count(chinese) == len(chinese)  # one token per ideograph
    assert heuristic_count(chinese) > heuristic_count(english[: len(chinese)])
    assert heuristic_count("") == 0


class CountingEncoder:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, text: str) -> int:
        self.calls += 1
        return len(text.split())


def test_blocks_are_counted_once_by_content() -> None:
    spy = CountingEncoder()
    counter = TokenCounter(TextEncoder("spy", spy, False))
    one = Message("user", (TextBlock("a b c"),))
    same_text = Message("user", (TextBlock("a b c"),))
    first = counter.message(one)
    calls = spy.calls
    assert counter.message(one) == first
    assert counter.message(same_text) == first
    assert spy.calls == calls  # cached by content, not by object


def test_a_message_as_sent_leaves_its_transcript_message_s_counts_kept(
    cl100k: TextEncoder,
) -> None:
    """A request's version of a message (thinking stripped) shares its id: counting it
    must not put it in the message's place, or the message would be counted again and
    its counts stored again after every plan."""
    counter = TokenCounter(cl100k)
    message = Message(
        "assistant", (ThinkingBlock("weighing it up", "sig"), TextBlock("The answer.")), id="m1"
    )
    history = [Message("user", (TextBlock("Why?"),), id="u1"), message]
    for m in history:
        counter.blocks_of(m)
    assert counter.to_store(history) == {
        "u1": counter.blocks_of(history[0]),
        "m1": counter.blocks_of(message),
    }
    as_sent = Message("assistant", (message.blocks[1],), id="m1")
    assert counter.message_as_sent(as_sent) == MESSAGE_OVERHEAD + counter.block(message.blocks[1])
    assert counter.message_as_sent(message) == counter.message(message)
    counter.blocks_of(message)  # the next plan: the transcript's message, as kept
    assert counter.to_store(history) == {}  # nothing counted anew, nothing stored again


def test_counts_read_from_the_store_are_not_stored_back(cl100k: TextEncoder) -> None:
    counter = TokenCounter(cl100k)
    history = [Message("user", (TextBlock("Kept before."),), id="u1")]
    assert counter.remember(history, {"u1": (7,)}) == 1
    assert counter.blocks_of(history[0]) == (7,)
    assert counter.to_store(history) == {}
    reply = Message("assistant", (TextBlock("New."),), id="a1")
    counter.blocks_of(reply)
    assert counter.to_store([*history, reply]) == {"a1": counter.blocks_of(reply)}


def test_messages_with_the_same_counts_share_one_tuple_of_them(cl100k: TextEncoder) -> None:
    """A long chat's 100,000 messages repeat a few thousand sets of counts: one tuple
    each, counted here or read from the store."""
    counter = TokenCounter(cl100k)
    stored = [Message("user", (TextBlock(f"Kept {n}."),), id=f"u{n}") for n in range(2)]
    assert counter.remember(stored, {"u0": [7], "u1": [7]}) == 2
    assert counter.blocks_of(stored[0]) is counter.blocks_of(stored[1])
    counted = [Message("assistant", (TextBlock("Same words."),), id=f"a{n}") for n in range(2)]
    assert counter.blocks_of(counted[0]) is counter.blocks_of(counted[1])


def test_every_block_type_has_a_count(cl100k: TextEncoder) -> None:
    counter = TokenCounter(cl100k)
    blocks: list[Block] = [
        TextBlock("hello"),
        ThinkingBlock("let me think about this", "sig"),
        ToolUseBlock("toolu_1", "read_file", {"path": "a.py"}),
        ToolResultBlock("toolu_1", "file contents here"),
        ToolResultBlock("toolu_1", (TextBlock("part"), ImageBlock("image/png", png(200, 150)))),
        ImageBlock("image/png", png(750, 100)),
    ]
    counts = [counter.block(b) for b in blocks]
    assert all(c > 0 for c in counts)
    assert counts[5] == 100  # 750 × 100 / 750
    assert counts[4] > 40  # the image inside the result counts too


def test_request_counts_include_system_and_tools(cl100k: TextEncoder) -> None:
    counter = TokenCounter(cl100k)
    bare = ChatRequest("m", (Message("user", (TextBlock("hi"),)),), 100)
    full = ChatRequest(
        "m",
        bare.messages,
        100,
        system=(SystemPart("You are a careful assistant. " * 10),),
        tools=(ToolSpec("read_file", "Read a file from the workspace", {"type": "object"}),),
    )
    assert counter.count_request(full) > counter.count_request(bare) + 60


def png(width: int, height: int) -> str:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    data = (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", len(ihdr))
        + chunk
        + struct.pack(">I", zlib.crc32(chunk))
    )
    return base64.b64encode(data).decode()


def test_image_sizes_from_headers() -> None:
    gif = base64.b64encode(b"GIF89a" + struct.pack("<HH", 320, 240) + b"\x00" * 10).decode()
    jpeg = base64.b64encode(
        b"\xff\xd8\xff\xe0"
        + struct.pack(">H", 16)
        + b"JFIF\x00"
        + b"\x00" * 9
        + b"\xff\xc0"
        + struct.pack(">HBHH", 17, 8, 480, 640)
        + b"\x00" * 12
    ).decode()
    webp = base64.b64encode(
        b"RIFF\x00\x00\x00\x00WEBPVP8X"
        + b"\x00" * 8
        + (99).to_bytes(3, "little")
        + (49).to_bytes(3, "little")
    ).decode()
    assert image_size(png(1024, 768)) == (1024, 768)
    assert image_size(gif) == (320, 240)
    assert image_size(jpeg) == (640, 480)
    assert image_size(webp) == (100, 50)
    assert image_size("bm90IGFuIGltYWdl") is None


def test_image_tokens_follow_the_api_formula_and_downscaling() -> None:
    assert image_tokens(1000, 750) == 1000
    assert image_tokens(200, 200) == 54  # ceil(40000 / 750)
    assert image_tokens(4000, 3000) == image_tokens(1568, 1176)  # scaled like the API does


def test_calibration_learns_per_model_and_persists() -> None:
    store = MemoryCalibrationStore()
    calibration = Calibration(store)
    assert calibration.factor("claude-a") == 1.0
    assert calibration.learn("claude-a", reported_prompt_tokens=1500, local_estimate=1000) == 1.5
    assert calibration.learn(
        "claude-a", reported_prompt_tokens=1300, local_estimate=1000
    ) == pytest.approx(1.4)
    assert calibration.factor("claude-b") == 1.0
    assert Calibration(store).factor("claude-a") == pytest.approx(1.4)  # persisted


def test_a_new_model_starts_from_its_tokenizers_measured_seed_then_what_its_family_learned() -> (
    None
):
    calibration = Calibration()
    # Before any reply: the published measurements (tokens/calibration.py, SEEDS).
    assert calibration.factor("claude-sonnet-5-5") == pytest.approx(1.55)
    assert calibration.factor("claude-sonnet-5-5", "prose") == pytest.approx(1.67)
    assert calibration.factor("claude-sonnet-5-5", "CJK") == pytest.approx(1.0)
    assert calibration.factor("claude-haiku-4-5") == pytest.approx(1.15)
    assert calibration.factor("qwen3:8b") == 1.0  # another server's model: no seed
    assert calibration.seeded("claude-sonnet-5-5")
    calibration.learn("claude-sonnet-5-5", reported_prompt_tokens=1800, local_estimate=1000)
    assert not calibration.seeded("claude-sonnet-5-5")
    # Opus 5.5 shares Sonnet 5.5's tokenizer: it starts from what was seen there…
    assert calibration.factor("claude-opus-5-5") == pytest.approx(1.8)
    # …and Haiku 4.5, of the older tokenizer, does not.
    assert calibration.factor("claude-haiku-4-5") == pytest.approx(1.15)


def test_calibration_rejects_nonsense() -> None:
    calibration = Calibration()
    assert calibration.learn("m", 0, 100) == 1.0
    assert calibration.learn("m", 100_000, 10) == 4.0  # clamped
    assert (
        Calibration(MemoryCalibrationStore({"m": 99.0})).factor("m") == 1.0
    )  # a corrupt value is ignored


def test_counter_applies_calibration_and_learns_from_usage(cl100k: TextEncoder) -> None:
    counter = TokenCounter(cl100k)
    request = ChatRequest(
        "claude-a", (Message("user", (TextBlock("hello there, how are you today?"),)),), 100
    )
    raw = counter.raw_request(request)
    counter.learn_from_usage(request, reported_prompt_tokens=raw * 2)
    assert counter.count_request(request) == raw * 2


def test_a_reply_s_count_is_learned_by_the_next_estimate_not_where_it_arrives(
    cl100k: TextEncoder,
) -> None:
    """A reply's count comes in on the window's thread; learning from it reads every
    message's content (~40 ms for a 5,000-message chat, which made Stop 69 ms): it waits
    for the next estimate — the plan after the turn, on its own thread — or for the close."""
    counter = TokenCounter(cl100k)
    request = ChatRequest(
        "claude-a", (Message("user", (TextBlock("hello there, how are you today?"),)),), 100
    )
    raw = counter.raw_request(request)
    counter.learn_from_usage_later(request, reported_prompt_tokens=raw * 2)
    assert counter.calibration.factor("claude-a") == 1.0  # nothing read yet
    assert counter.count_request(request) == raw * 2
    counter.learn_from_usage_later(request, reported_prompt_tokens=raw * 2)
    counter.take_lessons()  # (what closing the engine does: a command plans no more)
    assert counter.calibrated(raw, "claude-a") == raw * 2


def test_content_is_told_apart_for_calibration() -> None:
    assert text_kind("A plain sentence about the weather, nothing more.") == "prose"
    assert text_kind("Here:\n```python\ndef f(x):\n    return {x: [x * 2]}\n```") == "code"
    assert text_kind("for (i = 0; i < n; i++) {\n  a[i] = b[i];\n}") == "code"
    assert text_kind("請把這份合約的第三條翻譯成英文，謝謝。") == "CJK"
    assert text_kind("") == "prose"


def _one(model: str, block: Block) -> ChatRequest:
    return ChatRequest(model, (Message("user", (block,)),), 100)


def test_calibration_learns_each_kind_of_content_from_the_requests_that_hold_it(
    cl100k: TextEncoder,
) -> None:
    store = MemoryCalibrationStore()
    counter = TokenCounter(cl100k, Calibration(store))
    prose = _one("m", TextBlock("The meeting moved to Thursday afternoon, after lunch. " * 20))
    code = _one(
        "m", TextBlock("```python\n" + "total = sum(x[i] for i in range(n))\n" * 20 + "```")
    )
    prose_raw, code_raw = counter.raw_request(prose), counter.raw_request(code)
    counter.learn_from_usage(prose, round(prose_raw * 1.2))
    counter.learn_from_usage(code, round(code_raw * 1.8))
    factors = counter.calibration.factors("m")
    assert factors["prose"] == pytest.approx(1.2, abs=0.01)
    assert factors["code"] == pytest.approx(1.8, abs=0.01)
    # Each kind predicts its own requests, whatever was learned after it.
    assert counter.count_request(prose) == pytest.approx(prose_raw * 1.2, rel=0.02)
    assert counter.count_request(code) == pytest.approx(code_raw * 1.8, rel=0.02)
    # A request holding both is scaled by its mix; other models are untouched.
    both = ChatRequest("m", (*prose.messages, Message("assistant", code.messages[0].blocks)), 100)
    expected = prose_raw * 1.2 + (code_raw - REQUEST_OVERHEAD - MESSAGE_OVERHEAD) * 1.8
    assert counter.count_request(both) == pytest.approx(expected, rel=0.01)
    assert counter.calibration.factors("other") == {}
    assert Calibration(store).factors("m") == factors  # persisted
    # A store from before kinds were learned still gives its whole-request factor.
    assert Calibration(MemoryCalibrationStore({"m": 1.5})).factor("m", "code") == 1.5


def test_images_are_never_scaled_by_calibration(cl100k: TextEncoder) -> None:
    counter = TokenCounter(cl100k)
    text = Message("user", (TextBlock("What is in this picture, and who took it?"),))
    picture = Message("user", (ImageBlock("image/png", png(200, 100)),))
    request = ChatRequest("m", (text, picture), 100)
    mix = counter.request_mix(request)
    image = counter.blocks_of(picture)[0]
    assert mix["image"] == image
    text_raw = sum(mix.values()) - image
    counter.learn_from_usage(request, 2 * text_raw + image)  # the text was undercounted by half
    assert counter.calibration.factor("m", "image") == 1.0
    assert counter.calibration.factor("m", "prose") == pytest.approx(2.0, abs=0.01)


def test_figures_say_whether_they_are_exact() -> None:
    assert str(TokenFigure(1234)) == "≈1,234"
    assert str(TokenFigure(1234, exact=True)) == "1,234"


def test_the_encoding_loads_on_first_count_not_when_the_counter_is_built() -> None:
    counter = TokenCounter()
    assert not counter.ready  # building it (on the GUI thread) cost nothing
    assert counter.text("hello world") > 0
    assert counter.ready
