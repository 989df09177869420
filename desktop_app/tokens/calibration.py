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


class Calibration:
    def __init__(self, store: CalibrationStore | None = None) -> None:
        self._store = store or MemoryCalibrationStore()
        self._factors = {
            key: factor
            for key, factor in self._store.load_calibration().items()
            if MIN_FACTOR <= factor <= MAX_FACTOR
        }

    def factor(self, model: str, kind: str | None = None) -> float:
        """Multiply a local estimate by this to predict the API's count (1.0 until
        learned). Without a kind: the whole-request factor; a kind not learned yet falls
        back to it."""
        if kind == IMAGE:
            return 1.0
        whole = self._factors.get(model, 1.0)
        return whole if kind is None else self._factors.get(f"{model}{_SEP}{kind}", whole)

    def factors(self, model: str) -> dict[str, float]:
        """The kinds learned for this model, with their factors."""
        prefix = f"{model}{_SEP}"
        return {k[len(prefix) :]: f for k, f in self._factors.items() if k.startswith(prefix)}

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
        self._factors[model] = observed if old is None else _smoothed(old, observed)
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
        for kind, share in predicted.items():
            key = f"{model}{_SEP}{kind}"
            old = self.factor(model, kind)
            # A kind's first observation takes its share of the error whole; later ones
            # are smoothed like the whole-request factor.
            weight = share / scaled * (1.0 if key not in self._factors else SMOOTHING)
            self._factors[key] = _clamp(old * (1 + weight * (ratio - 1)))


def _clamp(factor: float) -> float:
    return min(MAX_FACTOR, max(MIN_FACTOR, factor))


def _smoothed(old: float, observed: float) -> float:
    return old * (1 - SMOOTHING) + observed * SMOOTHING
