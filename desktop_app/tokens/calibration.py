"""Learning how far the local estimate is from what the API reports, per model.

tiktoken's cl100k is not Claude's tokenizer: it undercounts by 10–50% on older models and
more on newer ones. Each reply's reported usage is the exact size of the prompt that was
sent; dividing it by our estimate of the same request gives a factor, smoothed over
replies and kept per model through a `CalibrationStore`.
"""

from __future__ import annotations

import logging
from typing import Protocol

log = logging.getLogger(__name__)

MIN_FACTOR, MAX_FACTOR = 0.5, 4.0
SMOOTHING = 0.5  # weight of the newest observation


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
            model: factor
            for model, factor in self._store.load_calibration().items()
            if MIN_FACTOR <= factor <= MAX_FACTOR
        }

    def factor(self, model: str) -> float:
        """Multiply a local estimate by this to predict the API's count (1.0 until learned)."""
        return self._factors.get(model, 1.0)

    def learn(self, model: str, reported_prompt_tokens: int, local_estimate: int) -> float:
        """Fold in one reply: the API's whole-prompt count against our raw estimate of the
        same request. Returns the factor now in use."""
        if reported_prompt_tokens <= 0 or local_estimate <= 0:
            return self.factor(model)
        observed = min(MAX_FACTOR, max(MIN_FACTOR, reported_prompt_tokens / local_estimate))
        old = self._factors.get(model)
        new = observed if old is None else old * (1 - SMOOTHING) + observed * SMOOTHING
        self._factors[model] = new
        try:
            self._store.save_calibration(dict(self._factors))
        except OSError:  # a full disk must not break a chat; the factor still applies now
            log.warning("could not save the token calibration", exc_info=True)
        return new
