"""The official DA-Code ML metrics (``compat`` mode), defects included, and the official normalization.

They follow ``CalculateML`` of ``da_agent/evaluators/metrics/script/ml_script.py`` and the scaling of
``compare_ml`` / ``compare_competition_ml`` (``da_agent/evaluators/metrics/ml.py``, yiyihum/da-code at
b211daf). The defects they keep are numbered in ``daharness.families.workspace.scorers.ml``'s docstring; where the
official code calls a scikit-learn metric, so does this module, and where it computes something
differently from the library (log loss, kappa, silhouette), the difference is kept and named here.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from daharness.families.workspace.scorers.ml_metrics import (
    PROBABILITY_EPS,
    SILHOUETTE_SAMPLE,
    MetricError,
    as_column,
    as_frame,
)

if TYPE_CHECKING:  # the libraries are imported where used, so that registering the scorers is cheap
    import numpy as np
    import pandas as pd
    from sklearn.preprocessing import LabelEncoder


def official_normalize(raw: float, lower_bound: float, upper_bound: float) -> float:
    """The official scaling, the same for every metric: ``clip((raw - lower) / (upper - lower), 0, 1)``.

    Defect 1: ``LOWER_METRICS`` is defined officially but never used, so error metrics are scaled as if
    higher were better: a perfect log loss or rmsle (0, below ``lower_bound``) scores 0, and a loss at or
    above ``upper_bound`` scores 1. Equal bounds divide by zero, which the official evaluator's catch-all
    scores 0 (``MetricError`` here).
    """
    if upper_bound == lower_bound:
        raise MetricError("lower_bound equals upper_bound: the official scaling divides by zero")
    return min(max((raw - lower_bound) / (upper_bound - lower_bound), 0.0), 1.0)


def official_metric(
    name: str, y_true: Any, y_pred: Any, features: Any, average: str, balanced: bool
) -> float:
    """One metric as ``CalculateML.calculate_<metric>`` computes it; a table (DataFrame or 2-D array) is
    handled as the competition path handles one."""
    import numpy as np
    from sklearn.metrics import (
        mean_absolute_error,
        mean_squared_error,
        mean_squared_log_error,
        median_absolute_error,
        r2_score,
    )

    if name == "silhouette":
        if features is None:
            raise ValueError("silhouette needs the clustered points (features=...)")
        return _official_silhouette(as_frame(features), np.asarray(as_column(y_pred, "cluster labels")))
    table = _is_table(y_true) or _is_table(y_pred)
    if name in ("f1", "accuracy"):
        if table and name == "accuracy":
            raise MetricError("the official accuracy turns a table into a dict, which accuracy_score rejects")
        truth, pred = as_frame(y_true).iloc[:, 0], as_frame(y_pred).iloc[:, 0]
        return _official_classification(name, truth, pred, average)
    truth = as_frame(y_true).to_numpy() if table else as_column(y_true, "gold").to_numpy()
    pred = as_frame(y_pred).to_numpy() if table else as_column(y_pred, "predictions").to_numpy()
    if name == "r2":
        if not np.issubdtype(pred.dtype, np.number):
            raise MetricError("result target contains non-numeric element")
        return r2_score(truth, pred)
    if name == "mae":
        return mean_absolute_error(truth, pred)
    if name == "medae":
        return median_absolute_error(truth, pred)
    if name == "rmse":
        return math.sqrt(mean_squared_error(truth, pred))
    if name == "rmsle":
        return mean_squared_log_error(truth, np.clip(pred, 0, None))  # no square root: defect 3
    if name == "smape":
        return _official_smape(truth, pred)
    if name == "roc_auc":
        return _official_roc_auc(truth, pred)
    if name == "logloss":
        return _official_logloss(truth, pred, balanced)
    return _official_qwk(truth, pred)


def _is_table(values: Any) -> bool:
    import numpy as np
    import pandas as pd

    return isinstance(values, pd.DataFrame) or (not isinstance(values, pd.Series) and np.ndim(values) == 2)


def _official_codes(values: pd.Series, encoder: LabelEncoder) -> list[Any] | np.ndarray | None:
    """The official ``convert_to_numeric``: floats truncated, strings label-encoded (fit on the first
    column converted, which is the gold one), anything unencodable ``None``."""
    dtype = str(values.dtype)
    if "float" in dtype:
        if values.isna().any():
            raise MetricError("the official evaluator crashes on missing values in a float label column")
        return list(values.astype(int))
    if "int" in dtype:
        return list(values)
    if "bool" in dtype.lower():
        return list(values.astype(int))
    try:
        items = [item.lower().strip() for item in values]
        return encoder.transform(items) if hasattr(encoder, "classes_") else encoder.fit_transform(items)
    except Exception:
        return None


def _official_classification(name: str, truth: pd.Series, pred: pd.Series, average: str) -> float:
    import numpy as np
    from sklearn.metrics import accuracy_score, f1_score
    from sklearn.preprocessing import LabelEncoder

    encoder = LabelEncoder()
    gold_codes = _official_codes(truth, encoder)
    pred_codes = _official_codes(pred, encoder)
    if name == "accuracy" and isinstance(gold_codes, np.ndarray):
        gold_codes = pred_codes  # defect 4: the official code compares the predictions with themselves
    if gold_codes is None or pred_codes is None:
        raise MetricError("labels could not be encoded (a predicted label not among the gold labels?)")
    if name == "accuracy":
        return accuracy_score(gold_codes, pred_codes)
    return f1_score(gold_codes, pred_codes, average=average or "weighted")


def _official_smape(truth: np.ndarray, pred: np.ndarray) -> float:
    import numpy as np

    pred = pred.reshape(-1, 1) if pred.ndim == 1 else pred
    truth = truth.reshape(-1, 1) if truth.ndim == 1 else truth
    numerator = np.abs(pred - truth)
    denominator = ((np.abs(pred) + np.abs(truth)) / 2.0).astype(float)
    denominator[denominator == 0] = np.nan
    # A NaN prediction makes the denominator NaN, which is then taken for 0/0: defect 10.
    ratio = np.where(np.isnan(denominator), 0, numerator / denominator)
    return float(np.nanmean(ratio)) * 100


def _official_roc_auc(truth: np.ndarray, pred: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    pred = pred.reshape(-1, 1) if pred.ndim == 1 else pred
    truth = truth.reshape(-1, 1) if truth.ndim == 1 else truth
    total = sum(roc_auc_score(truth[:, col], pred[:, col]) for col in range(truth.shape[1]))
    return float(total / truth.shape[1])


def _official_logloss(truth: np.ndarray, pred: np.ndarray, balanced: bool) -> float:
    import numpy as np

    pred = pred.astype(float)
    if balanced:
        axis = 0 if pred.ndim == 1 else 1
        pred = pred / pred.sum(axis=axis, keepdims=True)
    else:
        pred = pred / (pred.sum(axis=1, keepdims=True) + PROBABILITY_EPS)
    pred = np.clip(pred, PROBABILITY_EPS, 1 - PROBABILITY_EPS)
    if pred.shape != truth.shape:
        raise MetricError("Shape mismatch: result and gold have different shapes.")
    hit = np.nonzero(truth * pred)
    logs = np.zeros_like(pred, dtype=float)
    logs[hit] = np.log2(pred[hit])  # log2 and the /2 below: defect 9
    per_class = logs.sum(axis=0)
    divisor = np.count_nonzero(truth, axis=0) if balanced else truth.shape[0]
    return float(-np.sum(per_class / divisor) / 2)


def _official_qwk(truth: np.ndarray, pred: np.ndarray) -> float:
    import numpy as np
    from sklearn.metrics import confusion_matrix

    pred = pred.flatten() if pred.ndim != 1 else pred
    truth = truth.flatten() if truth.ndim != 1 else truth
    if truth.dtype != pred.dtype:
        pred = pred.astype(truth.dtype)
    size = len(np.unique(truth))
    # Labels 0..N-1 on the unshifted ratings: defect 8.
    observed = confusion_matrix(truth, pred, labels=np.arange(size))
    weights = np.array([[(i - j) ** 2 / (size - 1) ** 2 for j in range(size)] for i in range(size)])
    if min(truth) != min(pred) or max(truth) != max(pred):
        raise MetricError("prediction and gold label ranges differ (the official evaluator then scores 0)")
    low = min(truth)
    if low:
        truth, pred = truth - low, pred - low
    expected = np.outer(np.bincount(truth, minlength=size), np.bincount(pred, minlength=size))
    expected = expected / expected.sum() * observed.sum()
    return float(1 - np.sum(weights * observed) / np.sum(weights * expected))


def _official_silhouette(points: pd.DataFrame, labels: np.ndarray) -> float:
    import numpy as np
    import pandas as pd
    from sklearn.metrics import pairwise_distances
    from sklearn.preprocessing import LabelEncoder
    from sklearn.utils import resample

    points = points.copy()
    for column in points.columns:
        try:
            pd.to_numeric(points[column])
        except ValueError:
            points[column] = LabelEncoder().fit_transform(points[column])
    if len(np.unique(labels)) == 1:
        raise MetricError("only one cluster; silhouette needs two or more")
    if len(labels) > SILHOUETTE_SAMPLE:
        points, labels = resample(
            points, labels, n_samples=SILHOUETTE_SAMPLE, random_state=42, stratify=labels
        )
    distances = pairwise_distances(points)
    clusters = np.unique(labels)
    # Mean distance of every point to every cluster, its own cluster including itself: defect 7.
    means = np.column_stack([distances[:, labels == cluster].mean(axis=1) for cluster in clusters])
    rows, own = np.arange(len(labels)), np.searchsorted(clusters, labels)
    inner = means[rows, own]
    means[rows, own] = np.inf
    nearest = means.min(axis=1)
    score = float(np.mean((nearest - inner) / np.maximum(inner, nearest)))
    return 0.0 if score < 0 else score
