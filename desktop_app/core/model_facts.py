"""What each Claude model accepts and refuses, as data: the built-in table behind the
Models API, and the rules the API states only in its documentation.

The Models API (`GET /v1/models`, SDK `types/model_info.py`, `model_capabilities.py`)
reports a model's window, its output limit, the `thinking.type` values it takes and its
effort levels; when a server lists a model, those win (`with_listed`). What no endpoint
reports — what leaving `thinking` out means, whether a prefill, sampling parameters or a
forced `tool_choice` are refused, whose thinking blocks a model reads, whether its
blocks are bound to the conversation, its tokenizer — comes from the table below.

Sources, read 2026-12-03 (gathered, with what each page says, in docs/anthropic-api-2026.md,
from these platform.claude.com pages, snapshot of October–November 2026):
  docs/en/build-with-claude/thinking                 (types per model, display, prefill)
  docs/en/build-with-claude/thinking-troubleshooting (what returns 400)
  docs/en/build-with-claude/effort                   (levels and defaults)
  docs/en/build-with-claude/context-windows          (1M windows, 128K output)
  docs/en/build-with-claude/preserved-thinking       (model and prefix binding)
  docs/en/models/sonnet-5-5/migration-guide, .../opus-5-5/whats-new-opus-5-5,
  docs/en/models/haiku-5-5/migration-guide, .../fable-5-2/whats-new-fable-5-2
  docs/en/about-claude/model-deprecations            (lifecycle)
and the SDK 2.15/2.16 (`types/model_param.py`, `_data/deprecated_models.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal, TypeAlias

ThinkingType: TypeAlias = Literal["adaptive", "enabled", "disabled", "between_tools"]
Tokenizer: TypeAlias = Literal["claude-2026", "claude-2024", "other"]

EFFORTS = ("low", "medium", "high", "xhigh", "max")
ALL_EFFORTS = EFFORTS
NO_XHIGH = ("low", "medium", "high", "max")
DEFAULT_WINDOW = 200_000
DEFAULT_OUTPUT = 8_192


@dataclass(frozen=True, slots=True)
class ModelFacts:
    """One model's limits and rules. `source` says where the figures came from: the
    server's own list, our table, or a guess for a model nobody described."""

    id: str
    display_name: str
    context_window: int
    max_output: int
    thinking_types: frozenset[str] = frozenset()  # `thinking.type` values it accepts
    # What leaving `thinking` out does: the model thinks adaptively, or it does not.
    omitted_thinks: bool = False
    efforts: tuple[str, ...] = ()  # `output_config.effort` levels; () = the field is refused
    default_effort: str = ""
    off_effort_cap: str = ""  # highest effort allowed with thinking off ("" = any)
    display_default: Literal["omitted", "summarized"] = "summarized"
    sampling: bool = True  # non-default temperature / top_p / top_k accepted
    prefill: bool = True  # a request may end with an assistant message (thinking off)
    forced_tool_choice: bool = True  # `tool_choice` any / tool accepted
    prefix_binding: bool = False  # thinking blocks invalid once the prefix before them changes
    tokenizer: Tokenizer = "other"
    # Models whose thinking blocks this one reads (None: its own, and older Claude models').
    reads: frozenset[str] | None = None
    generation: int = 0  # release order among Claude models (0: not a Claude model we know)
    lifecycle: Literal["active", "deprecated", "retired"] = "active"
    source: Literal["server", "table", "guess"] = "table"
    # The API's web search (core/server_tools.py): every Claude model of the table takes
    # it (web-search-tool page, supportedModels); the Models API may say otherwise.
    web_search: bool = True

    @property
    def can_think(self) -> bool:
        return bool(self.thinking_types & {"adaptive", "enabled"}) or self.omitted_thinks

    @property
    def always_thinks(self) -> bool:
        """No way to turn thinking off: neither `disabled` nor `between_tools` is taken,
        and leaving the field out thinks too."""
        return self.omitted_thinks and not self.thinking_types & {"disabled", "between_tools"}


