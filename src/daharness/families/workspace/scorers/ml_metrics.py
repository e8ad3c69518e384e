"""The ML metrics by their standard definitions (``corrected`` mode), and what every ML module shares:
metric names, input coercion and ``MetricError``.

The metric itself is scikit-learn's wherever it has one; this module only says how the agent's columns
become its inputs (labels compared by value, numbers checked) and the few rules scikit-learn leaves open
(the positive class of a binary f1, a single probability column for log loss, ratings for kappa).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from daharness.scoring.plain_number import PLAIN_NUMBER

if TYPE_CHECKING:  # the libraries are imported where used, so that registering the scorers is cheap
    import numpy as np
    import pandas as pd


class _LazyMetrics:
    """sklearn.metrics, imported when a metric is first computed, so that the family registers cheaply."""

    def __getattr__(self, name: str) -> Any:
        import sklearn.metrics

        return getattr(sklearn.metrics, name)


_sklearn = _LazyMetrics()
Mode = Literal["corrected", "compat"]
MODES: tuple[Mode, ...] = ("corrected", "compat")
Average = Literal["weighted", "macro", "micro", "binary"]

METRICS = (
    "f1", "accuracy", "r2", "silhouette", "roc_auc", "logloss", "quadratic_weighted_kappa",
    "mae", "rmse", "rmsle", "medae", "smape",
)  # fmt: skip

LOWER_IS_BETTER = frozenset({"mae", "rmse", "rmsle", "medae", "smape", "logloss"})
# Names used by DA-Code's task configs; logloss_class is the class-balanced log loss.
OFFICIAL_NAMES = {"roc_auc_score": "roc_auc", "logloss_total": "logloss", "logloss_class": "logloss"}
# Metrics that accept several target columns (averaged column by column).
MULTI_COLUMN = frozenset({"r2", "mae", "rmse", "rmsle", "medae", "smape", "roc_auc", "logloss"})
SILHOUETTE_SAMPLE = 6000
PROBABILITY_EPS = 1e-15

_MISSING = "<missing>"


class MetricError(ValueError):
    """The metric cannot be computed from these inputs; ``score_ml`` turns it into a score of 0."""


def resolve_metric(metric: str) -> tuple[str, bool]:
    """(our metric name, whether it is the class-balanced log loss); ValueError for an unknown one."""
    key = metric.strip().lower().replace(" ", "_")
    name = OFFICIAL_NAMES.get(key, key)
    if name not in METRICS:
        raise ValueError(f"unknown ML metric {metric!r}; choose one of {', '.join(METRICS)}")
    return name, key == "logloss_class"


# ---- inputs -----------------------------------------------------------------------------------------


def as_frame(values: Any) -> pd.DataFrame:
    import numpy as np
    import pandas as pd

    if isinstance(values, pd.DataFrame):
        return values.reset_index(drop=True)
    if isinstance(values, pd.Series):
        return values.reset_index(drop=True).to_frame()
    array = np.asarray(values, dtype=object if _has_strings(values) else None)
    return pd.DataFrame(array.reshape(len(array), -1) if array.ndim else array.reshape(1, 1))


def _has_strings(values: Any) -> bool:
    import numpy as np

    return isinstance(values, list | tuple) and any(isinstance(v, str) for v in np.ravel(values))


def as_column(values: Any, what: str) -> pd.Series:
    frame = as_frame(values)
    if frame.shape[1] != 1:
        raise MetricError(f"{what}: expected one column, got {frame.shape[1]}")
    return frame.iloc[:, 0]


def same_length(y_true: pd.DataFrame | pd.Series, y_pred: pd.DataFrame | pd.Series) -> None:
    if len(y_true) != len(y_pred):
        raise MetricError(f"{len(y_pred)} predictions for {len(y_true)} gold rows")


def as_numbers(values: Any, what: str) -> np.ndarray:
    import numpy as np
    import pandas as pd

    frame = as_frame(values)
    try:
        array = frame.apply(pd.to_numeric).to_numpy(dtype=float)
    except (ValueError, TypeError):
        raise MetricError(f"{what} has non-numeric values") from None
    if missing := int(np.isnan(array).sum()):
        raise MetricError(f"{what} has {missing} missing values")
    return array


def _label_reader() -> Callable[[Any], str | None]:
    """One class label as a comparable string: numbers by value, booleans as 1/0, strings folded (numpy
    and pandas imported once per column, not per label)."""
    import numpy as np
    import pandas as pd

    def label(value: Any) -> str | None:
        if value is None or value is pd.NA or (isinstance(value, float | np.floating) and math.isnan(value)):
            return None
        if isinstance(value, bool | np.bool_):
            return "1" if value else "0"
        if isinstance(value, int | np.integer | float | np.floating):
            number = float(value)
            return str(int(number)) if number.is_integer() else repr(number)
        text = str(value).strip().casefold()
        if text in ("true", "false"):
            return "1" if text == "true" else "0"
        if PLAIN_NUMBER.fullmatch(text):
            return label(float(text))
        return text if text not in ("", "nan") else None

    return label


def as_labels(values: pd.Series, what: str | None = None) -> np.ndarray:
    """Class labels compared by value; with ``what``, a missing label is an error naming it."""
    import numpy as np

    label = _label_reader()
    labels = [label(v) for v in values]
    missing = sum(label is None for label in labels)
    if missing and what is not None:
        raise MetricError(f"{what} has {missing} missing labels")
    return np.array([_MISSING if label is None else label for label in labels], dtype=object)


# ---- the metrics ------------------------------------------------------------------------------------


def corrected_metric(
    name: str, y_true: Any, y_pred: Any, features: Any, average: str, balanced: bool
) -> float:
    """One metric by its standard definition (the rules are in ``metric_value``'s docstring)."""
    import numpy as np

    if name == "silhouette":
        return _silhouette(features, y_pred)
    if name in ("f1", "accuracy"):
        truth = as_labels(as_column(y_true, "gold"), "gold")
        pred = as_labels(as_column(y_pred, "predictions"))
        same_length(truth, pred)
        if name == "accuracy":
            return float(_sklearn.accuracy_score(truth, pred))
        return _f1(truth, pred, average)
    if name == "quadratic_weighted_kappa":
        return _qwk(as_column(y_true, "gold"), as_column(y_pred, "predictions"))
    if name == "roc_auc":
        return _roc_auc(y_true, y_pred)
    if name == "logloss":
        return _logloss(y_true, y_pred, balanced)
    truth, pred = as_numbers(y_true, "gold"), as_numbers(y_pred, "predictions")
    if truth.shape != pred.shape:
        raise MetricError(f"predictions have shape {pred.shape}, gold {truth.shape}")
    if name == "r2":
        if len(truth) < 2:
            raise MetricError("r2 needs at least two rows")
        return float(_sklearn.r2_score(truth, pred))
    if name == "mae":
        return float(_sklearn.mean_absolute_error(truth, pred))
    if name == "medae":
        return float(_sklearn.median_absolute_error(truth, pred))
    if name == "rmse":
        return float(_sklearn.root_mean_squared_error(truth, pred))  # the mean of per-column RMSEs
    if name == "rmsle":
        if (truth <= -1).any():
            raise MetricError("rmsle needs gold values above -1")
        # Negative predictions are clipped to 0, as officially (log1p is undefined below -1).
        return float(_sklearn.root_mean_squared_log_error(truth, np.clip(pred, 0, None)))
    # smape, in percent; 0/0 counts as no error (scikit-learn has no smape)
    denominator = (np.abs(pred) + np.abs(truth)) / 2
    ratio = np.divide(np.abs(pred - truth), denominator, out=np.zeros_like(truth), where=denominator != 0)
    return float(np.mean(ratio) * 100)


def _f1(truth: np.ndarray, pred: np.ndarray, average: str) -> float:
    if average != "binary":
        return float(_sklearn.f1_score(truth, pred, average=average, zero_division=0))
    if "1" not in set(truth):
        raise MetricError("binary f1 needs 1/true among the gold labels (the positive class)")
    # 1/true against every other label, whatever the number of classes
    return float(_sklearn.f1_score(truth == "1", pred == "1", zero_division=0))


def _qwk(y_true: pd.Series, y_pred: pd.Series) -> float:
    import numpy as np

    same_length(y_true, y_pred)
    truth, pred = as_numbers(y_true, "gold")[:, 0], as_numbers(y_pred, "predictions")[:, 0]
    if not np.all(truth == np.round(truth)):
        raise MetricError("quadratic weighted kappa needs whole-number gold ratings")
    truth, pred = truth.astype(int), np.rint(pred).astype(int)
    ratings = np.arange(min(truth.min(), pred.min()), max(truth.max(), pred.max()) + 1)
    if len(ratings) == 1:  # one rating everywhere, all agree: nothing to measure against
        return 1.0
    # Every rating between the extremes is a label, so weights follow rating distances, not label ranks.
    return float(_sklearn.cohen_kappa_score(truth, pred, labels=ratings, weights="quadratic"))


def _roc_auc(y_true: Any, y_pred: Any) -> float:
    import numpy as np

    truth, pred = as_frame(y_true), as_numbers(y_pred, "predictions")
    if truth.shape != pred.shape:
        raise MetricError(
            f"predictions have shape {pred.shape}, gold {truth.shape} "
            "(multi-class AUC needs one-hot gold, one score column per class)"
        )
    scores = []
    for index in range(truth.shape[1]):
        labels = as_labels(truth.iloc[:, index], "gold")
        if len(set(labels)) != 2:
            raise MetricError(f"gold column {index} has {len(set(labels))} classes; AUC needs two")
        scores.append(_sklearn.roc_auc_score(labels == max(labels), pred[:, index]))
    return float(np.mean(scores))


def _logloss(y_true: Any, y_pred: Any, balanced: bool) -> float:
    """Natural-log loss; ``balanced``: each sample weighted by 1 / its class's count, which makes it the
    mean over classes of each class's mean loss."""
    import numpy as np

    pred = as_numbers(y_pred, "predictions")
    if pred.shape[1] == 1:  # the probability of the positive class
        labels = as_labels(as_column(y_true, "gold"), "gold")
        if not set(labels) <= {"0", "1"}:
            raise MetricError("a single probability column needs 0/1 (or boolean) gold labels")
        classes = (labels == "1").astype(int)
        pred = np.clip(pred, PROBABILITY_EPS, 1 - PROBABILITY_EPS)
        pred = np.hstack([1 - pred, pred])
    else:
        truth = as_numbers(y_true, "gold")
        if truth.shape[1] == 1:  # class indices 0..k-1
            if not set(np.unique(truth)) <= set(range(pred.shape[1])):
                raise MetricError(f"gold class indices must be 0..{pred.shape[1] - 1}")
            classes = truth[:, 0].astype(int)
        elif truth.shape != pred.shape:
            raise MetricError(f"predictions have shape {pred.shape}, gold {truth.shape}")
        elif not (np.isin(truth, (0, 1)).all() and (truth.sum(axis=1) == 1).all()):
            raise MetricError("gold probabilities must be one-hot (one 1 per row)")
        else:
            classes = truth.argmax(axis=1)
        pred = np.clip(pred, PROBABILITY_EPS, 1 - PROBABILITY_EPS)
        pred = pred / pred.sum(axis=1, keepdims=True)
    if len(classes) != len(pred):
        raise MetricError(f"{len(pred)} predictions for {len(classes)} gold rows")
    weights = None
    if balanced:
        counts = np.bincount(classes, minlength=pred.shape[1])
        weights = 1.0 / counts[classes]
    return float(_sklearn.log_loss(classes, pred, labels=list(range(pred.shape[1])), sample_weight=weights))


def _silhouette(features: Any, labels: Any) -> float:
    if features is None:
        raise ValueError("silhouette needs the clustered points (features=...)")
    points = as_numbers(features, "features")
    clusters = as_labels(as_column(labels, "cluster labels"), "cluster labels")
    if len(points) != len(clusters):
        raise MetricError(f"{len(clusters)} cluster labels for {len(points)} points")
    count = len(set(clusters))
    if not 2 <= count < len(points):
        raise MetricError(f"silhouette needs 2 to n-1 clusters, got {count} for {len(points)} points")
    sample = SILHOUETTE_SAMPLE if len(points) > SILHOUETTE_SAMPLE else None
    return float(_sklearn.silhouette_score(points, clusters, sample_size=sample, random_state=42))
