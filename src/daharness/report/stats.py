"""Confidence intervals and paired tests for run figures, chosen to hold for small n and for rates at 0% or
100% (where a percentile bootstrap gives a zero-width interval).

- Repeats of one task (`run --epochs N`) are one cluster, not N independent samples: the figure is the mean
  of the tasks' means, its interval that of those means, one per task (`clustered_mean_interval`).
- A rate or a mean of scores in [0, 1]: the Wilson score interval (the formula of scipy's
  `proportion_ci(method="wilson")`, without importing scipy for every report). For scores
  that are not all 0 or 1 it is conservative, since such a score's variance is at most mean * (1 - mean).
  Values outside [0, 1] get a percentile bootstrap interval.
- Two runs on the same samples: right/wrong outcomes get McNemar's exact test (a binomial test on the
  discordant pairs); scores get an exact sign-flip permutation test of the mean paired difference (all
  2^n sign patterns up to 2^16, else a seeded Monte Carlo of them). The paired difference gets a paired
  bootstrap interval only from MIN_PAIRS_FOR_BOOTSTRAP pairs on, where it is a fair approximation; below,
  no interval (the test still says whether the difference is significant).

Every figure names its `method`, and the reports print it. A fixed seed makes a report the same each time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy is imported where used, so that a command that reports nothing needs none
    import numpy as np


CONFIDENCE = 0.95
RESAMPLES = 2000
PERMUTATIONS = 2**16  # exact up to 16 nonzero paired differences
MIN_PAIRS_FOR_BOOTSTRAP = 30
SEED = 20240607

WILSON = "Wilson score"
BOOTSTRAP = "percentile bootstrap"
PAIRED_BOOTSTRAP = "paired percentile bootstrap"
EXACT_MCNEMAR = "exact McNemar"


def mean_interval(values: Sequence[float]) -> dict[str, Any]:
    """The mean of `values` with its 95% interval and the `method` that gave it (no interval from an
    empty list; from one value, Wilson's still)."""
    if outcomes := _right_or_wrong(values):
        return _outcome_interval(outcomes)
    import numpy as np

    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return {"value": None, "low": None, "high": None, "n": 0, "method": None}
    value = float(data.mean())
    if np.all((data >= 0) & (data <= 1)):  # a rate, or a mean of scores in [0, 1]
        low, high = _wilson(value, int(data.size))
        method = WILSON
    elif data.size < 2 or np.all(data == data[0]):
        low = high = None
        method = None
    else:
        from scipy import stats  # half a second to import: only where it is used

        result = stats.bootstrap(
            (data,), np.mean, confidence_level=CONFIDENCE, n_resamples=RESAMPLES, method="percentile",
            random_state=np.random.default_rng(SEED),
        )  # fmt: skip
        low, high = result.confidence_interval
        method = BOOTSTRAP
    return {
        "value": round(value, 4),
        "low": None if low is None else round(float(low), 4),
        "high": None if high is None else round(float(high), 4),
        "n": int(data.size),
        "method": method,
    }


def clustered_mean_interval(clusters: Sequence[Sequence[float]]) -> dict[str, Any]:
    """`mean_interval` of values that come in clusters (a task's epochs): each cluster's mean is one
    observation, so the interval's n is the number of clusters, and each cluster weighs the same. Repeats of
    a task are correlated (the same question, the same model): counting them as independent samples would
    narrow the interval by up to the square root of the number of epochs. `n` stays the number of values;
    `clusters` and the `method` say what the interval was computed on."""
    means = [sum(values) / len(values) for values in clusters if values]
    figure = mean_interval(means)
    method = figure["method"] and f"{figure['method']} over {len(means)} task means (a task's epochs as one)"
    return {**figure, "n": sum(len(values) for values in clusters), "clusters": len(means), "method": method}


def _right_or_wrong(values: Sequence[float]) -> list[float]:
    """`values` as floats when every one is 0 or 1 (outcomes, the usual case), else an empty list."""
    floats = [float(value) for value in values]
    return floats if floats and all(value in (0.0, 1.0) for value in floats) else []


def _outcome_interval(outcomes: list[float]) -> dict[str, Any]:
    """`mean_interval` of 0/1 outcomes without numpy (a tenth of a second to import for a one-sample
    run): their sum is an exact integer in any order, so the mean, and Wilson's interval, are the very
    floats numpy's pairwise sum gives."""
    n = len(outcomes)
    value = sum(outcomes) / n
    low, high = _wilson(value, n)
    return {"value": round(value, 4), "low": round(low, 4), "high": round(high, 4), "n": n, "method": WILSON}


def _wilson(mean: float, n: int) -> tuple[float, float]:
    """Wilson's score interval for a mean of values in [0, 1] (the formula, with p = the mean)."""
    z = NormalDist().inv_cdf(0.5 + CONFIDENCE / 2)
    centre = (mean + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(mean * (1 - mean) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def paired_difference(a: Sequence[float], b: Sequence[float]) -> dict[str, Any]:
    """mean(b) - mean(a) over paired samples: the exact sign-flip permutation p-value (two-sided) and,
    from MIN_PAIRS_FOR_BOOTSTRAP pairs on, a paired bootstrap interval; `test` and `method` name them."""
    import numpy as np

    differences = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    n = int(differences.size)
    empty = {"low": None, "high": None, "p": None, "n": n, "method": None, "test": None}
    if n == 0:
        return {"diff": None, **empty}
    diff = float(differences.mean())
    p, test = sign_flip_p(differences)
    low = high = method = None
    if n >= MIN_PAIRS_FOR_BOOTSTRAP and not np.all(differences == differences[0]):
        from scipy import stats

        result = stats.bootstrap(
            (differences,), np.mean, confidence_level=CONFIDENCE, n_resamples=RESAMPLES, method="percentile",
            random_state=np.random.default_rng(SEED),
        )  # fmt: skip
        low, high = (round(float(x), 4) for x in result.confidence_interval)
        method = PAIRED_BOOTSTRAP
    elif n >= MIN_PAIRS_FOR_BOOTSTRAP:
        low = high = round(diff, 4)
        method = PAIRED_BOOTSTRAP
    return {"diff": round(diff, 4), "low": low, "high": high, "p": p, "n": n, "method": method, "test": test}


def sign_flip_p(differences: np.ndarray) -> tuple[float, str]:
    """Two-sided p-value of a zero mean paired difference, by flipping the signs of the differences."""
    import numpy as np

    nonzero = differences[differences != 0]
    if nonzero.size <= 1:  # one pattern and its mirror image: both as extreme
        return 1.0, "sign-flip permutation (exact)"
    from scipy import stats

    exact = 2 ** int(nonzero.size) <= PERMUTATIONS
    result = stats.permutation_test(
        (nonzero,), np.mean, permutation_type="samples", alternative="two-sided",
        n_resamples=PERMUTATIONS, random_state=np.random.default_rng(SEED),
    )  # fmt: skip
    kind = "exact" if exact else f"Monte Carlo, {PERMUTATIONS} resamples"
    return round(float(min(1.0, result.pvalue)), 4), f"sign-flip permutation ({kind})"


def mcnemar(a_right: Sequence[bool], b_right: Sequence[bool]) -> dict[str, Any]:
    """McNemar's exact test on paired right/wrong outcomes: only the samples that flipped count (no
    p-value without pairs: nothing was tested)."""
    only_a = sum(1 for x, y in zip(a_right, b_right, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a_right, b_right, strict=True) if y and not x)
    flips = only_a + only_b
    if not a_right:
        return {"only_a_right": 0, "only_b_right": 0, "p": None, "test": EXACT_MCNEMAR}
    from scipy import stats

    p = float(stats.binomtest(only_a, flips, 0.5).pvalue) if flips else 1.0
    return {"only_a_right": only_a, "only_b_right": only_b, "p": round(p, 4), "test": EXACT_MCNEMAR}