def _claude(
    id: str,
    name: str,
    *,
    window: int = 1_000_000,
    output: int = 128_000,
    types: tuple[str, ...],
    omitted_thinks: bool,
    efforts: tuple[str, ...] = ALL_EFFORTS,
    default_effort: str = "high",
    off_cap: str = "",
    display: Literal["omitted", "summarized"] = "omitted",
    sampling: bool = False,
    prefill: bool = False,
    forced: bool = True,
    bound: bool = False,
    tokenizer: Tokenizer = "claude-2026",
    reads: tuple[str, ...] | None = None,
    generation: int,
    lifecycle: Literal["active", "deprecated", "retired"] = "active",
) -> ModelFacts:
    return ModelFacts(
        id,
        name,
        window,
        output,
        frozenset(types),
        omitted_thinks,
        efforts,
        default_effort if efforts else "",
        off_cap,
        display,
        sampling,
        prefill,
        forced,
        bound,
        tokenizer,
        None if reads is None else frozenset(reads),
        generation,
        lifecycle,
    )


_OLDER_THAN_OPUS_5 = (
    "claude-opus-4-8",
    "claude-opus-4-7",
    "claude-opus-4-6",
    "claude-opus-4-5",
    "claude-sonnet-5",
    "claude-sonnet-4-6",
    "claude-sonnet-4-5",
    "claude-haiku-4-5",
)

