"""Functions a scoring worker's child runs in tests/test_score_worker.py (imported there by name)."""

from __future__ import annotations

import sys

from daharness.core.score import Score


def imports_sklearn_metrics() -> Score:
    """What the child started with, then the import a scorer of ML tasks makes, and a random draw."""
    started_with = "sklearn.metrics" in sys.modules
    import numpy
    import sklearn.metrics  # noqa: F401

    return Score(value=0.0, details={"started_with": started_with, "draw": float(numpy.random.rand())})


def where_daharness_is() -> Score:
    """The daharness the child imported (from the worker, which imported it at its start)."""
    import daharness

    return Score(value=1.0, details={"daharness": daharness.__file__})
