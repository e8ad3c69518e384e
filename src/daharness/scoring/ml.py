"""Machine-learning scoring (DA-Code): a metric of the agent's predictions, normalized between two bounds.

The agent leaves a CSV of predictions (or, for clustering, of features and cluster labels); the metric is
computed against the gold CSV and mapped to 0..1 between a baseline and a best bound (DA-Code, Appendix
C.2): ``clip((raw - baseline) / (best - baseline), 0, 1)``.

Two modes:

* ``corrected`` (default): rows are aligned by an id column when there is one, labels are compared by
  value (``1``, ``1.0``, ``True`` and ``"true"`` are one label; strings ignore case and surrounding
  space, as officially), metrics follow their standard definitions, and every error metric is
  normalized so that a smaller error scores higher.
* ``compat`` follows the official evaluator (``da_agent/evaluators/metrics/ml.py`` and
  ``script/ml_script.py`` of ``yiyihum/da-code``) so that per-task scores equal the official ones,
  including its defects.

Defects of the official evaluator, reproduced in ``compat`` and fixed in ``corrected``:

1. Error metrics are normalized the wrong way round. DA-Code's configs give them ``lower_bound`` = best
   (small) and ``upper_bound`` = baseline (large); the official code scores 1 at or below the lower
   bound and 0 at or above the upper one, but in between uses ``(raw - lower) / (upper - lower)``,
   which grows with the error: an error just under the baseline scores almost 1, one just over the best
   bound almost 0.
2. ``rmse`` is missing from the official list of lower-is-better metrics, so it is treated as
   higher-is-better end to end: an error at or above the baseline scores 1, a perfect prediction 0.
3. ``rmsle`` is ``mean_squared_log_error`` without the square root (an MSLE).
4. ``accuracy`` scores 1.0 for any encodable prediction when gold labels are strings: the gold column is
   label-encoded into a numpy array, and ``if isinstance(gold, np.ndarray): gold = result`` then
   replaces the gold labels by the predictions before ``accuracy_score``. "Encodable" means numeric or
   boolean predictions, or strings all seen among the gold labels (case and space ignored); an unseen
   string label scores 0.
5. Float label columns are truncated to int before ``f1``/``accuracy`` (a probability 0.7 becomes class
   0), and a float column with a missing value crashes the evaluator.
6. ``compare_ml`` never aligns rows: ``sort_values`` is called without keeping its result, so rows are
   compared by position even when the files carry ids. (``compare_competition_ml`` does sort by id.)
7. ``silhouette`` (clustering) keeps the cluster-label column among the features, averages each point's
   distance to its own cluster including the point itself (0), and gives a singleton cluster's point
   the score 1 instead of 0; all three inflate the score. Negative silhouettes are clamped to 0.
8. ``quadratic_weighted_kappa`` builds its confusion matrix with labels ``0..N-1`` before shifting the
   ratings to start at 0, so with ratings ``1..N`` the top rating is dropped and the rest are
   misplaced; it casts (truncates) predictions to the gold dtype, and scores 0 whenever the predictions'
   minimum or maximum differs from the gold's.
9. ``logloss_total`` / ``logloss_class`` use ``log2`` and always divide by 2: the total variant is 0.72
   times the standard (natural-log) log loss, the class-balanced one is right only for two classes.
10. ``smape`` counts a missing (NaN) prediction as a perfect one (its denominator turns NaN and is then
    treated as the 0/0 case).
11. In ``compare_competition_ml``, ``accuracy`` receives the whole table, which the official code turns
    into a dict that ``accuracy_score`` rejects: accuracy competition tasks always score 0.
12. ``compare_ml`` ignores the ``average`` option: its ``f1`` is always weighted.

Not reproduced: the official multi-class ``roc_auc_score`` path (``roc_auc_score`` without
``multi_class`` always fails) because no DA-Code task reaches it (its ``binary`` path, a mean of
per-column AUCs, is what both modes compute); the official detection of the target column by task type
(daharness has no task type; see ``score_ml``); fuzzy column-name matching, approximated by comparing
names without case and punctuation.
"""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from sklearn.metrics import (
    accuracy_score,
    confusion_matrix,
    f1_score,
    mean_absolute_error,
    mean_squared_error,
    mean_squared_log_error,
    median_absolute_error,
    pairwise_distances,
    r2_score,
    roc_auc_score,
    silhouette_score,
)
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import resample

from daharness.core.registry import scorer
from daharness.core.score import Score
from daharness.core.scoring import ScoringContext
from daharness.scoring.modes import WORKSPACE_MODES
from daharness.scoring.outputs import OutputFileOptions, nothing_collected

Mode = Literal["corrected", "compat"]
MODES: tuple[Mode, ...] = ("corrected", "compat")
Evaluator = Literal["compare_ml", "compare_competition_ml"]
Average = Literal["weighted", "macro", "micro", "binary"]

