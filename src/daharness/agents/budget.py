"""Per-sample limits of LLM agents: steps, tokens, cost and wall time."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from daharness.models import Usage


@dataclass(frozen=True)
class SampleLimits:
    max_steps: int | None = None  # None: the agent's own default
    max_tokens: int | None = None  # prompt + completion tokens of all calls of the sample
    max_cost_usd: float | None = None
    max_wall_s: float | None = None


@dataclass
class Budget:
    limits: SampleLimits
    usage: Usage = field(default_factory=Usage)
    started: float = field(default_factory=time.monotonic)

    def charge(self, usage: Usage) -> None:
        self.usage = self.usage + usage

    def deadline(self) -> float | None:
        """When the sample's wall time runs out (time.monotonic()), if it is limited."""
        return self.started + self.limits.max_wall_s if self.limits.max_wall_s is not None else None

    def exceeded(self) -> str | None:
        """The name of the first limit used up, if any (checked before each model call)."""
        limits = self.limits
        if (
            limits.max_tokens is not None
            and self.usage.prompt_tokens + self.usage.completion_tokens >= limits.max_tokens
        ):
            return "limit:tokens"
        if limits.max_cost_usd is not None and self.usage.cost_usd >= limits.max_cost_usd:
            return "limit:cost"
        if limits.max_wall_s is not None and time.monotonic() - self.started >= limits.max_wall_s:
            return "limit:wall_time"
        return None
