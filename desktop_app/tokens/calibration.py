"""Learning how far the local estimate is from what the API reports, per model and per
kind of content.

tiktoken's cl100k is not Claude's tokenizer: it undercounts by 10–50% on older models and
more on newer ones, and by different amounts for prose, code, CJK text and tool JSON. Each
reply's reported usage is the exact size of the prompt that was sent; dividing it by our
estimate of the same request gives a factor, smoothed over replies and kept per model
through a `CalibrationStore`. The error is shared out between the kinds of content the
request held, in proportion to their share of it, so a model's code factor learns from
code-heavy requests and its prose factor from prose.

Factors apply to totals only (a request, a section of it, a chat): a block's own count is
the local estimate and never moves when a factor is learned.

Before a model's first reply, its tokenizer's family answers: what was learned from other
models with the same tokenizer (core/model_facts.py `tokenizer`), else a measured seed.
The seeds (`SEEDS`) are published measurements against the API's own count_tokens:
- Claude's 2024 tokenizer (Haiku 4.5, Sonnet/Opus 4.5–4.6) counts about 10–20% more than
  cl100k on English and code;
- the tokenizer of Opus 4.7 and everything since (all of Claude 5) counts, against the
  2024 one, ~1.45× on English prose, 1.13–1.33× on code, 1.31× on text-heavy JSON and
  1.00× on Chinese, Japanese and Korean (sol.ava.dev, "what's actually different about the
  Opus 4.7 tokenizer", 2026-04-17: a few hundred count_tokens probes; pithwire.com's
  summary of another run gives 1.20–1.47×). The docs say "roughly 1× to 1.35×"
  (platform.claude.com about-claude/pricing): the measurements are what is used.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Protocol

log = logging.getLogger(__name__)

MIN_FACTOR, MAX_FACTOR = 0.5, 4.0
SMOOTHING = 0.5  # weight of the newest observation

# Kinds of content, as the counter classifies blocks. IMAGE counts come from the API's own
# formula, so they are never scaled.
PROSE, CODE, CJK, TOOL_JSON, IMAGE = "prose", "code", "CJK", "tool JSON", "image"
KINDS = (PROSE, CODE, CJK, TOOL_JSON, IMAGE)
SCALED_KINDS = KINDS[:-1]
_SEP = "#"  # stored as "model#kind"; a bare "model" is the whole-request factor
_FAMILY = "tokenizer:"  # "tokenizer:claude-2026" (and "…#kind"): learned across its models

# cl100k → the API's count, before any reply was seen: (whole request, by kind).
SEEDS: dict[str, tuple[float, dict[str, float]]] = {
    "claude-2024": (1.15, {PROSE: 1.15, CODE: 1.12, CJK: 1.0, TOOL_JSON: 1.15}),
    "claude-2026": (1.55, {PROSE: 1.67, CODE: 1.38, CJK: 1.0, TOOL_JSON: 1.5}),
}


class CalibrationStore(Protocol):
    def load_calibration(self) -> dict[str, float]: ...

    def save_calibration(self, factors: dict[str, float]) -> None: ...


class MemoryCalibrationStore:
    def __init__(self, factors: dict[str, float] | None = None) -> None:
        self.factors = dict(factors or {})

    def load_calibration(self) -> dict[str, float]:
        return dict(self.factors)

    def save_calibration(self, factors: dict[str, float]) -> None:
        self.factors = dict(factors)


def tokenizer_of(model: str) -> str:
    """The tokenizer family a model counts with (its own key when we do not know it)."""
    from desktop_app.core.model_facts import facts_for

    family = facts_for(model).tokenizer
    return family if family != "other" else ""


class Calibration:
    def __init__(self, store: CalibrationStore | None = None) -> None:
        self._store = store or MemoryCalibrationStore()
        self._factors = {
            key: factor
            for key, factor in self._store.load_calibration().items()
            if MIN_FACTOR <= factor <= MAX_FACTOR
        }
        self._families: dict[str, str] = {}

    def family(self, model: str) -> str:
        found = self._families.get(model)
        if found is None:
            found = self._families[model] = tokenizer_of(model)
        return found

    def factor(self, model: str, kind: str | None = None) -> float:
        """Multiply a local estimate by this to predict the API's count: learned for the
        model, else for its tokenizer's family, else the family's measured seed (1.0 for
        a model of another server). Without a kind: the whole-request factor; a kind not
        learned yet falls back to it."""
        if kind == IMAGE:
            return 1.0
        family = self.family(model)
        whole = self._factors.get(model)
        if whole is None:
            whole = self._family_factor(family, None, 1.0)
        if kind is None:
            return whole
        own = self._factors.get(f"{model}{_SEP}{kind}")
        if own is not None:
            return own
        if model in self._factors:  # the model's own whole factor beats a family's kind
            return whole
        return self._family_factor(family, kind, whole)

    def _family_factor(self, family: str, kind: str | None, fallback: float) -> float:
        if not family:
            return fallback
        key = f"{_FAMILY}{family}" + (f"{_SEP}{kind}" if kind else "")
        learned = self._factors.get(key)
        if learned is not None:
            return learned
        seed = SEEDS.get(family)
        if seed is None:
            return fallback
        return seed[0] if kind is None else seed[1].get(kind, seed[0])

    def seeded(self, model: str) -> bool:
        """Is this model's factor still a seed (nothing learned from its replies yet)?"""
        return model not in self._factors

    def factors(self, model: str) -> dict[str, float]:
        """The kinds learned for this model, with their factors."""
        prefix = f"{model}{_SEP}"
        learned = list(self._factors.items())  # (a copy: another thread may be learning)
        return {k[len(prefix) :]: f for k, f in learned if k.startswith(prefix)}

    def blend(self, model: str, mix: Mapping[str, int]) -> float:
        """The factor for a body with this mix of content (raw tokens by kind)."""
        total = sum(mix.values())
        if total <= 0:
            return self.factor(model)
        return sum(self.factor(model, kind) * raw for kind, raw in mix.items()) / total

    def learn(
        self, model: str, reported_prompt_tokens: int, local_estimate: int | Mapping[str, int]
    ) -> float:
        """Fold in one reply: the API's whole-prompt count against our raw estimate of the
        same request (a total, or tokens by kind). Returns the whole-request factor now in
        use."""
        mix = local_estimate if isinstance(local_estimate, Mapping) else {}
        raw = sum(mix.values()) if mix else int(local_estimate)  # type: ignore[arg-type]
        if reported_prompt_tokens <= 0 or raw <= 0:
            return self.factor(model)
        observed = _clamp(reported_prompt_tokens / raw)
        old = self._factors.get(model)
        family = self.family(model)
        self._factors[model] = observed if old is None else _smoothed(old, observed)
        if family:  # the next model of this tokenizer starts from what was seen here
            key = f"{_FAMILY}{family}"
            known = self._factors.get(key)
            self._factors[key] = observed if known is None else _smoothed(known, observed)
        if mix:
            self._learn_kinds(model, reported_prompt_tokens, mix)
        try:
            self._store.save_calibration(dict(self._factors))
        except OSError:  # a full disk must not break a chat; the factor still applies now
            log.warning("could not save the token calibration", exc_info=True)
        return self._factors[model]

    def _learn_kinds(self, model: str, reported: int, mix: Mapping[str, int]) -> None:
        fixed = mix.get(IMAGE, 0)
        predicted = {k: self.factor(model, k) * r for k, r in mix.items() if k != IMAGE and r > 0}
        scaled = sum(predicted.values())
        if scaled <= 0 or reported <= fixed:
            return
        ratio = (reported - fixed) / scaled  # how far the scaled part was off
        family = self.family(model)
        for kind, share in predicted.items():
            key = f"{model}{_SEP}{kind}"
            old = self.factor(model, kind)
            # A kind's first observation takes its share of the error whole; later ones
            # are smoothed like the whole-request factor.
            weight = share / scaled * (1.0 if key not in self._factors else SMOOTHING)
            self._factors[key] = _clamp(old * (1 + weight * (ratio - 1)))
            if family:
                self._factors[f"{_FAMILY}{family}{_SEP}{kind}"] = self._factors[key]


def _clamp(factor: float) -> float:
    return min(MAX_FACTOR, max(MIN_FACTOR, factor))


def _smoothed(old: float, observed: float) -> float:
    return old * (1 - SMOOTHING) + observed * SMOOTHING