METRICS = (
    "f1", "accuracy", "r2", "silhouette", "roc_auc", "logloss", "quadratic_weighted_kappa",
    "mae", "rmse", "rmsle", "medae", "smape",
)  # fmt: skip
LOWER_IS_BETTER = frozenset({"mae", "rmse", "rmsle", "medae", "smape", "logloss"})
# Names used by DA-Code's task configs; logloss_class is the class-balanced log loss.
OFFICIAL_NAMES = {"roc_auc_score": "roc_auc", "logloss_total": "logloss", "logloss_class": "logloss"}

_OFFICIAL_LOWER = frozenset({"mae", "rmsle", "medae", "smape", "logloss"})  # no rmse: defect 2
_MULTI_COLUMN = frozenset({"r2", "mae", "rmse", "rmsle", "medae", "smape", "roc_auc", "logloss"})
_LABEL_NAMES = ("label", "labels", "class", "classes", "result", "results")  # the official fallback names
_SILHOUETTE_SAMPLE = 6000
_EPS = 1e-15
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_ID_NAME = re.compile(r"(?:.*[_\s.\-])?id|uuid", re.IGNORECASE)
_CAMEL_ID = re.compile(r".*[a-z0-9]I[dD]")
_MISSING = "<missing>"


class MetricError(ValueError):
    """The metric cannot be computed from these inputs; ``score_ml`` turns it into a score of 0."""


# ---- metrics ----------------------------------------------------------------------------------------


def metric_value(
    metric: str,
    y_true: Any,
    y_pred: Any,
    *,
    mode: Mode = "corrected",
    features: Any = None,
    average: Average = "weighted",
) -> float:
    """The raw value of one metric.

    Args:
        metric: one of ``METRICS`` or an official name in ``OFFICIAL_NAMES`` (``logloss_class`` is the
            class-balanced log loss: the mean over classes of each class's mean loss).
        y_true: gold values, a column (list, array, Series) or a table (2-D array, DataFrame) for
            multi-column metrics: one-hot gold for ``roc_auc``/``logloss``, several targets for the
            regression metrics (averaged column by column). Ignored by ``silhouette``.
        y_pred: predictions of the same shape; class probabilities for ``logloss`` (one column = the
            probability of the positive class), scores for ``roc_auc``, cluster labels for
            ``silhouette``.
        mode: ``corrected`` (standard definitions) or ``compat`` (the official computations, defects
            included; a DataFrame is then handled as the official competition path handles a table,
            e.g. ``f1`` keeps its first column and ``accuracy`` fails; so does any 2-D array).
        features: the points that were clustered, required by ``silhouette`` (one row per label).
        average: how ``f1`` averages over classes; ``binary`` takes ``1``/true as the positive class.

    Corrected rules: class labels compare by value, strings without case or surrounding space, and a
    missing prediction is a wrong label; numeric metrics reject non-numeric or missing values;
    ``rmsle`` clips negative predictions to 0 (as officially) and takes the square root; ``roc_auc`` is
    the mean of per-column AUCs (the label that sorts last is positive); ``logloss`` clips
    probabilities to ``[1e-15, 1 - 1e-15]``, rescales rows to sum 1 and uses the natural log;
    ``quadratic_weighted_kappa`` rounds predictions to whole ratings and weighs disagreements by the
    squared rating distance (1.0 when every rating is the same and all agree); ``silhouette`` is
    scikit-learn's (on a sample of 6000 rows above that size, seed 42); ``smape`` is in percent, with
    0/0 counted as 0.

    Raises ``MetricError`` (a ``ValueError``) when the metric cannot be computed, ``ValueError`` for an
    unknown metric or mode.
    """
    name, balanced = _resolve_metric(metric)
    if mode not in MODES:
        raise ValueError(f"unknown ML scoring mode {mode!r}; choose one of {', '.join(MODES)}")
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            if mode == "compat":
                value = _official_metric(name, y_true, y_pred, features, average, balanced)
            else:
                value = _corrected_metric(name, y_true, y_pred, features, average, balanced)
    except MetricError:
        raise
    except Exception as exc:  # the official code catches everything here too
        raise MetricError(f"{type(exc).__name__}: {exc}") from exc
    return float(value)


def _resolve_metric(metric: str) -> tuple[str, bool]:
    key = metric.strip().lower().replace(" ", "_")
    name = OFFICIAL_NAMES.get(key, key)
    if name not in METRICS:
        raise ValueError(f"unknown ML metric {metric!r}; choose one of {', '.join(METRICS)}")
    return name, key == "logloss_class"


def _frame(values: Any) -> pd.DataFrame:
    if isinstance(values, pd.DataFrame):
        return values.reset_index(drop=True)
    if isinstance(values, pd.Series):
        return values.reset_index(drop=True).to_frame()
    array = np.asarray(values, dtype=object if _has_strings(values) else None)
    return pd.DataFrame(array.reshape(len(array), -1) if array.ndim else array.reshape(1, 1))