# Newest first. `generation` orders releases (a model reads older models' blocks unless
# its `reads` says otherwise; see `reads_thinking_of`): Fable 5.1 2026-09-01, Opus 5.5
# 09-22, Sonnet 5.5 09-28, Haiku 5.5 10-07, Fable 5.2 11-09 (a year before each "not
# sooner than" retirement date on the deprecations page).
BUILTIN: tuple[ModelFacts, ...] = (
    _claude(
        "claude-fable-5-2",
        "Claude Fable 5.2",
        types=("adaptive",),
        omitted_thinks=True,
        forced=False,
        bound=True,  # on every account (whats-new-fable-5-2)
        generation=60,
    ),
    _claude(
        "claude-mythos-5-2",
        "Claude Mythos 5.2",
        types=("adaptive",),
        omitted_thinks=True,
        forced=False,
        bound=True,
        reads=None,
        generation=60,
    ),
    _claude(
        "claude-haiku-5-5",
        "Claude Haiku 5.5",
        types=("adaptive", "disabled"),
        omitted_thinks=True,
        default_effort="medium",
        off_cap="high",
        bound=True,
        generation=55,
    ),
    _claude(
        "claude-sonnet-5-5",
        "Claude Sonnet 5.5",
        types=("adaptive", "between_tools"),
        omitted_thinks=True,
        off_cap="high",
        forced=False,
        bound=True,
        # Sonnet 5, Opus 4.8, Haiku 4.5 and earlier, and Haiku 5.5 — not Opus 5 / 5.5
        # (thinking page, "Switching models").
        reads=("claude-haiku-5-5", *_OLDER_THAN_OPUS_5),
        generation=54,
    ),
    _claude(
        "claude-opus-5-5",
        "Claude Opus 5.5",
        types=("adaptive",),
        omitted_thinks=True,
        default_effort="medium",
        forced=False,
        bound=True,
        reads=("claude-sonnet-5-5", "claude-haiku-5-5", "claude-opus-5", *_OLDER_THAN_OPUS_5),
        generation=53,
    ),
    _claude(
        "claude-fable-5-1",
        "Claude Fable 5.1",
        types=("adaptive",),
        omitted_thinks=True,
        forced=False,
        bound=True,
        generation=52,
    ),
    _claude(
        "claude-mythos-5-1",
        "Claude Mythos 5.1",
        types=("adaptive",),
        omitted_thinks=True,
        forced=False,
        bound=True,  # the sources disagree; binding assumed (the safer side)
        generation=52,
    ),
    _claude(
        "claude-fable-5",
        "Claude Fable 5",
        types=("adaptive",),
        omitted_thinks=True,
        generation=50,
    ),
    _claude(
        "claude-mythos-5",
        "Claude Mythos 5",
        types=("adaptive",),
        omitted_thinks=True,
        generation=50,
    ),
    _claude(
        "claude-opus-5",
        "Claude Opus 5",
        types=("adaptive", "disabled"),
        omitted_thinks=True,
        off_cap="high",
        generation=49,
    ),
    _claude(
        "claude-sonnet-5",
        "Claude Sonnet 5",
        types=("adaptive", "disabled"),
        omitted_thinks=True,
        generation=48,
    ),
    _claude(
        "claude-mythos-preview",
        "Claude Mythos Preview",
        types=("adaptive", "enabled"),
        omitted_thinks=True,
        efforts=NO_XHIGH,
        generation=47,
        lifecycle="deprecated",
    ),
    _claude(
        "claude-opus-4-8",
        "Claude Opus 4.8",
        types=("adaptive", "disabled"),
        omitted_thinks=False,
        generation=46,
    ),
    _claude(
        "claude-opus-4-7",
        "Claude Opus 4.7",
        types=("adaptive", "disabled"),
        omitted_thinks=False,
        generation=45,
    ),
    _claude(
        "claude-opus-4-6",
        "Claude Opus 4.6",
        types=("adaptive", "disabled", "enabled"),
        omitted_thinks=False,
        efforts=NO_XHIGH,
        display="summarized",
        sampling=True,  # only while thinking is off (request_rules)
        tokenizer="claude-2024",
        generation=44,
    ),
    _claude(
        "claude-sonnet-4-6",
        "Claude Sonnet 4.6",
        types=("adaptive", "disabled", "enabled"),
        omitted_thinks=False,
        efforts=NO_XHIGH,
        display="summarized",
        sampling=True,
        tokenizer="claude-2024",
        generation=43,
    ),
    _claude(
        "claude-opus-4-5",
        "Claude Opus 4.5",
        window=200_000,
        output=64_000,
        types=("enabled", "disabled"),
        omitted_thinks=False,
        efforts=("low", "medium", "high"),
        display="summarized",
        sampling=True,
        prefill=True,
        tokenizer="claude-2024",
        generation=42,
        lifecycle="deprecated",  # retires 2027-01-22 (SDK _data/deprecated_models.py)
    ),
    _claude(
        "claude-haiku-4-5",
        "Claude Haiku 4.5",
        window=200_000,
        output=64_000,
        types=("enabled", "disabled"),
        omitted_thinks=False,
        efforts=(),
        display="summarized",
        sampling=True,
        prefill=True,
        tokenizer="claude-2024",
        generation=41,
    ),
)
# The offline demo's simulated model (api/simulator): it takes every way of thinking, so
# the demo shows each; it binds nothing. Its window is the largest of the models a demo
# chat may be planned for (a chat of Sonnet 5.5 plans for 1M and is answered by it).
DEMO = ModelFacts(
    "contextdesk-demo",
    "ContextDesk demo (offline, simulated)",
    1_000_000,
    128_000,
    frozenset({"adaptive", "enabled", "disabled"}),
    efforts=ALL_EFFORTS,
    tokenizer="other",
    generation=1,
)
_BY_ID = {facts.id: facts for facts in (*BUILTIN, DEMO)}
_DATE_SUFFIX = re.compile(r"-(?:\d{8}|latest)$")
_CLAUDE_VERSION = re.compile(r"claude-(?:[a-z]+-)?(\d+)(?:[-.](\d{1,2}))?(?:$|[-@])")


def builtin_facts(model: str) -> ModelFacts | None:
    """The table's entry for `model` (its id, or its id without a date suffix)."""
    return _BY_ID.get(model) or _BY_ID.get(_DATE_SUFFIX.sub("", model))


