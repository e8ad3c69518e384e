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
  ``script/ml_script.py`` of ``yiyihum/da-code`` at b211daf) so that per-task scores equal the official
  ones, including its defects.

The work is split by job: ``ml_metrics`` (the standard metrics, scikit-learn's), ``ml_official`` (the
official metrics and scaling, defects kept), ``ml_columns`` (which columns and rows are compared); this
module holds the public entry points ``metric_value``, ``normalize_score``, ``score_ml`` and the
registered ``ml`` scorer.

Defects of the official evaluator, reproduced in ``compat`` and fixed in ``corrected``:

1. Every metric is normalized as if higher were better: ``clip((raw - lower_bound) / (upper_bound -
   lower_bound), 0, 1)`` in both ``compare_ml`` and ``compare_competition_ml`` (the official
   ``LOWER_METRICS`` list is never used). DA-Code's configs give error metrics ``lower_bound`` = best
   (small) and ``upper_bound`` = baseline (large), so a perfect log loss or rmsle (0, below
   ``lower_bound``) scores 0 and an error at or above the baseline scores 1. (An earlier official
   revision flipped the ends for a list of error metrics; the scores of DA-Code's HEAD, b211daf, come
   from the plain clip.)
2. Equal bounds divide by zero: the official evaluator's catch-all scores the task 0.
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
import warnings
from pathlib import Path
from typing import Any, Literal

from pydantic import field_validator

from daharness.core.registry import scorer
from daharness.core.score import Score
from daharness.core.scoring import ScoringContext
from daharness.families.workspace.modes import WORKSPACE_MODES
from daharness.families.workspace.scorers.ml_columns import (
    Unscorable,
    aligned_columns,
    cluster_columns,
    official_columns,
    official_competition_columns,
    read_frame,
)
from daharness.families.workspace.scorers.ml_metrics import (
    LOWER_IS_BETTER,
    METRICS,
    MODES,
    OFFICIAL_NAMES,
    Average,
    MetricError,
    Mode,
    corrected_metric,
    resolve_metric,
)
from daharness.scoring.outputs import OutputFileOptions, nothing_collected

__all__ = [
    "LOWER_IS_BETTER", "METRICS", "OFFICIAL_NAMES", "MetricError", "metric_value", "normalize_score", "score_ml",
]  # fmt: skip