def _has_strings(values: Any) -> bool:
    return isinstance(values, list | tuple) and any(isinstance(v, str) for v in np.ravel(values))


def _column(values: Any, what: str) -> pd.Series:
    frame = _frame(values)
    if frame.shape[1] != 1:
        raise MetricError(f"{what}: expected one column, got {frame.shape[1]}")
    return frame.iloc[:, 0]


def _same_length(y_true: pd.DataFrame | pd.Series, y_pred: pd.DataFrame | pd.Series) -> None:
    if len(y_true) != len(y_pred):
        raise MetricError(f"{len(y_pred)} predictions for {len(y_true)} gold rows")


# ---- corrected metrics ------------------------------------------------------------------------------


def _corrected_metric(
    name: str, y_true: Any, y_pred: Any, features: Any, average: str, balanced: bool
) -> float:
    if name == "silhouette":
        return _silhouette(features, y_pred)
    if name in ("f1", "accuracy"):
        truth, pred = _labels(_column(y_true, "gold"), "gold"), _labels(_column(y_pred, "predictions"))
        _same_length(truth, pred)
        if name == "accuracy":
            return float(np.mean(truth == pred))
        return _f1(truth, pred, average)
    if name == "quadratic_weighted_kappa":
        return _qwk(_column(y_true, "gold"), _column(y_pred, "predictions"))
    if name == "roc_auc":
        return _roc_auc(y_true, y_pred)
    if name == "logloss":
        return _logloss(y_true, y_pred, balanced)
    truth, pred = _numbers(y_true, "gold"), _numbers(y_pred, "predictions")
    if truth.shape != pred.shape:
        raise MetricError(f"predictions have shape {pred.shape}, gold {truth.shape}")
    if name == "r2":
        if len(truth) < 2:
            raise MetricError("r2 needs at least two rows")
        return r2_score(truth, pred)
    if name == "mae":
        return mean_absolute_error(truth, pred)
    if name == "medae":
        return median_absolute_error(truth, pred)
    if name == "rmse":
        return float(np.mean(np.sqrt(np.mean((pred - truth) ** 2, axis=0))))
    if name == "rmsle":
        if (truth <= -1).any():
            raise MetricError("rmsle needs gold values above -1")
        # Negative predictions are clipped to 0, as officially (log1p is undefined below -1).
        errors = (np.log1p(np.clip(pred, 0, None)) - np.log1p(truth)) ** 2
        return float(np.mean(np.sqrt(np.mean(errors, axis=0))))
    # smape, in percent; 0/0 counts as no error
    denominator = (np.abs(pred) + np.abs(truth)) / 2
    ratio = np.divide(np.abs(pred - truth), denominator, out=np.zeros_like(truth), where=denominator != 0)
    return float(np.mean(ratio) * 100)


def _label(value: Any) -> str | None:
    """One class label as a comparable string: numbers by value, booleans as 1/0, strings folded."""
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
    if _NUMBER.fullmatch(text):
        return _label(float(text))
    return text if text not in ("", "nan") else None


def _labels(values: pd.Series, what: str | None = None) -> np.ndarray:
    labels = [_label(v) for v in values]
    missing = sum(label is None for label in labels)
    if missing and what is not None:
        raise MetricError(f"{what} has {missing} missing labels")
    return np.array([_MISSING if label is None else label for label in labels], dtype=object)


def _f1(truth: np.ndarray, pred: np.ndarray, average: str) -> float:
    if average != "binary":
        return float(f1_score(truth, pred, average=average, zero_division=0))
    if "1" not in set(truth):
        raise MetricError("binary f1 needs 1/true among the gold labels (the positive class)")
    true_positive = np.sum((pred == "1") & (truth == "1"))
    wrong = np.sum((pred == "1") != (truth == "1"))
    return float(2 * true_positive / (2 * true_positive + wrong))


def _numbers(values: Any, what: str) -> np.ndarray:
    frame = _frame(values)
    try:
        array = frame.apply(pd.to_numeric).to_numpy(dtype=float)
    except (ValueError, TypeError):
        raise MetricError(f"{what} has non-numeric values") from None
    if missing := int(np.isnan(array).sum()):
        raise MetricError(f"{what} has {missing} missing values")
    return array


