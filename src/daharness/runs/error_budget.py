"""How many infrastructure errors a run may end with and still succeed (`run --max-errors`): a run whose
samples mostly failed for reasons outside the agent (an endpoint refusing connections, 500s, replies that
are not chat completions) exits non-zero, so that CI notices."""

from __future__ import annotations

import math
from dataclasses import dataclass

from daharness.core.errors import UserError

DEFAULT_MAX_ERRORS = "20%"


@dataclass(frozen=True)
class ErrorBudget:
    """At most `count` errors, or at most `fraction` of the samples (exactly one of them is set)."""

    text: str
    count: int | None = None
    fraction: float | None = None

    @classmethod
    def parse(cls, text: str) -> ErrorBudget:
        """`3` (samples), `20%` or `0.2` (of the samples)."""
        value = text.strip()
        try:
            if value.endswith("%"):
                fraction = float(value[:-1]) / 100
            elif value.isdigit():
                return cls(text, count=int(value))
            else:
                fraction = float(value)
        except ValueError:
            fraction = -1.0
        if not 0 <= fraction <= 1:
            raise UserError(
                f"--max-errors: give a number of samples (3), a percentage (20%) or a fraction (0.2), "
                f"not {text!r}"
            )
        return cls(text, fraction=fraction)

    def allowed(self, samples: int) -> int:
        if self.count is not None:
            return self.count
        assert self.fraction is not None
        return math.floor(self.fraction * samples + 1e-9)

    def exceeded(self, errors: int, samples: int) -> bool:
        return errors > self.allowed(samples)
