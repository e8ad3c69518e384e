"""Confidence intervals and paired tests for run figures.

Intervals are 95% percentile bootstrap intervals (scipy.stats.bootstrap) over samples; a fixed seed makes
a report the same each time it is built. Two runs are compared on the samples both scored: the paired
per-sample difference gets a paired bootstrap interval and a two-sided paired bootstrap p-value, and
right/wrong outcomes also get McNemar's exact test (a binomial test on the discordant pairs).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats

CONFIDENCE = 0.95
RESAMPLES = 2000
SEED = 20240607


def mean_interval(values: Sequence[float]) -> dict[str, Any]:
    """The mean of `values` with its bootstrap interval (no interval from fewer than two values, and a
    zero-width one when every value is the same)."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return {"value": None, "low": None, "high": None, "n": 0}
    value = float(data.mean())
    if data.size < 2:
        return {"value": round(value, 4), "low": None, "high": None, "n": 1}
    if np.all(data == data[0]):
        low = high = value
    else:
        result = stats.bootstrap(
            (data,), np.mean, confidence_level=CONFIDENCE, n_resamples=RESAMPLES, method="percentile",
            random_state=np.random.default_rng(SEED),
        )  # fmt: skip
        low, high = result.confidence_interval
    return {
        "value": round(value, 4),
        "low": round(float(low), 4),
        "high": round(float(high), 4),
        "n": int(data.size),
    }


def paired_difference(a: Sequence[float], b: Sequence[float]) -> dict[str, Any]:
    """mean(b) - mean(a) over paired samples, its paired bootstrap interval and two-sided p-value (the
    share of resampled differences on the other side of zero, doubled)."""
    first, second = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    differences = second - first
    n = int(differences.size)
    if n == 0:
        return {"diff": None, "low": None, "high": None, "p": None, "n": 0}
    diff = float(differences.mean())
    if n < 2 or np.all(differences == differences[0]):
        p = 1.0 if diff == 0 else (0.0 if n >= 2 else None)
        return {"diff": round(diff, 4), "low": round(diff, 4), "high": round(diff, 4), "p": p, "n": n}
    result = stats.bootstrap(
        (differences,), np.mean, confidence_level=CONFIDENCE, n_resamples=RESAMPLES, method="percentile",
        random_state=np.random.default_rng(SEED),
    )  # fmt: skip
    resampled = np.asarray(result.bootstrap_distribution)
    tail = min(np.mean(resampled <= 0), np.mean(resampled >= 0))
    low, high = result.confidence_interval
    return {
        "diff": round(diff, 4),
        "low": round(float(low), 4),
        "high": round(float(high), 4),
        "p": round(float(min(1.0, 2 * tail)), 4),
        "n": n,
    }


def mcnemar(a_right: Sequence[bool], b_right: Sequence[bool]) -> dict[str, Any]:
    """McNemar's exact test on paired right/wrong outcomes: only the samples that flipped count (no
    p-value without pairs: nothing was tested)."""
    only_a = sum(1 for x, y in zip(a_right, b_right, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a_right, b_right, strict=True) if y and not x)
    flips = only_a + only_b
    if not a_right:
        return {"only_a_right": 0, "only_b_right": 0, "p": None}
    p = float(stats.binomtest(only_a, flips, 0.5).pvalue) if flips else 1.0
    return {"only_a_right": only_a, "only_b_right": only_b, "p": round(p, 4)}