def _qwk(y_true: pd.Series, y_pred: pd.Series) -> float:
    _same_length(y_true, y_pred)
    truth, pred = _numbers(y_true, "gold")[:, 0], _numbers(y_pred, "predictions")[:, 0]
    if not np.all(truth == np.round(truth)):
        raise MetricError("quadratic weighted kappa needs whole-number gold ratings")
    truth, pred = truth.astype(int), np.rint(pred).astype(int)
    low = min(truth.min(), pred.min())
    size = max(truth.max(), pred.max()) - low + 1
    observed = np.zeros((size, size))
    np.add.at(observed, (truth - low, pred - low), 1)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / len(truth)
    ratings = np.arange(size)
    weights = (ratings[:, None] - ratings[None, :]) ** 2
    disagreement, chance = float(np.sum(weights * observed)), float(np.sum(weights * expected))
    if chance == 0:  # one rating everywhere: perfect agreement or nothing to measure against
        return 1.0 if disagreement == 0 else 0.0
    return 1 - disagreement / chance


def _roc_auc(y_true: Any, y_pred: Any) -> float:
    truth, pred = _frame(y_true), _numbers(y_pred, "predictions")
    if truth.shape != pred.shape:
        raise MetricError(
            f"predictions have shape {pred.shape}, gold {truth.shape} "
            "(multi-class AUC needs one-hot gold, one score column per class)"
        )
    scores = []
    for index in range(truth.shape[1]):
        labels = _labels(truth.iloc[:, index], "gold")
        if len(set(labels)) != 2:
            raise MetricError(f"gold column {index} has {len(set(labels))} classes; AUC needs two")
        scores.append(roc_auc_score(labels == max(labels), pred[:, index]))
    return float(np.mean(scores))


def _logloss(y_true: Any, y_pred: Any, balanced: bool) -> float:
    pred = _numbers(y_pred, "predictions")
    if pred.shape[1] == 1:  # the probability of the positive class
        labels = _labels(_column(y_true, "gold"), "gold")
        if not set(labels) <= {"0", "1"}:
            raise MetricError("a single probability column needs 0/1 (or boolean) gold labels")
        positive = (labels == "1").astype(float)[:, None]
        truth = np.hstack([1 - positive, positive])
        pred = np.clip(pred, _EPS, 1 - _EPS)
        pred = np.hstack([1 - pred, pred])
    else:
        truth = _numbers(y_true, "gold")
        if truth.shape[1] == 1:  # class indices 0..k-1
            if not set(np.unique(truth)) <= set(range(pred.shape[1])):
                raise MetricError(f"gold class indices must be 0..{pred.shape[1] - 1}")
            truth = np.eye(pred.shape[1])[truth[:, 0].astype(int)]
        pred = np.clip(pred, _EPS, 1 - _EPS)
        pred = pred / pred.sum(axis=1, keepdims=True)
    if truth.shape != pred.shape:
        raise MetricError(f"predictions have shape {pred.shape}, gold {truth.shape}")
    losses = -truth * np.log(pred)
    if not balanced:
        return float(np.mean(losses.sum(axis=1)))
    counts = truth.sum(axis=0)
    present = counts > 0
    return float(np.mean(losses.sum(axis=0)[present] / counts[present]))


def _silhouette(features: Any, labels: Any) -> float:
    if features is None:
        raise ValueError("silhouette needs the clustered points (features=...)")
    points = _numbers(features, "features")
    clusters = _labels(_column(labels, "cluster labels"), "cluster labels")
    if len(points) != len(clusters):
        raise MetricError(f"{len(clusters)} cluster labels for {len(points)} points")
    count = len(set(clusters))
    if not 2 <= count < len(points):
        raise MetricError(f"silhouette needs 2 to n-1 clusters, got {count} for {len(points)} points")
    sample = _SILHOUETTE_SAMPLE if len(points) > _SILHOUETTE_SAMPLE else None
    return float(silhouette_score(points, clusters, sample_size=sample, random_state=42))


# ---- official (compat) metrics ----------------------------------------------------------------------


def _official_metric(
    name: str, y_true: Any, y_pred: Any, features: Any, average: str, balanced: bool
) -> float:
    if name == "silhouette":
        if features is None:
            raise ValueError("silhouette needs the clustered points (features=...)")
        return _official_silhouette(_frame(features), np.asarray(_column(y_pred, "cluster labels")))
    table = _is_table(y_true) or _is_table(y_pred)
    if name in ("f1", "accuracy"):
        if table and name == "accuracy":
            raise MetricError("the official accuracy turns a table into a dict, which accuracy_score rejects")
        truth, pred = _frame(y_true).iloc[:, 0], _frame(y_pred).iloc[:, 0]
        return _official_classification(name, truth, pred, average)
    truth = _frame(y_true).to_numpy() if table else _column(y_true, "gold").to_numpy()
    pred = _frame(y_pred).to_numpy() if table else _column(y_pred, "predictions").to_numpy()
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
    pred = pred.reshape(-1, 1) if pred.ndim == 1 else pred
    truth = truth.reshape(-1, 1) if truth.ndim == 1 else truth
    numerator = np.abs(pred - truth)
    denominator = ((np.abs(pred) + np.abs(truth)) / 2.0).astype(float)
    denominator[denominator == 0] = np.nan
    # A NaN prediction makes the denominator NaN, which is then taken for 0/0: defect 10.
    ratio = np.where(np.isnan(denominator), 0, numerator / denominator)
    return float(np.nanmean(ratio)) * 100