def facts_for(model: str) -> ModelFacts:
    """What we know of `model` without asking a server: the table's entry, else a guess
    from its name that sends nothing a model of that generation refuses, else (another
    server's model: Ollama, LiteLLM…) conservative defaults that send no thinking at all."""
    known = builtin_facts(model)
    if known is not None:
        return replace(known, id=model) if known.id != model else known
    version = claude_version(model)
    if version is not None and version >= (4, 7):
        # A newer Claude than the table knows: today's strictest rules (no budget, no
        # prefill, no sampling, no forced tool choice, blocks bound to the conversation).
        return replace(
            _BY_ID["claude-opus-5-5"],
            id=model,
            display_name=model,
            default_effort="high",
            reads=frozenset(),
            generation=99,
            source="guess",
        )
    if version is not None:
        return ModelFacts(
            model,
            model,
            DEFAULT_WINDOW,
            DEFAULT_OUTPUT,
            frozenset({"enabled", "disabled"}),
            tokenizer="claude-2024",
            generation=1,
            source="guess",
        )
    return ModelFacts(model, model, DEFAULT_WINDOW, DEFAULT_OUTPUT, source="guess")


def claude_version(model: str) -> tuple[int, int] | None:
    """(major, minor) of a Claude model id (`claude-sonnet-5-5` → (5, 5)); None for
    other servers' models."""
    match = _CLAUDE_VERSION.match(model)
    if match is None:
        return None
    if model.startswith("claude-3"):
        return (3, int(match.group(2) or 0)) if match.group(2) else (3, 0)
    return int(match.group(1)), int(match.group(2) or 0)


def with_listed(
    facts: ModelFacts,
    *,
    context_window: int | None,
    max_output: int | None,
    display_name: str | None = None,
    thinking_types: frozenset[str] | None = None,
    efforts: tuple[str, ...] | None = None,
    lifecycle: str | None = None,
    web_search: bool | None = None,
) -> ModelFacts:
    """`facts` with what a server's Models API said of the model over the table's."""
    changes: dict[str, object] = {"source": "server"}
    if web_search is not None:
        changes["web_search"] = web_search
    if context_window:
        changes["context_window"] = context_window
    if max_output:
        changes["max_output"] = max_output
    if display_name:
        changes["display_name"] = display_name
    if thinking_types is not None:
        changes["thinking_types"] = thinking_types
    if efforts is not None:
        changes["efforts"] = efforts
        if facts.default_effort not in efforts:
            changes["default_effort"] = "high" if "high" in efforts else ""
    if lifecycle in ("active", "deprecated", "retired"):
        changes["lifecycle"] = lifecycle
    return replace(facts, **changes)  # type: ignore[arg-type]


def reads_thinking_of(reader: ModelFacts, writer: str) -> bool:
    """Does `reader` read thinking blocks that `writer` wrote? The API drops the others
    silently (preserved-thinking, "model binding"); ContextDesk does not send them."""
    if not writer or _same_model(reader.id, writer):
        return True
    if reader.reads is not None:
        return any(_same_model(writer, name) for name in reader.reads)
    if writer in _ALSO_READ_BY.get(_DATE_SUFFIX.sub("", reader.id), ()):
        return True
    written_by = builtin_facts(writer)
    if written_by is None:
        return reader.source == "guess" and not reader.prefix_binding
    return written_by.generation <= reader.generation  # (same generation: siblings)


# A newer model's blocks that an older one reads (thinking page, "Switching models": on
# the Claude API, Fable 5.1 and Mythos 5.1 read Opus 5.5's).
_ALSO_READ_BY = {
    "claude-fable-5-1": frozenset({"claude-opus-5-5"}),
    "claude-mythos-5-1": frozenset({"claude-opus-5-5"}),
}


def _same_model(a: str, b: str) -> bool:
    return a == b or _DATE_SUFFIX.sub("", a) == _DATE_SUFFIX.sub("", b)


def clamp_effort(facts: ModelFacts, effort: str, *, thinking_off: bool = False) -> str:
    """`effort` as the model takes it: "" when it takes none (or none was asked), the
    nearest lower level it has otherwise, and never above its cap while thinking is off."""
    if not facts.efforts or not effort:
        return ""
    wanted = EFFORTS.index(effort) if effort in EFFORTS else EFFORTS.index("high")
    if thinking_off and facts.off_effort_cap:
        wanted = min(wanted, EFFORTS.index(facts.off_effort_cap))
    for level in reversed(EFFORTS[: wanted + 1]):
        if level in facts.efforts:
            return level
    return facts.efforts[0]
