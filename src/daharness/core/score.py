"""What every scorer returns, and how several scorers of one task combine."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from daharness.core.task import Conjunction


class Check(BaseModel):
    """One named check inside a score (a gold key, a table column, a chart property...)."""

    name: str
    passed: bool
    explanation: str = ""


class Score(BaseModel):
    """The outcome of scoring one sample.

    `excluded` marks a sample that a rule leaves out of every denominator (official DABench does this
    for questions without a response); such a sample still has a record, it just counts nowhere.
    `checks` lists the individual checks where a scorer has them; `details` holds everything else a
    reader needs to see why the value is what it is.
    """

    value: float = Field(ge=0.0, le=1.0)
    excluded: bool = False
    explanation: str = ""
    checks: list[Check] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)


def combine(values: Sequence[float], conjunction: Conjunction) -> float:
    """Combine per-scorer values: avg, and (all 1), or (any 1), max, min, all_mean (0 if any is 0, else
    the mean)."""
    if not values:
        raise ValueError("no scorer values to combine")
    match conjunction:
        case Conjunction.avg:
            return sum(values) / len(values)
        case Conjunction.and_:
            return 1.0 if all(v >= 1.0 for v in values) else 0.0
        case Conjunction.or_:
            return 1.0 if any(v >= 1.0 for v in values) else 0.0
        case Conjunction.max:
            return max(values)
        case Conjunction.min:
            return min(values)
        case Conjunction.all_mean:
            return 0.0 if any(v <= 0.0 for v in values) else sum(values) / len(values)