def _official_roc_auc(truth: np.ndarray, pred: np.ndarray) -> float:
    pred = pred.reshape(-1, 1) if pred.ndim == 1 else pred
    truth = truth.reshape(-1, 1) if truth.ndim == 1 else truth
    total = sum(roc_auc_score(truth[:, col], pred[:, col]) for col in range(truth.shape[1]))
    return float(total / truth.shape[1])


def _official_logloss(truth: np.ndarray, pred: np.ndarray, balanced: bool) -> float:
    pred = pred.astype(float)
    if balanced:
        axis = 0 if pred.ndim == 1 else 1
        pred = pred / pred.sum(axis=axis, keepdims=True)
    else:
        pred = pred / (pred.sum(axis=1, keepdims=True) + _EPS)
    pred = np.clip(pred, _EPS, 1 - _EPS)
    if pred.shape != truth.shape:
        raise MetricError("Shape mismatch: result and gold have different shapes.")
    hit = np.nonzero(truth * pred)
    logs = np.zeros_like(pred, dtype=float)
    logs[hit] = np.log2(pred[hit])  # log2 and the /2 below: defect 9
    per_class = logs.sum(axis=0)
    divisor = np.count_nonzero(truth, axis=0) if balanced else truth.shape[0]
    return float(-np.sum(per_class / divisor) / 2)