Evaluator = Literal["compare_ml", "compare_competition_ml"]


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
    import numpy as np

    name, balanced = resolve_metric(metric)
    if mode not in MODES:
        raise ValueError(f"unknown ML scoring mode {mode!r}; choose one of {', '.join(MODES)}")
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            if mode == "compat":
                from daharness.families.workspace.scorers.ml_official import (
                    official_metric,  # sklearn, when used
                )

                value = official_metric(name, y_true, y_pred, features, average, balanced)
            else:
                value = corrected_metric(name, y_true, y_pred, features, average, balanced)
    except MetricError:
        raise
    except Exception as exc:  # the official code catches everything here too
        raise MetricError(f"{type(exc).__name__}: {exc}") from exc
    return float(value)


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
            1 when ``raw`` is at least as good, else 0); ``compat`` gives the official
            ``clip((raw - lower_bound) / (upper_bound - lower_bound), 0, 1)`` for every metric (defect 1)
            and raises ``MetricError`` for equal bounds (defect 2).

    A NaN raw value scores 0.
    """
    name, _ = resolve_metric(metric)
    if math.isnan(raw):
        return 0.0
    if mode == "compat":
        from daharness.families.workspace.scorers.ml_official import official_normalize

        return official_normalize(raw, lower_bound, upper_bound)
    if mode != "corrected":
        raise ValueError(f"unknown ML scoring mode {mode!r}; choose one of {', '.join(MODES)}")
    lower = name in LOWER_IS_BETTER
    best = min(lower_bound, upper_bound) if lower else max(lower_bound, upper_bound)
    baseline = max(lower_bound, upper_bound) if lower else min(lower_bound, upper_bound)
    if best == baseline:
        return 1.0 if (raw <= best if lower else raw >= best) else 0.0
    return min(1.0, max(0.0, (raw - baseline) / (best - baseline)))


# ---- the scorer -------------------------------------------------------------------------------------


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
    name, _ = resolve_metric(metric)
    if mode not in MODES:
        raise ValueError(f"unknown ML scoring mode {mode!r}; choose one of {', '.join(MODES)}")
    details: dict[str, Any] = {
        "mode": mode,
        "metric": metric,
        "lower_bound": lower_bound,
        "upper_bound": upper_bound,
        "lower_is_better": name in LOWER_IS_BETTER and mode != "compat",  # compat: defect 1
    }
    try:
        raw = _raw_metric(
            predicted, gold, name, metric, mode, id_column, target_column, average, evaluator, details
        )
    except (Unscorable, MetricError) as exc:
        return Score(value=0.0, explanation=str(exc), details=details)
    if mode == "corrected" and gold is not None:
        lower_bound, upper_bound = _recalibrated(
            gold, name, metric, lower_bound, upper_bound, id_column, target_column, average, details
        )
    details["raw"] = raw
    if not math.isfinite(raw):
        return Score(value=0.0, explanation=f"{metric} is {raw}", details=details)
    try:
        value = normalize_score(
            raw, metric=metric, lower_bound=lower_bound, upper_bound=upper_bound, mode=mode
        )
    except MetricError as exc:
        return Score(value=0.0, explanation=str(exc), details=details)
    details["normalized"] = value
    return Score(
        value=value,
        explanation=f"{metric} = {raw:.6g} on {details['rows']} rows, normalized between "
        f"{lower_bound:g} and {upper_bound:g}: {value:.4f}",
        details=details,
    )


def _raw_metric(
    predicted: Path, gold: Path | None, name: str, metric: str, mode: Mode, id_column: str | None,
    target_column: str | None, average: Average, evaluator: Evaluator, details: dict[str, Any],
) -> float:  # fmt: skip
    """The metric of a predictions file (for silhouette, of the clustering it holds); raises Unscorable
    or MetricError."""
    predicted_frame = read_frame(predicted, "predicted")
    if name == "silhouette":
        features, y_pred = cluster_columns(predicted_frame, target_column, id_column, mode, details)
        y_true: Any = None
    else:
        if gold is None:
            raise Unscorable("no gold file given")
        gold_frame = read_frame(gold, "gold")
        if mode == "compat" and evaluator == "compare_competition_ml":
            y_true, y_pred = official_competition_columns(predicted_frame, gold_frame, details)
        elif mode == "compat":
            y_true, y_pred = official_columns(predicted_frame, gold_frame, target_column, details)
        else:
            y_true, y_pred = aligned_columns(
                predicted_frame, gold_frame, name, id_column, target_column, details
            )
        features = None
    details["rows"] = len(y_pred)
    if mode == "compat" and evaluator == "compare_ml":
        average = "weighted"
    return metric_value(metric, y_true, y_pred, mode=mode, features=features, average=average)


def _recalibrated(
    gold: Path, name: str, metric: str, lower_bound: float, upper_bound: float, id_column: str | None,
    target_column: str | None, average: Average, details: dict[str, Any],
) -> tuple[float, float]:  # fmt: skip
    """Corrected mode: the task's bounds, recalibrated when the gold output itself does not reach the best
    bound under the corrected metric (DA-Code's bounds were set under the official one, whose silhouette is
    inflated). Rule: with g the corrected metric of the gold output, when g is worse than the best bound,
    both bounds are scaled by g / best, so that the best becomes g and the baseline keeps its place
    relative to it; a gold output that cannot be scored leaves the bounds as they are."""
    lower = name in LOWER_IS_BETTER
    best = min(lower_bound, upper_bound) if lower else max(lower_bound, upper_bound)
    try:
        reached = _raw_metric(gold, gold, name, metric, "corrected", id_column, target_column, average,
                              "compare_ml", {})  # fmt: skip
    except (Unscorable, MetricError):
        return lower_bound, upper_bound
    short = reached > best if lower else reached < best
    if not math.isfinite(reached) or not short or best == 0:
        return lower_bound, upper_bound
    factor = reached / best
    details["recalibrated"] = {
        "gold_metric": reached, "official_bounds": [lower_bound, upper_bound], "factor": factor,
    }  # fmt: skip
    return lower_bound * factor, upper_bound * factor


class MlScorerOptions(OutputFileOptions):
    """Options of an `ml` scorer in a task (DA-Code `compare_ml` / `compare_competition_ml`)."""

    metric: str
    lower_bound: float = 0.0
    upper_bound: float = 1.0
    id_column: str | None = None
    target_column: str | None = None
    average: Average = "weighted"
    evaluator: Evaluator = "compare_ml"

    @field_validator("metric")
    @classmethod
    def _known_metric(cls, metric: str) -> str:
        resolve_metric(metric)  # an unknown metric is an error when the task is loaded, not when scored
        return metric


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
