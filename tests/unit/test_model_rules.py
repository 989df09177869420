"""What each model takes: the table, the thinking choice as each model takes it, the
request rules per model, and thinking blocks bound to their model and prefix."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from desktop_app.api.models import BUILTIN_MODELS, facts_with_listing
from desktop_app.context.chat_settings import thinking_fields
from desktop_app.core.binding import request_prefix, sendable_thinking
from desktop_app.core.blocks import TextBlock, ThinkingBlock
from desktop_app.core.messages import Message
from desktop_app.core.model_facts import clamp_effort, facts_for, reads_thinking_of
from desktop_app.core.ports import ModelInfo
from desktop_app.core.request_rules import body_problems
from desktop_app.core.thinking import ThinkingChoice, fitted, options, setup

CURRENT = [
    "claude-opus-5-5",
    "claude-sonnet-5-5",
    "claude-haiku-5-5",
    "claude-fable-5-2",
    "claude-opus-5",
    "claude-sonnet-5",
    "claude-opus-4-8",
    "claude-opus-4-7",
    "claude-opus-4-6",
    "claude-sonnet-4-6",
    "claude-haiku-4-5",
]
HI = [{"role": "user", "content": "hi"}]


def test_the_table_has_todays_limits() -> None:
    sonnet = facts_for("claude-sonnet-5-5")
    assert (sonnet.context_window, sonnet.max_output) == (1_000_000, 128_000)
    assert (facts_for("claude-haiku-4-5-20251001").max_output, sonnet.source) == (64_000, "table")
    assert facts_for("claude-haiku-4-5-20251001").id == "claude-haiku-4-5-20251001"
    assert BUILTIN_MODELS[0].id == "claude-opus-5-5"
    fives = [m for m in BUILTIN_MODELS if m.id.split("-")[2] == "5"]
    assert fives
    assert all(m.max_output == 128_000 for m in fives)


def test_the_servers_word_wins_and_unknown_models_are_guessed_safely() -> None:
    listed = ModelInfo(
        "claude-sonnet-5-5",
        "Sonnet",
        900_000,
        100_000,
        frozenset({"adaptive"}),
        ("low",),
        source="server",
    )
    facts = facts_with_listing("claude-sonnet-5-5", listed)
    assert (facts.context_window, facts.max_output, facts.source) == (900_000, 100_000, "server")
    assert facts.thinking_types == frozenset({"adaptive"})
    assert facts.efforts == ("low",)
    assert not facts.prefill  # what no endpoint says stays the table's
    future = facts_for("claude-opus-6")
    assert (future.source, future.prefill, future.forced_tool_choice, future.prefix_binding) == (
        "guess",
        False,
        False,
        True,
    )
    local = facts_for("qwen3:8b")  # Ollama and the like: no thinking field at all
    assert (local.thinking_types, local.prefill, local.source) == (frozenset(), True, "guess")
    assert setup(local, ThinkingChoice("adaptive"), 4096).thinking is None


@pytest.mark.parametrize("model", CURRENT)
@pytest.mark.parametrize(
    "choice",
    [
        ThinkingChoice("adaptive"),
        ThinkingChoice("adaptive", "max"),
        ThinkingChoice("adaptive", "xhigh", display="omitted"),
        ThinkingChoice("off"),
        ThinkingChoice("off", "max"),
        ThinkingChoice("budget", budget=2048),
        ThinkingChoice("budget", "low", budget=100_000),
    ],
    ids=lambda c: f"{c.mode}-{c.effort or 'default'}-{c.budget}-{c.display}",
)
def test_no_choice_becomes_a_request_the_model_refuses(model: str, choice: ThinkingChoice) -> None:
    facts = facts_for(model)
    done = setup(facts, choice, 8192)
    body = {"model": model, "max_tokens": 8192, "messages": HI}
    if done.thinking is not None:
        body["thinking"] = done.thinking
    if done.effort:
        body["output_config"] = {"effort": done.effort}
    assert body_problems(body) == []


def test_each_model_gets_its_own_off_and_its_own_budget() -> None:
    off = ThinkingChoice("off")
    assert setup(facts_for("claude-sonnet-5-5"), off, 4096).thinking == {"type": "between_tools"}
    assert setup(facts_for("claude-haiku-5-5"), off, 4096).thinking == {"type": "disabled"}
    assert setup(facts_for("claude-haiku-4-5"), off, 4096).thinking is None  # left out: off
    always = setup(facts_for("claude-opus-5-5"), off, 4096)
    assert (always.thinking or {}).get("type") == "adaptive"
    assert always.effort == "low"
    assert "always thinks" in always.note
    budget = ThinkingChoice("budget", budget=2048)
    assert setup(facts_for("claude-haiku-4-5"), budget, 4096).thinking == {
        "type": "enabled",
        "budget_tokens": 2048,
    }
    moved = setup(facts_for("claude-sonnet-5-5"), budget, 4096)
    assert moved.thinking == {"type": "adaptive", "display": "summarized"}
    assert "no thinking budget" in moved.note
    assert clamp_effort(facts_for("claude-opus-4-6"), "xhigh") == "high"  # it has no xhigh
    assert clamp_effort(facts_for("claude-haiku-4-5"), "high") == ""  # it takes no effort


def test_a_budget_from_before_moves_to_adaptive_at_its_nearest_effort() -> None:
    choice, said = fitted(facts_for("claude-sonnet-5-5"), ThinkingChoice("budget", budget=12_000))
    assert (choice.mode, choice.effort) == ("adaptive", "medium")
    assert "12,000 tokens" in said
    same, nothing = fitted(facts_for("claude-haiku-4-5"), ThinkingChoice("budget", budget=12_000))
    assert (same.mode, nothing) == ("budget", "")


def test_the_menu_offers_what_the_model_can_do() -> None:
    assert options(facts_for("claude-sonnet-5-5")).modes == ("adaptive", "off")
    assert options(facts_for("claude-sonnet-5-5")).off == "between_tools"
    assert options(facts_for("claude-haiku-4-5")).modes == ("off", "budget")
    assert options(facts_for("claude-opus-5-5")).off == "lowest effort"
    assert options(facts_for("claude-opus-4-6")).modes == ("adaptive", "off", "budget")


def test_thinking_is_set_in_words_a_person_types() -> None:
    assert thinking_fields("8,000") == {"thinking": "budget", "thinking_budget": 8000}
    assert thinking_fields("high") == {"thinking": "adaptive", "effort": "high"}
    assert thinking_fields("off") == {"thinking": "off"}
    with pytest.raises(ValueError, match="say adaptive, off"):
        thinking_fields("lots")


@pytest.mark.parametrize(
    ("model", "extra", "words"),
    [
        ("claude-sonnet-5-5", {"temperature": 0.7}, "`temperature` is deprecated"),
        ("claude-opus-4-8", {"top_k": 5}, "`top_k` is deprecated"),
        ("claude-haiku-5-5", {"temperature": 1, "top_p": 0.99}, "deprecated"),
        ("claude-haiku-4-5", {"output_config": {"effort": "low"}}, "does not support the effort"),
        ("claude-opus-4-6", {"output_config": {"effort": "xhigh"}}, "not supported by"),
        ("claude-sonnet-5-5", {"max_tokens": 200_000}, "maximum allowed number of output"),
        ("claude-haiku-4-5", {"max_tokens": 65_000}, "maximum allowed number of output"),
        ("claude-opus-5-5", {"thinking": {"type": "enabled", "budget_tokens": 2000}}, "adaptive"),
        (
            "claude-opus-5",
            {"thinking": {"type": "disabled"}, "output_config": {"effort": "max"}},
            "'max' is not supported",
        ),
        (
            "claude-sonnet-5-5",
            {"thinking": {"type": "between_tools", "display": "omitted"}},
            "Extra inputs",
        ),
        (
            "claude-haiku-5-5",
            {"thinking": {"type": "between_tools"}},
            'between_tools" is not supported',
        ),
        (
            "claude-haiku-4-5",
            {"thinking": {"type": "enabled", "budget_tokens": 2000}, "temperature": 0.5},
            "not supported when thinking",
        ),
    ],
)
def test_the_rules_refuse_per_model(model: str, extra: dict[str, object], words: str) -> None:
    body = {"model": model, "max_tokens": 4096, "messages": HI, **extra}
    assert any(words in p.message for p in body_problems(body)), body_problems(body)


def test_a_prefill_and_a_forced_choice_are_per_model() -> None:
    prefill = [*HI, {"role": "assistant", "content": "Sure,"}]
    tools = [{"name": "t", "description": "", "input_schema": {"type": "object"}}]
    for model, refused in (("claude-sonnet-5-5", True), ("claude-haiku-4-5", False)):
        body = {"model": model, "max_tokens": 4096, "messages": prefill}
        assert bool(body_problems(body)) is refused
        forced = {"model": model, "max_tokens": 4096, "messages": HI, "tools": tools}
        forced["tool_choice"] = {"type": "any"}
        assert bool(body_problems(forced)) is refused
    haiku_5 = {"model": "claude-haiku-5-5", "max_tokens": 4096, "messages": HI, "tools": tools}
    assert body_problems({**haiku_5, "tool_choice": {"type": "any"}}) == []  # it takes it


def test_who_reads_whose_thinking() -> None:
    sonnet, opus = facts_for("claude-sonnet-5-5"), facts_for("claude-opus-5-5")
    assert reads_thinking_of(opus, "claude-sonnet-5-5")
    assert not reads_thinking_of(sonnet, "claude-opus-5-5")
    assert reads_thinking_of(sonnet, "claude-haiku-4-5")
    assert not reads_thinking_of(facts_for("claude-haiku-4-5"), "claude-sonnet-5-5")
    assert reads_thinking_of(facts_for("claude-fable-5-1"), "claude-opus-5-5")
    assert not reads_thinking_of(opus, "claude-fable-5-2")


def test_thinking_is_sent_only_to_a_model_that_reads_it_after_the_same_prefix() -> None:
    question = Message("user", (TextBlock("hi"),))
    prefix = request_prefix(["Be brief."], [], [question])
    reply = Message(
        "assistant",
        (ThinkingBlock("", "sig"), TextBlock("Hello")),
        model="claude-sonnet-5-5",
        bound_to=prefix,
    )
    sonnet, opus = facts_for("claude-sonnet-5-5"), facts_for("claude-opus-5-5")
    assert sendable_thinking(reply, prefix, sonnet) is None
    assert sendable_thinking(reply, prefix, opus) is None  # Opus 5.5 reads Sonnet 5.5's
    other = request_prefix(["Be long."], [], [question])
    assert "changed" in sendable_thinking(reply, other, sonnet).reason  # type: ignore[union-attr]
    from_opus = replace(reply, model="claude-opus-5-5")
    unread = sendable_thinking(from_opus, prefix, sonnet)
    assert unread is not None
    assert "written by claude-opus-5-5" in unread.reason
    imported = replace(reply, bound_to="")
    assert sendable_thinking(imported, prefix, sonnet) is not None
    older = replace(imported, model="claude-haiku-4-5")  # a model without the prefix check
    assert sendable_thinking(older, "", facts_for("claude-haiku-4-5")) is None
    # Key order, cache markers and the thinking settings are not the prefix.
    assert request_prefix(["Be brief."], [{"a": 1, "b": 2}], [question]) == request_prefix(
        ["Be brief."], [{"b": 2, "a": 1}], [question]
    )


def test_each_thinking_block_left_out_says_why(tmp_path: Path) -> None:
    from desktop_app.chats import Engine

    engine = Engine.open(tmp_path / "home")
    try:
        chat = engine.new_chat(model="claude-opus-5-5", drop_old_thinking=False)
        question = Message("user", (TextBlock("hi"),))
        engine.store.append_message(chat.id, question)
        reply = Message(
            "assistant",
            (ThinkingBlock("", "sig"), TextBlock("Hello")),
            model="claude-opus-5-5",
            bound_to="not-this-prefix",
        )
        engine.store.append_message(chat.id, reply)
        chat.setup.switch_model("claude-sonnet-5-5")
        plan = chat.plans.plan("and now?")
        stored = chat.messages()[1]
        status = plan.block_status(stored, 0)
        assert status.label == (
            "not sent: written by claude-opus-5-5, which claude-sonnet-5-5 cannot read"
        )
        assert plan.block_status(stored, 1).label == "in context"
        sent = plan.request.messages[1]
        assert [type(b).__name__ for b in sent.blocks] == ["TextBlock"]
    finally:
        engine.close()


def test_settings_say_what_thinking_does_on_the_model_and_that_an_unknown_one_gets_none() -> None:
    from desktop_app.chats import thinking_meaning
    from desktop_app.config.settings import Settings

    said = thinking_meaning("claude-sonnet-5-5", Settings(thinking="off"))
    assert "between_tools" in said
    assert "always thinks" in thinking_meaning("claude-opus-5-5", Settings(thinking="off"))
    assert "budget" in thinking_meaning(
        "claude-sonnet-5-5", Settings(thinking="budget", thinking_budget=2048)
    )
    unknown = thinking_meaning("qwen3:8b", Settings())
    assert "does not know qwen3:8b" in unknown
    assert "no thinking settings" in unknown