def _official_qwk(truth: np.ndarray, pred: np.ndarray) -> float:
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
    points = points.copy()
    for column in points.columns:
        try:
            pd.to_numeric(points[column])
        except ValueError:
            points[column] = LabelEncoder().fit_transform(points[column])
    if len(np.unique(labels)) == 1:
        raise MetricError("only one cluster; silhouette needs two or more")
    if len(labels) > _SILHOUETTE_SAMPLE:
        points, labels = resample(
            points, labels, n_samples=_SILHOUETTE_SAMPLE, random_state=42, stratify=labels
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


# ---- normalization ----------------------------------------------------------------------------------


def normalize_score(
    raw: float, *, metric: str, lower_bound: float, upper_bound: float, mode: Mode = "corrected"
) -> float:
    """Map a raw metric value to 0..1 between the task's two bounds.

    Args:
        raw: the metric value.
        metric: the metric's name, which decides whether lower is better.
        lower_bound, upper_bound: the task's bounds. For higher-is-better metrics the lower bound is the
            baseline and the upper one the best; DA-Code's configs write error metrics the other way
            (lower bound = best, i.e. the smaller error). ``corrected`` therefore takes the direction
            from the metric, not from the order of the bounds: the best is the larger bound for
            higher-is-better metrics and the smaller one for error metrics, whichever argument holds it.
        mode: ``corrected`` gives ``clip((raw - baseline) / (best - baseline), 0, 1)`` (with equal bounds,
            1 when ``raw`` is at least as good, else 0); ``compat`` reproduces the official rule with its
            defects 1 and 2 (see the module docstring).

    A NaN raw value scores 0.
    """
    name, _ = _resolve_metric(metric)
    if math.isnan(raw):
        return 0.0
    if mode == "compat":
        lower = name in _OFFICIAL_LOWER
        if (lower and raw <= lower_bound) or (not lower and raw >= upper_bound):
            return 1.0
        if (lower and raw >= upper_bound) or (not lower and raw <= lower_bound):
            return 0.0
        return (raw - lower_bound) / (upper_bound - lower_bound)
    if mode != "corrected":
        raise ValueError(f"unknown ML scoring mode {mode!r}; choose one of {', '.join(MODES)}")
    lower = name in LOWER_IS_BETTER
    best = min(lower_bound, upper_bound) if lower else max(lower_bound, upper_bound)
    baseline = max(lower_bound, upper_bound) if lower else min(lower_bound, upper_bound)
    if best == baseline:
        return 1.0 if (raw <= best if lower else raw >= best) else 0.0
    return min(1.0, max(0.0, (raw - baseline) / (best - baseline)))


# ---- the scorer -------------------------------------------------------------------------------------


class _Unscorable(Exception):
    """The files cannot be scored; the message becomes the explanation of a 0 score."""


def score_ml(
    predicted: Path,
    gold: Path | None,
    *,
    metric: str,
    lower_bound: float,
    upper_bound: float,
    mode: Mode = "corrected",
    id_column: str | None = None,
    target_column: str | None = None,
    average: Average = "weighted",
    evaluator: Evaluator = "compare_ml",
) -> Score:
    """Score a predictions CSV against a gold CSV with a metric normalized between two bounds.

    Args:
        predicted: the agent's CSV.
        gold: the gold CSV; ignored (may be None) for ``silhouette``, which reads only ``predicted``.
        metric: one of ``METRICS`` (or an official name, see ``OFFICIAL_NAMES``).
        lower_bound, upper_bound: the task's bounds, see ``normalize_score``.
        mode: ``corrected`` (default) or ``compat`` (the official rules and defects).
        id_column: the column that identifies rows. Without it, ``corrected`` looks for a column present
            in both files (names compared without case) named ``id``/``uuid``, ending in ``id`` after a
            separator (``row_id``, ``Row ID``) or as a camel-case word (``PassengerId``, ``customerID``),
            whose gold values are unique and not missing; the first one in gold order wins. With an id,
            rows are matched by id (both files must hold the same ids, once each); without one, by
            position. ``compat`` never uses ids with ``compare_ml`` (defect 6).
        target_column: the gold column to predict (matched without case or punctuation, as the official
            fuzzy match does); the predicted file must have a column of the same name. Without it, the
            target is the only gold column besides the id, else the one named label/class/result (or
            their plurals); metrics that accept several columns (regression metrics, ``roc_auc``,
            ``logloss``) then use every gold column besides the id, averaged column by column. For
            ``silhouette`` it names the cluster-label column (default: ``Cluster``, else the only column
            with few distinct values, else one named like label/class/result).
        average: ``f1`` averaging (``compat`` with ``compare_ml`` always uses ``weighted``: defect 12).
        evaluator: the official function the task's config names in ``func``; only ``compat`` uses it.
            ``compare_competition_ml`` requires both files to have the same columns, sorts rows by the
            first gold column whose name contains ``id`` when more than 60% of its values are distinct
            (the id sets must then match), and passes every other column, sorted by name, to the metric.

    A missing or unreadable file, a missing column, a row-count or id mismatch, or a metric that cannot
    be computed scores 0 with an explanation; nothing here raises for bad submissions (an unknown metric
    or mode raises ``ValueError``). ``details`` holds the raw metric, the bounds, the normalized score,
    the rows used, the target and id columns.
    """
    name, _ = _resolve_metric(metric)
    if mode not in MODES:
        raise ValueError(f"unknown ML scoring mode {mode!r}; choose one of {', '.join(MODES)}")
    details: dict[str, Any] = {
        "mode": mode,
        "metric": metric,
        "lower_bound": lower_bound,
        "upper_bound": upper_bound,
        "lower_is_better": name in (_OFFICIAL_LOWER if mode == "compat" else LOWER_IS_BETTER),
    }
    try:
        predicted_frame = _read_csv(predicted, "predicted")
        if name == "silhouette":
            features, y_pred = _cluster_columns(predicted_frame, target_column, id_column, mode, details)
            y_true: Any = None
        else:
            if gold is None:
                raise _Unscorable("no gold file given")
            gold_frame = _read_csv(gold, "gold")
            if mode == "compat" and evaluator == "compare_competition_ml":
                y_true, y_pred = _official_competition_columns(predicted_frame, gold_frame, details)
            elif mode == "compat":
                y_true, y_pred = _official_columns(predicted_frame, gold_frame, target_column, details)
            else:
                y_true, y_pred = _aligned_columns(
                    predicted_frame, gold_frame, name, id_column, target_column, details
                )
            features = None
        details["rows"] = len(y_pred)
        if mode == "compat" and evaluator == "compare_ml":
            average = "weighted"
        raw = metric_value(metric, y_true, y_pred, mode=mode, features=features, average=average)
    except (_Unscorable, MetricError) as exc:
        return Score(value=0.0, explanation=str(exc), details=details)
    details["raw"] = raw
    if not math.isfinite(raw):
        return Score(value=0.0, explanation=f"{metric} is {raw}", details=details)
    value = normalize_score(raw, metric=metric, lower_bound=lower_bound, upper_bound=upper_bound, mode=mode)
    details["normalized"] = value
    return Score(
        value=value,
        explanation=f"{metric} = {raw:.6g} on {details['rows']} rows, normalized between "
        f"{lower_bound:g} and {upper_bound:g}: {value:.4f}",
        details=details,
    )


def _read_csv(path: Path, what: str) -> pd.DataFrame:
    if not Path(path).is_file():
        raise _Unscorable(f"{what} file {Path(path).name} not found")
    try:
        frame = pd.read_csv(path)
    except (ValueError, OSError, UnicodeDecodeError) as exc:  # pandas' parser errors are ValueErrors
        raise _Unscorable(f"{what} file {Path(path).name} is not a readable CSV: {exc}") from None
    if frame.empty:
        raise _Unscorable(f"{what} file {Path(path).name} has no rows")
    return frame


def _key(name: Any) -> str:
    return re.sub(r"[^0-9a-z]", "", str(name).casefold())


def _find_column(columns: Any, wanted: str) -> str | None:
    """Exact name, else the same name without case and punctuation, else with or without a plural s."""
    columns = list(columns)
    if wanted in columns:
        return wanted
    key = _key(wanted)
    for candidates in ({key}, {key + "s", key.removesuffix("s")}):
        for column in columns:
            if _key(column) in candidates:
                return column
    return None


def _is_index_artifact(column: Any) -> bool:
    return str(column).startswith("Unnamed:")


def _looks_like_id(column: Any) -> bool:
    name = str(column).strip()
    return bool(_ID_NAME.fullmatch(name) or _CAMEL_ID.fullmatch(name))


def _detect_id(predicted: pd.DataFrame, gold: pd.DataFrame, id_column: str | None) -> tuple[Any, Any] | None:
    if id_column is not None:
        gold_id, predicted_id = (
            _find_column(gold.columns, id_column),
            _find_column(predicted.columns, id_column),
        )
        if gold_id is None or predicted_id is None:
            where = "gold" if gold_id is None else "predicted"
            raise _Unscorable(f"{where} file has no id column {id_column!r}")
        return gold_id, predicted_id
    for column in gold.columns:
        match = _find_column(predicted.columns, column) if _looks_like_id(column) else None
        if match is not None and gold[column].notna().all() and gold[column].is_unique:
            return column, match
    return None


def _id_keys(values: pd.Series, numeric: bool) -> list[Any]:
    if numeric:
        return [float(v) for v in values]
    return [str(v).strip() for v in values]


def _align_by_id(
    predicted: pd.DataFrame, gold: pd.DataFrame, gold_id: Any, predicted_id: Any
) -> pd.DataFrame:
    numeric = pd.api.types.is_numeric_dtype(gold[gold_id]) and pd.api.types.is_numeric_dtype(
        predicted[predicted_id]
    )
    gold_keys, predicted_keys = _id_keys(gold[gold_id], numeric), _id_keys(predicted[predicted_id], numeric)
    if len(set(predicted_keys)) != len(predicted_keys):
        raise _Unscorable(f"predicted ids in {predicted_id!r} are not unique")
    missing, extra = set(gold_keys) - set(predicted_keys), set(predicted_keys) - set(gold_keys)
    if missing or extra:
        raise _Unscorable(
            f"ids differ from gold: {len(missing)} missing (e.g. {_sample(missing)}), "
            f"{len(extra)} unexpected (e.g. {_sample(extra)})"
        )
    position = {key: index for index, key in enumerate(predicted_keys)}
    return predicted.iloc[[position[key] for key in gold_keys]].reset_index(drop=True)


def _sample(keys: set[Any]) -> str:
    return ", ".join(str(key) for key in sorted(keys, key=str)[:3]) or "-"


def _target_columns(
    gold: pd.DataFrame, exclude: set[Any], target_column: str | None, multi: bool
) -> list[Any]:
    if target_column is not None:
        found = _find_column(gold.columns, target_column)
        if found is None:
            raise _Unscorable(f"gold file has no column {target_column!r}")
        return [found]
    candidates = [c for c in gold.columns if c not in exclude and not _is_index_artifact(c)]
    if len(candidates) == 1:
        return candidates
    named = [c for c in candidates if str(c).strip().lower() in _LABEL_NAMES]
    if len(named) == 1:
        return named
    if multi and candidates:
        return candidates
    raise _Unscorable(f"cannot tell the target among gold columns {candidates}; set target_column")


def _aligned_columns(
    predicted: pd.DataFrame,
    gold: pd.DataFrame,
    name: str,
    id_column: str | None,
    target_column: str | None,
    details: dict[str, Any],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    ids = _detect_id(predicted, gold, id_column)
    targets = _target_columns(gold, {ids[0]} if ids else set(), target_column, name in _MULTI_COLUMN)
    matches = [_find_column(predicted.columns, target) for target in targets]
    if missing := [t for t, m in zip(targets, matches, strict=True) if m is None]:
        raise _Unscorable(f"predicted file has no column {', '.join(map(repr, missing))}")
    details.update(target_columns=[str(t) for t in targets], id_column=None if ids is None else str(ids[0]))
    if ids is not None:
        predicted = _align_by_id(predicted, gold, *ids)
        details["alignment"] = "id"
    elif len(predicted) != len(gold):
        raise _Unscorable(f"predicted file has {len(predicted)} rows, gold {len(gold)} (and no id column)")
    else:
        details["alignment"] = "position"
    return gold[targets].reset_index(drop=True), predicted[matches].set_axis(targets, axis=1)


def _official_columns(
    predicted: pd.DataFrame, gold: pd.DataFrame, target_column: str | None, details: dict[str, Any]
) -> tuple[pd.Series, pd.Series]:
    """``compare_ml``: the same number of rows, the gold target found by name, compared by position."""
    if len(predicted) != len(gold):
        raise _Unscorable("The length of the result content is not equal to the length of the true value.")
    official_ids = {c for c in gold.columns if _is_official_id(gold, c)}
    target = _target_columns(gold, official_ids, target_column, multi=False)[0]
    match = _find_column(predicted.columns, str(target))
    if match is None:
        raise _Unscorable(f"Could not find target column in result, which is {target} in gold")
    details.update(target_columns=[str(target)], id_column=None, alignment="position")
    return gold[target], predicted[match]


def _is_official_id(frame: pd.DataFrame, column: Any) -> bool:
    name = str(column).lower()
    return (
        ("id" in name or "unnamed" in name)
        and frame[column].nunique() > 0.8 * len(frame)
        and "pca" not in name
        and "feature" not in name
    )


def _official_competition_columns(
    predicted: pd.DataFrame, gold: pd.DataFrame, details: dict[str, Any]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    if len(predicted) != len(gold):
        raise _Unscorable(
            f"Row count mismatch: result CSV has {len(predicted)} rows, expected {len(gold)} rows."
        )
    if set(predicted.columns) != set(gold.columns):
        raise _Unscorable(
            f"Unexpected columns in result CSV: {sorted(set(predicted.columns) - set(gold.columns))}"
        )
    id_name = next((c for c in gold.columns if "id" in str(c).lower()), None)
    details.update(id_column=None, alignment="position")
    if id_name is not None and gold[id_name].nunique() > max(0.6 * len(gold), 2):
        if set(predicted[id_name]) != set(gold[id_name]):
            raise _Unscorable("ID does not match the gold ids")
        gold = gold.sort_values(by=id_name).drop(columns=[id_name])
        predicted = predicted.sort_values(by=id_name).drop(columns=[id_name])
        details.update(id_column=str(id_name), alignment="id")
    gold, predicted = gold.sort_index(axis=1), predicted.sort_index(axis=1)
    details["target_columns"] = [str(c) for c in gold.columns]
    return gold.reset_index(drop=True), predicted.reset_index(drop=True)


def _cluster_columns(
    frame: pd.DataFrame, target_column: str | None, id_column: str | None, mode: Mode, details: dict[str, Any]
) -> tuple[pd.DataFrame, pd.Series]:
    """The features and cluster labels of a clustering output (``silhouette``)."""
    # The official evaluator always looks for "Cluster", whatever the task's target_column says.
    wanted = "Cluster" if mode == "compat" else (target_column or "Cluster")
    label = _find_column(frame.columns, wanted)
    if label is None and (target_column is None or mode == "compat"):
        few = [c for c in frame.columns if 1 <= frame[c].nunique() < max(0.01 * len(frame), 10)]
        named = [c for c in few if str(c).lower() in _LABEL_NAMES]
        label = few[0] if len(few) == 1 else (named[0] if named else None)
    if label is None:
        raise _Unscorable(f"no cluster-label column {wanted!r} in the predicted file")
    details.update(target_columns=[str(label)], alignment="none")
    if mode == "compat":
        # The official features are every column but the id ones, the label column included (defect 7).
        features = frame[[c for c in frame.columns if not _is_official_id(frame, c)]]
        details["feature_columns"] = [str(c) for c in features.columns]
        return features, frame[label]
    dropped = {label}
    if id_column is not None:
        dropped.add(_find_column(frame.columns, id_column))
    dropped |= {
        c for c in frame.columns if _is_index_artifact(c) or (_looks_like_id(c) and frame[c].is_unique)
    }
    kept = [c for c in frame.columns if c not in dropped]
    numeric = [c for c in kept if pd.api.types.is_numeric_dtype(frame[c])]
    details.update(
        feature_columns=[str(c) for c in numeric], ignored_columns=[str(c) for c in kept if c not in numeric]
    )
    if not numeric:
        raise _Unscorable("the predicted file has no numeric feature column besides the cluster labels")
    return frame[numeric], frame[label]


class MlScorerOptions(OutputFileOptions):
    """Options of an `ml` scorer in a task (DA-Code `compare_ml` / `compare_competition_ml`)."""

    metric: str
    lower_bound: float = 0.0
    upper_bound: float = 1.0
    id_column: str | None = None
    target_column: str | None = None
    average: Average = "weighted"
    evaluator: Evaluator = "compare_ml"


@scorer("ml", options=MlScorerOptions, modes=WORKSPACE_MODES)
def ml(context: ScoringContext, options: MlScorerOptions) -> Score:
    """A predictions CSV against gold labels with a metric normalized between the task's bounds."""
    predicted = context.output(options.file)
    if predicted is None:
        return nothing_collected(options.file)
    return score_ml(
        predicted, context.gold(options.gold_name()), mode=context.mode,  # type: ignore[arg-type]
        **options.model_dump(exclude={"file", "gold"}),
    )  # fmt: skip
