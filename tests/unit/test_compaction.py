"""Compaction: span, prompt, preview → edit → apply → undo, fidelity retry, circuit breaker,
and the refund case (facts that summaries lose) through the real loop."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_app.context.chat_settings import ContextSettings
from desktop_app.context.compaction import (
    SUMMARIZER_SYSTEM,
    Compactor,
    apply_preview,
    plan_span,
    why_not_compactable,
)
from desktop_app.context.errors import NothingToCompact
from desktop_app.context.facts import Fact
from desktop_app.context.plan import BlockState
from desktop_app.context.planner import ContextPlanner
from desktop_app.context.projection import Projector
from desktop_app.context.state import ContextState, Summary
from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import ContextDeskError
from desktop_app.core.events import (
    CompactionApplied,
    CompactionFailed,
    CompactionStarted,
    ContextStateChanged,
    LoopEvent,
    TransitionReason,
    TurnFinished,
)
from desktop_app.core.loop import LoopConfig, LoopPorts, LoopState, run_turn
from desktop_app.core.messages import Message, user_text
from desktop_app.core.protocol import is_clean_start, validate
from tests.fakes.backend import ScriptedBackend, text_reply
from tests.fakes.tools import ScriptedApprover
from tests.fakes.words import word_counter
from tests.strategies import messy_histories
from tests.unit.builders import a, call, result, u

SETTINGS = ContextSettings(context_window=100_000, max_tokens=500, keep_recent_turns=2)


def refund_chat() -> list[Message]:
    return [
        u("I want a refund for order #88213."),
        a(call("toolu_1", "lookup_order", order_id="88213")),
        u(
            result(
                "toolu_1",
                '{"order_id": "#88213", "total": 847.20, "return_eligible_until": "2026-04-13"}',
            )
        ),
        a("Order #88213 totals 847.20 and can be returned until 2026-04-13."),
        u("Also order #88507 is late."),
        a("I see #88507 is delayed; I can request express shipping."),
        u("Yes please."),
        a("Done: express shipping requested."),
        u("What was the first amount again?"),
        a("It was 847.20."),
    ]


def compactor(*replies: str) -> tuple[Compactor, ScriptedBackend]:
    backend = ScriptedBackend().queue(*[text_reply(r) for r in replies])
    return Compactor(backend, word_counter()), backend


def test_the_span_runs_from_after_the_first_message_to_before_the_recent_turns() -> None:
    messages = refund_chat()
    span = plan_span(messages, ContextState(), SETTINGS)
    assert (span.start, span.end) == (1, 6)
    assert span.covers == tuple(m.id for m in messages[1:6])
    assert span.turns == (1, 2)


def test_nothing_to_compact_is_a_clear_error() -> None:
    with pytest.raises(NothingToCompact, match="no turns older than the 2 most recent"):
        plan_span(refund_chat()[:5], ContextState(), SETTINGS)


@settings(max_examples=300, deadline=None)
@given(
    messy_histories,
    st.integers(-1, 4),
    st.booleans(),
    st.sets(st.integers(0, 11)),
    st.sets(st.integers(0, 11)),
)
def test_why_nothing_can_be_compacted_is_what_planning_the_span_says(
    history: list[Message], keep: int, keep_first: bool, summarized: set[int], excluded: set[int]
) -> None:
    """Every plan asks whether a compaction could be made; its quick answer, from the
    newest turns back, is the one the whole span gives."""
    chat_settings = ContextSettings(keep_recent_turns=keep, keep_first_message=keep_first)
    ids = [m.id for m in history]
    state = ContextState()
    if summarized & set(range(len(ids))):
        covers = tuple(ids[i] for i in sorted(summarized) if i < len(ids))
        state = state.with_summary(Summary(1, covers, "Earlier.", "m"))
    for i in excluded:
        if i < len(ids):
            state = state.exclude_message(ids[i])
    first = 1 if keep_first else 0  # the span's end, as it was found before: every start
    starts = [i for i in range(first + 1, len(history)) if is_clean_start(history, i)]
    try:
        span = plan_span(history, state, chat_settings)
        said = ""
        assert keep <= 0 or len(starts) > keep
        assert span.end == (starts[-keep] if keep > 0 else len(history))
    except NothingToCompact as exc:
        said = exc.message
    assert why_not_compactable(history, state, chat_settings) == said


def test_the_summarizer_request_keeps_hard_facts_and_takes_instructions() -> None:
    tool, backend = compactor("Order #88213: 847.20, returnable until 2026-04-13. #88507 delayed.")
    tool.preview(
        refund_chat(),
        ContextState(),
        SETTINGS,
        model="m",
        cancel=CancelToken(),
        instructions="focus on refunds",
    )
    [request] = backend.requests
    assert request.purpose == "compaction"
    assert request.system_text == SUMMARIZER_SYSTEM
    for must in ("number and amount", "date", "identifier", "file path", "FAILED", "constraints"):
        assert must in SUMMARIZER_SYSTEM
    prompt = request.messages[0].text
    assert "[called lookup_order with" in prompt
    assert "847.20" in prompt
    assert "The user's instructions for this summary: focus on refunds" in prompt
    assert "What was the first amount again?" not in prompt  # recent turns are not summarized


def test_preview_edit_apply_undo_restores_the_exact_previous_request() -> None:
    messages = refund_chat()
    counter = word_counter()
    projector = Projector(counter)
    state = ContextState().pin(Fact("refund 847.20 by 2026-04-13"))
    before = projector.project(messages, state, SETTINGS, model="m", system="Help.")
    tool = Compactor(ScriptedBackend().queue(text_reply("Order lookups happened.")), counter)
    preview = tool.preview(messages, state, SETTINGS, model="m", cancel=CancelToken())
    assert preview.text == "Order lookups happened."
    assert preview.tokens_before > preview.tokens_after
    assert "#88213" in preview.missing  # the fidelity check names what the summary lost
    assert "847.20" not in preview.missing  # a pinned fact holds it

    applied = apply_preview(state, preview, text="Order #88213 was looked up; #88507 is late.")
    summary = applied.active_summary
    assert summary is not None
    assert summary.edited
    assert summary.number == 1
    after = projector.project(messages, applied, SETTINGS, model="m", system="Help.")
    assert after.block_status(messages[2], 0).label == "summarized in #1"
    assert "Order #88213 was looked up" in after.request.messages[0].text
    assert after.estimated_input < before.estimated_input
    assert validate(after.request.messages) == []

    undone = projector.project(
        messages, applied.undo_summary(), SETTINGS, model="m", system="Help."
    )
    assert undone.request.body() == before.request.body()


def test_a_second_compaction_absorbs_the_first() -> None:
    messages = [*refund_chat(), u("Thanks!"), a("Anything else?"), u("No."), a("Bye.")]
    tool, _ = compactor("first summary", "second summary")
    state = apply_preview(
        ContextState(),
        tool.preview(messages[:10], ContextState(), SETTINGS, model="m", cancel=CancelToken()),
    )
    second = tool.preview(messages, state, SETTINGS, model="m", cancel=CancelToken())
    assert second.span.previous == state.active_summary
    assert set(state.active_summary.covers) < set(second.span.covers)  # type: ignore[union-attr]
    state2 = apply_preview(state, second)
    assert state2.active_summary is not None
    assert state2.active_summary.replaces == state.active_summary.id  # type: ignore[union-attr]
    assert state2.undo_summary().active_summary == state.active_summary


def test_auto_compaction_retries_once_naming_what_was_lost_then_accepts_with_warnings() -> None:
    tool, backend = compactor("A refund was discussed.", "Refund for #88213 discussed.")
    preview = tool.auto(refund_chat(), ContextState(), SETTINGS, model="m", cancel=CancelToken())
    assert len(backend.requests) == 2
    retry_prompt = backend.requests[1].messages[0].text
    assert "Your previous summary left out these facts; include every one:" in retry_prompt
    assert "847.20" in retry_prompt
    assert preview.text == "Refund for #88213 discussed."
    assert "847.20" in preview.missing
    assert apply_preview(ContextState(), preview).active_summary.warnings == preview.missing  # type: ignore[union-attr]


def test_an_empty_summary_is_an_error_and_changes_nothing() -> None:
    tool, _ = compactor("   ")
    with pytest.raises(ContextDeskError, match="empty"):
        tool.preview(refund_chat(), ContextState(), SETTINGS, model="m", cancel=CancelToken())


# -- through the loop ------------------------------------------------------------------------

TIGHT = ContextSettings(
    context_window=150, max_tokens=20, keep_recent_turns=1
)  # 143 tokens of chat


def run_with_planner(
    planner: ContextPlanner, backend: ScriptedBackend, messages: list[Message]
) -> tuple[LoopState, list[LoopEvent]]:
    state = LoopState(messages=[*messages])
    ports = LoopPorts(
        backend=backend,
        planner=planner,
        approver=ScriptedApprover(),
        counter=planner.projector.counter,
    )
    events = list(
        run_turn(
            state, ports, CancelToken(), LoopConfig(context_window=planner.settings.context_window)
        )
    )
    return state, events


def make_planner(
    backend: ScriptedBackend, state: ContextState | None = None, cfg: ContextSettings = TIGHT
) -> ContextPlanner:
    counter = word_counter()
    return ContextPlanner(
        Projector(counter), Compactor(backend, counter), cfg, state or ContextState(), model="m"
    )


def test_auto_compaction_runs_before_the_chat_request_when_due() -> None:
    backend = ScriptedBackend().queue(
        text_reply("Order #88213 847.20 2026-04-13 #88507 88213"), text_reply("Sure.")
    )
    planner = make_planner(backend)
    _, events = run_with_planner(
        planner, backend, [*refund_chat(), user_text("Summarize my case.")]
    )
    kinds = [type(e) for e in events]
    assert (
        kinds.index(CompactionStarted) < kinds.index(CompactionApplied) < kinds.index(TurnFinished)
    )
    assert [r.purpose for r in backend.requests] == ["compaction", "chat"]
    assert planner.state.active_summary is not None
    assert any(isinstance(e, ContextStateChanged) and e.state is planner.state for e in events)
    assert "[Summary #1" in backend.requests[1].messages[0].text


def test_the_circuit_breaker_pauses_after_three_failures_and_trimming_takes_over() -> None:
    overloaded = ContextDeskError("Claude is overloaded", "Try again soon.", retryable=True)
    backend = ScriptedBackend()
    planner = make_planner(backend)
    reasons = []
    for turn in range(4):
        if not planner.state.breaker.paused:
            backend.queue([overloaded])  # the compaction request fails
        backend.queue(text_reply(f"reply {turn}"))
        _, events = run_with_planner(planner, backend, [*refund_chat(), user_text(f"turn {turn}")])
        finished = events[-1]
        assert isinstance(finished, TurnFinished)
        assert finished.reason is TransitionReason.END_TURN  # the chat goes on, trimmed
        reasons += [e for e in events if isinstance(e, CompactionFailed)]
        backend.replies.clear()
    assert [e.paused for e in reasons] == [False, False, True]  # the 4th turn did not even try
    assert planner.state.breaker.paused
    assert "Try again soon." in planner.state.breaker.reason
    assert "paused after 3 failures" in planner.state.breaker.reason
    plan = planner.plan([*refund_chat(), user_text("more")])
    assert plan.fits
    assert plan.not_sent_count > 0  # trimming made it fit
    assert [r.purpose for r in backend.requests].count("compaction") == 3
    # Manual compaction is still available while paused:
    backend.queue(text_reply("manual summary"))
    preview = planner.compactor.preview(
        refund_chat(), planner.state, TIGHT, model="m", cancel=CancelToken()
    )
    assert preview.text == "manual summary"


def test_three_compactions_later_the_request_still_carries_the_facts() -> None:
    """Progressive summaries lose amounts and dates; pinned facts do not."""
    facts = ContextState().pin(Fact("Order #88213: amount 847.20, return by 2026-04-13"))
    lossy = ["The customer has an order issue."] * 6  # each compaction (and its retry) blurs
    backend = ScriptedBackend()
    planner = make_planner(
        backend, facts, ContextSettings(context_window=200, max_tokens=20, keep_recent_turns=1)
    )
    history = refund_chat()
    compactions = 0
    for turn in range(3):
        history = [
            *history,
            u(f"Another question {turn}: " + "details " * 20),
            a("Noted. " + "ok " * 20),
        ]
        backend.queue(*[text_reply(t) for t in lossy], text_reply("Answer."))
        state, events = run_with_planner(
            planner, backend, [*history, user_text("What do I get back and by when?")]
        )
        compactions += sum(isinstance(e, CompactionApplied) for e in events)
        history = state.messages
        backend.replies.clear()
    assert compactions == 3
    assert planner.state.active_summary is not None
    assert planner.state.active_summary.number == 3
    last_chat_request = [r for r in backend.requests if r.purpose == "chat"][-1]
    assert "847.20" in last_chat_request.system_text
    assert "2026-04-13" in last_chat_request.system_text
    assert "847.20" not in planner.state.active_summary.text  # the summary did lose it
    plan = planner.plan(history)
    assert plan.block_status(history[2], 0).state is BlockState.SUMMARIZED


# -- a span longer than one summary request ------------------------------------------------


def long_chat(turns: int) -> list[Message]:
    """`turns` turns of ~12 words each way, after an opening message."""
    chat = [u("Let us plan the move.")]
    for n in range(turns):
        chat += [u(f"Step {n}: " + "box " * 10), a(f"Done with step {n}. " + "ok " * 8)]
    return chat


def test_a_span_past_one_summary_request_is_summarized_oldest_part_first() -> None:
    settings = ContextSettings(context_window=200, max_tokens=20, keep_recent_turns=2)
    messages = long_chat(30)  # ~700 words before the recent turns: 7× the span budget
    counter = word_counter()
    tool = Compactor(ScriptedBackend().queue(*[text_reply("Summary.")] * 2), counter)
    first = tool.preview(messages, ContextState(), settings, model="m", cancel=CancelToken())
    span = first.span
    assert 1 < span.end < len(messages) - 4  # not up to the recent turns
    assert is_clean_start(messages, span.end)
    assert sum(counter.message(m) for m in messages[span.start : span.end]) <= 100  # ½ window
    sent = tool.backend.requests[0].messages[0].text  # type: ignore[attr-defined]
    assert "Step 0:" in sent
    assert f"Step {len(messages) // 2 - 3}:" not in sent
    state = apply_preview(ContextState(), first)
    second = tool.preview(messages, state, settings, model="m", cancel=CancelToken())
    assert second.span.previous == state.active_summary
    assert second.span.end > span.end
    assert set(span.covers) < set(second.span.covers)
    assert "EARLIER SUMMARY (#1)" in tool.backend.requests[1].messages[0].text  # type: ignore[attr-defined]


def test_auto_compaction_of_a_span_past_the_window_sends_nothing_and_says_why() -> None:
    backend = ScriptedBackend().queue(text_reply("Sure."))
    planner = make_planner(backend)  # a 150-token window; the span holds ~700 words
    state, events = run_with_planner(planner, backend, [*long_chat(30), user_text("Next?")])
    failed = [e for e in events if isinstance(e, CompactionFailed)]
    assert [e.error.title for e in failed] == ["Too long to summarize at once"]
    assert "150 tokens" in failed[0].error.message
    assert [r.purpose for r in backend.requests] == ["chat"]  # no summary request
    finished = events[-1]
    assert isinstance(finished, TurnFinished)
    assert finished.reason is TransitionReason.END_TURN  # trimmed to the window instead
    assert planner.state.breaker.failures == 1
    assert state.messages[-1].text == "Sure."
