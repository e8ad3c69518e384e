"""Several scorers on one task combine by the task's conjunction."""

from __future__ import annotations

import pytest

from daharness.core.score import combine
from daharness.core.task import Conjunction


@pytest.mark.parametrize(
    ("conjunction", "expected"),
    [
        (Conjunction.avg, 0.5),
        (Conjunction.and_, 0.0),
        (Conjunction.or_, 1.0),
        (Conjunction.max, 1.0),
        (Conjunction.min, 0.0),
    ],
)
def test_conjunctions(conjunction: Conjunction, expected: float) -> None:
    assert combine([1.0, 0.5, 0.0], conjunction) == expected


def test_and_is_true_only_when_all_pass() -> None:
    assert combine([1.0, 1.0], Conjunction.and_) == 1.0
    assert combine([0.0, 0.0], Conjunction.or_) == 0.0
    with pytest.raises(ValueError):
        combine([], Conjunction.avg)
