"""The ML scorer: standard metrics and normalization in `corrected`, the official rules and defects in
`compat` (DA-Code's ml.py / ml_script.py)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import (
    cohen_kappa_score,
    f1_score,
    log_loss,
    mean_absolute_error,
    mean_squared_error,
    mean_squared_log_error,
    median_absolute_error,
    r2_score,
    roc_auc_score,
    silhouette_score,
)

from daharness.families.workspace.scorers.ml import (
    LOWER_IS_BETTER,
    METRICS,
    MetricError,
    metric_value,
    normalize_score,
    score_ml,
)

TRUTH = [3.0, 5.0, 2.5, 7.0, 4.0]
CLOSE = [3.1, 4.9, 2.6, 6.8, 4.2]
FAR = [1.0, 8.0, 0.5, 3.0, 6.0]


def write(path: Path, **columns: list) -> Path:
    pd.DataFrame(columns).to_csv(path, index=False)
    return path


# ---- raw metrics ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("metric", "reference"),
    [
        ("r2", r2_score),
        ("mae", mean_absolute_error),
        ("medae", median_absolute_error),
        ("rmse", lambda t, p: math.sqrt(mean_squared_error(t, p))),
        ("rmsle", lambda t, p: math.sqrt(mean_squared_log_error(t, p))),
    ],
)
def test_regression_metrics_match_sklearn(metric: str, reference) -> None:
    assert metric_value(metric, TRUTH, CLOSE) == pytest.approx(reference(TRUTH, CLOSE))
    good, bad = metric_value(metric, TRUTH, CLOSE), metric_value(metric, TRUTH, FAR)
    assert (good < bad) if metric in LOWER_IS_BETTER else (good > bad)


def test_rmsle_is_the_root_of_msle_corrected_and_msle_in_compat() -> None:
    msle = mean_squared_log_error(TRUTH, FAR)
    assert metric_value("rmsle", TRUTH, FAR) == pytest.approx(math.sqrt(msle))
    assert metric_value("rmsle", TRUTH, FAR, mode="compat") == pytest.approx(msle)  # defect: no root


def test_rmsle_clips_negative_predictions_to_zero_in_both_modes() -> None:
    assert metric_value("rmsle", [1.0, 2.0], [-5.0, 2.0]) == pytest.approx(
        math.sqrt(mean_squared_log_error([1.0, 2.0], [0.0, 2.0]))
    )
    with pytest.raises(MetricError):
        metric_value("rmsle", [-2.0, 2.0], [1.0, 2.0])


def test_smape_in_percent_and_missing_prediction() -> None:
    assert metric_value("smape", [100.0, 0.0], [100.0, 0.0]) == 0.0
    assert metric_value("smape", [1.0, 3.0], [3.0, 1.0]) == pytest.approx(100.0)
    # A NaN prediction: an error in corrected, a perfect row officially.
    with pytest.raises(MetricError, match="missing"):
        metric_value("smape", [1.0, 2.0], [1.0, np.nan])
    assert metric_value("smape", [1.0, 2.0], [1.0, np.nan], mode="compat") == 0.0


def test_f1_weighted_by_default_and_other_averages() -> None:
    truth, pred = ["a", "b", "a", "c", "c"], ["a", "b", "b", "c", "a"]
    assert metric_value("f1", truth, pred) == pytest.approx(f1_score(truth, pred, average="weighted"))
    assert metric_value("f1", truth, pred, average="macro") == pytest.approx(
        f1_score(truth, pred, average="macro")
    )
    assert metric_value("f1", truth, truth) == 1.0
    binary = metric_value("f1", [1, 0, 1, 1], [1, 1, 0, 1], average="binary")
    assert binary == pytest.approx(f1_score([1, 0, 1, 1], [1, 1, 0, 1]))


def test_labels_compare_by_value_case_and_space() -> None:
    assert metric_value("accuracy", [1, 0, 1], ["1.0", "false", " True "]) == 1.0
    assert metric_value("accuracy", ["Yes", "No"], ["yes ", "NO"]) == 1.0
    assert metric_value("accuracy", ["yes", "no"], ["no", "no"]) == 0.5
    # A missing prediction is a wrong label, not an error.
    assert metric_value("accuracy", ["a", "b"], ["a", None]) == 0.5


def test_string_label_accuracy_defect_is_compat_only() -> None:
    truth, wrong = ["cat", "dog", "cat", "bird"], ["dog", "cat", "dog", "cat"]
    assert metric_value("accuracy", truth, wrong) == 0.0
    assert metric_value("accuracy", truth, wrong, mode="compat") == 1.0  # gold replaced by predictions
    assert metric_value("accuracy", truth, [7, 7, 7, 7], mode="compat") == 1.0  # numbers: "encodable"
    with pytest.raises(MetricError):  # a label the encoder never saw fails instead
        metric_value("accuracy", truth, ["cow"] * 4, mode="compat")
    # Numeric gold labels are not encoded, so compat computes real accuracy there.
    assert metric_value("accuracy", [1, 0, 1, 0], [1, 1, 1, 1], mode="compat") == 0.5


def test_float_labels_are_truncated_in_compat_only() -> None:
    truth, probabilities = [1, 0, 1, 1], [0.7, 0.2, 1.0, 1.0]
    assert metric_value("accuracy", truth, probabilities) == 0.5
    assert metric_value("accuracy", truth, probabilities, mode="compat") == 0.75  # 0.7 -> 0, 0.2 -> 0
    assert metric_value("f1", truth, probabilities) < metric_value("f1", truth, probabilities, mode="compat")
    with pytest.raises(MetricError, match="crash"):
        metric_value("f1", [1.0, np.nan], [1, 0], mode="compat")


def test_roc_auc_binary_and_one_hot() -> None:
    truth, scores = [0, 1, 0, 1, 1], [0.1, 0.8, 0.4, 0.35, 0.9]
    assert metric_value("roc_auc", truth, scores) == pytest.approx(roc_auc_score(truth, scores))
    assert metric_value("roc_auc_score", truth, scores, mode="compat") == pytest.approx(
        roc_auc_score(truth, scores)
    )
    assert metric_value("roc_auc", truth, [1 - s for s in scores]) < 0.5
    one_hot = np.eye(3)[[0, 1, 2, 1, 0]]
    probabilities = np.array(
        [[0.6, 0.3, 0.1], [0.2, 0.7, 0.1], [0.1, 0.1, 0.8], [0.3, 0.4, 0.3], [0.5, 0.4, 0.1]]
    )
    expected = np.mean([roc_auc_score(one_hot[:, c], probabilities[:, c]) for c in range(3)])
    assert metric_value("roc_auc", one_hot, probabilities) == pytest.approx(expected)
    with pytest.raises(MetricError):
        metric_value("roc_auc", [0, 1, 2, 1, 0], probabilities)


def test_logloss_natural_log_corrected_log2_halved_in_compat() -> None:
    assert metric_value("logloss", [0, 1, 1], [0.2, 0.7, 0.9]) == pytest.approx(
        log_loss([0, 1, 1], [0.2, 0.7, 0.9])
    )
    classes = [0, 1, 2, 1]
    one_hot = np.eye(3)[classes]
    probabilities = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6], [0.3, 0.4, 0.3]])
    standard = log_loss(classes, probabilities)
    assert metric_value("logloss", one_hot, probabilities) == pytest.approx(standard)
    assert metric_value("logloss", classes, probabilities) == pytest.approx(standard)
    assert metric_value("logloss", one_hot, probabilities, mode="compat") == pytest.approx(
        standard / math.log(2) / 2
    )
    assert metric_value("logloss", one_hot, np.eye(3)[classes]) < 1e-10
    # logloss_class: the mean over classes of each class's mean loss.
    per_class = [-np.log(0.7), -np.mean(np.log([0.8, 0.4])), -np.log(0.6)]
    assert metric_value("logloss_class", one_hot, probabilities) == pytest.approx(np.mean(per_class))


def test_quadratic_weighted_kappa() -> None:
    truth, pred = [1, 2, 3, 3, 2, 1], [1, 2, 3, 2, 2, 2]
    reference = cohen_kappa_score(truth, pred, weights="quadratic")
    assert metric_value("quadratic_weighted_kappa", truth, pred) == pytest.approx(reference)
    assert metric_value("quadratic_weighted_kappa", truth, truth) == 1.0
    # Ratings 1..3: the official confusion matrix drops rating 3 (labels 0..2) and inflates kappa.
    assert metric_value("quadratic_weighted_kappa", truth, pred, mode="compat") > reference
    zero_based = [0, 1, 2, 2, 1, 0], [0, 1, 2, 1, 1, 1]
    assert metric_value("quadratic_weighted_kappa", *zero_based, mode="compat") == pytest.approx(
        cohen_kappa_score(*zero_based, weights="quadratic")
    )
    # Officially, predictions that miss the gold's extreme rating score nothing.
    with pytest.raises(MetricError, match="range"):
        metric_value("quadratic_weighted_kappa", [0, 1, 2], [0, 1, 1], mode="compat")
    assert metric_value("quadratic_weighted_kappa", [0, 1, 2], [0, 1, 1]) > 0


def test_silhouette_on_a_tiny_clustering() -> None:
    points = np.array([[0.0, 0.0], [0.0, 1.0], [10.0, 10.0], [10.0, 11.0], [9.0, 10.0]])
    good, bad = [0, 0, 1, 1, 1], [0, 1, 0, 1, 0]
    assert metric_value("silhouette", None, good, features=points) == pytest.approx(
        silhouette_score(points, good)
    )
    assert metric_value("silhouette", None, bad, features=points) < 0
    # The official formula counts each point in its own cluster's mean distance, and clamps at 0.
    assert metric_value("silhouette", None, good, features=points, mode="compat") > silhouette_score(
        points, good
    )
    assert metric_value("silhouette", None, bad, features=points, mode="compat") > 0  # inflated
    # A labelling whose official silhouette is negative is clamped to 0.
    line, mixed = [[0.0]] * 4 + [[10.0]] * 4, [0, 0, 0, 1, 0, 0, 0, 1]
    assert metric_value("silhouette", None, mixed, features=line) < 0
    assert metric_value("silhouette", None, mixed, features=line, mode="compat") == 0.0
    with pytest.raises(MetricError):
        metric_value("silhouette", None, [0] * 5, features=points)
    with pytest.raises(ValueError):
        metric_value("silhouette", None, good)


def test_unknown_metric_and_mode_raise() -> None:
    with pytest.raises(ValueError, match="unknown ML metric"):
        metric_value("auc_pr", [1], [1])
    with pytest.raises(ValueError, match="mode"):
        metric_value("mae", [1], [1], mode="strict")  # type: ignore[arg-type]


# ---- normalization ----------------------------------------------------------------------------------

# DA-Code's configs: higher-is-better metrics give (baseline, best), error metrics (best, baseline).
HIGHER_BOUNDS = (0.5, 0.9)
LOWER_BOUNDS = (2.0, 10.0)


@pytest.mark.parametrize("metric", METRICS)
def test_corrected_normalization_rewards_better_values(metric: str) -> None:
    lower, upper = LOWER_BOUNDS if metric in LOWER_IS_BETTER else HIGHER_BOUNDS
    best, baseline = (lower, upper) if metric in LOWER_IS_BETTER else (upper, lower)
    quarter = baseline + (best - baseline) * 0.25
    three_quarters = baseline + (best - baseline) * 0.75

    def norm(raw: float) -> float:
        return normalize_score(raw, metric=metric, lower_bound=lower, upper_bound=upper)

    assert norm(best) == 1.0
    assert norm(baseline) == 0.0
    assert norm(quarter) == pytest.approx(0.25)
    assert norm(three_quarters) == pytest.approx(0.75)
    beyond_best, beyond_baseline = best + (best - baseline), baseline - (best - baseline)
    assert norm(beyond_best) == 1.0 and norm(beyond_baseline) == 0.0
    # The order the bounds are written in does not matter.
    assert normalize_score(quarter, metric=metric, lower_bound=upper, upper_bound=lower) == pytest.approx(
        0.25
    )


@pytest.mark.parametrize("metric", sorted(LOWER_IS_BETTER))
def test_compat_scales_error_metrics_as_if_higher_were_better(metric: str) -> None:
    def norm(raw: float) -> float:
        return normalize_score(raw, metric=metric, lower_bound=2.0, upper_bound=10.0, mode="compat")

    assert norm(0.0) == 0.0 and norm(2.0) == 0.0  # a perfect (or best-bound) error scores 0...
    assert norm(10.0) == 1.0 and norm(12.0) == 1.0  # ...an error at or beyond the baseline 1
    assert norm(4.0) == pytest.approx(0.25) and norm(9.0) == pytest.approx(0.875)
    assert normalize_score(9.0, metric=metric, lower_bound=2.0, upper_bound=10.0) == pytest.approx(0.125)
    with pytest.raises(MetricError, match="divides by zero"):
        normalize_score(1.0, metric=metric, lower_bound=3.0, upper_bound=3.0, mode="compat")


@pytest.mark.parametrize("metric", sorted(set(METRICS) - LOWER_IS_BETTER))
def test_compat_normalizes_higher_is_better_metrics_like_corrected(metric: str) -> None:
    for raw in (0.3, 0.5, 0.6, 0.8, 0.95):
        assert normalize_score(
            raw, metric=metric, lower_bound=0.5, upper_bound=0.9, mode="compat"
        ) == pytest.approx(normalize_score(raw, metric=metric, lower_bound=0.5, upper_bound=0.9))


def test_normalization_edge_cases() -> None:
    assert normalize_score(0.9, metric="f1", lower_bound=0.9, upper_bound=0.9) == 1.0
    assert normalize_score(0.8, metric="f1", lower_bound=0.9, upper_bound=0.9) == 0.0
    assert normalize_score(float("nan"), metric="r2", lower_bound=0.5, upper_bound=0.9) == 0.0


# ---- score_ml on files ------------------------------------------------------------------------------


def test_score_ml_details_and_value(tmp_path: Path) -> None:
    gold = write(tmp_path / "gold.csv", id=[1, 2, 3, 4, 5], price=TRUTH)
    predicted = write(tmp_path / "pred.csv", id=[1, 2, 3, 4, 5], price=CLOSE)
    score = score_ml(predicted, gold, metric="mae", lower_bound=0.0, upper_bound=1.0)
    raw = mean_absolute_error(TRUTH, CLOSE)
    assert score.value == pytest.approx(1 - raw)
    assert score.details["raw"] == pytest.approx(raw)
    assert score.details["normalized"] == score.value
    assert (score.details["lower_bound"], score.details["upper_bound"], score.details["rows"]) == (
        0.0,
        1.0,
        5,
    )
    assert score.details["id_column"] == "id" and score.details["target_columns"] == ["price"]


def test_shuffled_rows_are_aligned_by_id(tmp_path: Path) -> None:
    gold = write(tmp_path / "gold.csv", PassengerId=[10, 11, 12, 13], Survived=[1, 1, 0, 0])
    predicted = write(tmp_path / "pred.csv", PassengerId=[13, 12, 11, 10], Survived=[0, 0, 1, 1])
    score = score_ml(predicted, gold, metric="accuracy", lower_bound=0.5, upper_bound=1.0)
    assert score.value == 1.0 and score.details["alignment"] == "id"
    # compare_ml discards its sort: compared by position, the same rows score 0.
    compat = score_ml(predicted, gold, metric="accuracy", lower_bound=0.5, upper_bound=1.0, mode="compat")
    assert compat.value == 0.0 and compat.details["raw"] == 0.0
    # compare_competition_ml does sort by id.
    competition = score_ml(
        predicted, gold, metric="f1", lower_bound=0.5, upper_bound=1.0, mode="compat",
        evaluator="compare_competition_ml",
    )  # fmt: skip
    assert competition.value == 1.0


@pytest.mark.parametrize(
    ("column", "is_id"),
    [
        ("id", True),
        ("ID", True),
        ("customerID", True),
        ("row_id", True),
        ("Row ID", True),
        ("paid", False),
        ("VALID", False),
    ],
)
def test_id_column_detection(tmp_path: Path, column: str, is_id: bool) -> None:
    gold = write(tmp_path / "gold.csv", **{column: [1, 2, 3]}, y=[1.0, 2.0, 3.0])
    predicted = write(tmp_path / "pred.csv", **{column: [3, 2, 1]}, y=[3.0, 2.0, 1.0])
    score = score_ml(predicted, gold, metric="mae", lower_bound=0.0, upper_bound=1.0, target_column="y")
    assert score.details["id_column"] == (column if is_id else None)
    assert score.value == (1.0 if is_id else 0.0)


def test_explicit_id_column_and_id_mismatches(tmp_path: Path) -> None:
    gold = write(tmp_path / "gold.csv", key=["a", "b", "c"], label=["x", "y", "x"])
    shuffled = write(tmp_path / "p1.csv", KEY=["c", "a", "b"], label=["x", "x", "y"])
    assert (
        score_ml(shuffled, gold, metric="f1", lower_bound=0.0, upper_bound=1.0, id_column="key").value == 1.0
    )
    missing_id = write(tmp_path / "p2.csv", label=["x", "y", "x"])
    score = score_ml(missing_id, gold, metric="f1", lower_bound=0.0, upper_bound=1.0, id_column="key")
    assert score.value == 0.0 and "no id column" in score.explanation
    other_ids = write(tmp_path / "p3.csv", key=["a", "b", "z"], label=["x", "y", "x"])
    score = score_ml(other_ids, gold, metric="f1", lower_bound=0.0, upper_bound=1.0, id_column="key")
    assert score.value == 0.0 and "1 missing" in score.explanation and "z" in score.explanation
    duplicated = write(tmp_path / "p4.csv", key=["a", "a", "b"], label=["x", "y", "x"])
    score = score_ml(duplicated, gold, metric="f1", lower_bound=0.0, upper_bound=1.0, id_column="key")
    assert score.value == 0.0 and "not unique" in score.explanation


def test_unscorable_files_score_zero_with_an_explanation(tmp_path: Path) -> None:
    gold = write(tmp_path / "gold.csv", target=[1.0, 2.0, 3.0])
    options = {"metric": "r2", "lower_bound": 0.0, "upper_bound": 1.0}
    for mode in ("corrected", "compat"):
        score = score_ml(tmp_path / "absent.csv", gold, mode=mode, **options)
        assert score.value == 0.0 and "not found" in score.explanation
        score = score_ml(gold, tmp_path / "absent_gold.csv", mode=mode, **options)
        assert score.value == 0.0 and "gold file" in score.explanation
        short = write(tmp_path / "short.csv", target=[1.0, 2.0])
        assert score_ml(short, gold, mode=mode, **options).value == 0.0
        renamed = write(tmp_path / "renamed.csv", prediction=[1.0, 2.0, 3.0])
        score = score_ml(renamed, gold, mode=mode, **options)
        assert score.value == 0.0 and "target" in score.explanation.lower()
        text = write(tmp_path / "text.csv", target=["a", "b", "c"])
        assert score_ml(text, gold, mode=mode, **options).value == 0.0
    (tmp_path / "empty.csv").write_text("")
    score = score_ml(tmp_path / "empty.csv", gold, **options)
    assert score.value == 0.0 and "readable" in score.explanation
    perfect = score_ml(gold, gold, **options)
    assert perfect.value == 1.0


def test_target_column_choice(tmp_path: Path) -> None:
    gold = write(tmp_path / "gold.csv", id=[1, 2], age=[30, 40], Label=["a", "b"])
    predicted = write(tmp_path / "pred.csv", id=[1, 2], label=["a", "b"])
    assert score_ml(predicted, gold, metric="f1", lower_bound=0.0, upper_bound=1.0).value == 1.0
    by_name = score_ml(predicted, gold, metric="f1", lower_bound=0.0, upper_bound=1.0, target_column="LABEL")
    assert by_name.value == 1.0 and by_name.details["target_columns"] == ["Label"]
    ambiguous = write(tmp_path / "gold2.csv", id=[1, 2], age=[30, 40], city=["a", "b"])
    score = score_ml(predicted, ambiguous, metric="f1", lower_bound=0.0, upper_bound=1.0)
    assert score.value == 0.0 and "target_column" in score.explanation


def test_string_label_accuracy_defect_through_files(tmp_path: Path) -> None:
    gold = write(tmp_path / "gold.csv", id=[1, 2, 3, 4], activity=["walk", "run", "sit", "walk"])
    predicted = write(tmp_path / "pred.csv", id=[1, 2, 3, 4], activity=["run", "sit", "walk", "run"])
    options = {"metric": "accuracy", "lower_bound": 0.375, "upper_bound": 0.928}
    assert score_ml(predicted, gold, **options).value == 0.0
    assert score_ml(predicted, gold, mode="compat", **options).value == 1.0


def test_competition_evaluator_rules_in_compat(tmp_path: Path) -> None:
    gold = write(tmp_path / "gold.csv", id=[1, 2, 3, 4], Exited=[0, 1, 0, 1])
    predicted = write(tmp_path / "pred.csv", id=[4, 3, 2, 1], Exited=[0.9, 0.2, 0.8, 0.1])
    options = {
        "lower_bound": 0.5,
        "upper_bound": 1.0,
        "mode": "compat",
        "evaluator": "compare_competition_ml",
    }
    assert score_ml(predicted, gold, metric="roc_auc_score", **options).value == 1.0
    extra = write(tmp_path / "extra.csv", id=[1, 2, 3, 4], Exited=[0, 1, 0, 1], note=["", "", "", ""])
    score = score_ml(extra, gold, metric="roc_auc_score", **options)
    assert score.value == 0.0 and "columns" in score.explanation
    # The whole table reaches the official accuracy, which always fails.
    assert score_ml(gold, gold, metric="accuracy", **options).value == 0.0
    assert score_ml(gold, gold, metric="accuracy", lower_bound=0.5, upper_bound=1.0).value == 1.0


def test_multi_column_logloss_from_files(tmp_path: Path) -> None:
    gold = write(tmp_path / "gold.csv", id=[1, 2, 3], class_0=[1, 0, 1], class_1=[0, 1, 0])
    predicted = write(tmp_path / "pred.csv", id=[3, 2, 1], class_0=[0.8, 0.3, 0.9], class_1=[0.2, 0.7, 0.1])
    score = score_ml(predicted, gold, metric="logloss", lower_bound=0.0, upper_bound=1.0)
    reference = log_loss([0, 1, 0], [[0.9, 0.1], [0.3, 0.7], [0.8, 0.2]])
    assert score.details["raw"] == pytest.approx(reference)
    assert score.value == pytest.approx(1 - reference)


def test_silhouette_from_a_cluster_file(tmp_path: Path) -> None:
    x, y = [0.0, 0.0, 10.0, 10.0, 9.0], [0.0, 1.0, 10.0, 11.0, 10.0]
    labels = [0, 0, 1, 1, 1]
    predicted = write(tmp_path / "cluster.csv", id=[1, 2, 3, 4, 5], x=x, y=y, Cluster=labels)
    reference = silhouette_score(np.column_stack([x, y]), labels)
    score = score_ml(predicted, None, metric="silhouette", lower_bound=0.0, upper_bound=1.0)
    assert score.details["raw"] == pytest.approx(reference)
    assert score.details["feature_columns"] == ["x", "y"]
    compat = score_ml(predicted, None, metric="silhouette", lower_bound=0.0, upper_bound=1.0, mode="compat")
    assert "Cluster" in compat.details["feature_columns"]  # the labels are a feature officially
    assert compat.details["raw"] > reference
    no_labels = write(tmp_path / "nolabels.csv", x=x, y=y)
    assert score_ml(no_labels, None, metric="silhouette", lower_bound=0.0, upper_bound=1.0).value == 0.0


def test_unknown_metric_raises_in_score_ml(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        score_ml(tmp_path / "a.csv", tmp_path / "b.csv", metric="bleu", lower_bound=0.0, upper_bound=1.0)


def test_an_unknown_metric_in_a_task_is_an_error_when_the_task_is_loaded() -> None:
    from daharness.core.errors import UserError
    from daharness.core.registry import scorers

    entry = scorers.get("ml")
    assert (
        entry.parse_options({"file": "p.csv", "metric": "logloss_class"}, "task t").metric == "logloss_class"
    )
    with pytest.raises(
        UserError, match=r"task t: scorer 'ml': option 'metric': .*unknown ML metric 'auc_pr'"
    ):
        entry.parse_options({"file": "p.csv", "metric": "auc_pr"}, "task t")


def test_corrected_recalibrates_bounds_set_under_the_official_silhouette(tmp_path: Path) -> None:
    """DA-Code set a clustering task's upper bound to its gold's official (inflated) silhouette; corrected
    scales both bounds by (gold's standard silhouette) / (best bound), so the gold scores 1 and a worse
    clustering keeps its place below it."""
    rng = np.random.default_rng(7)
    points = np.concatenate([rng.normal(centre, 0.6, size=(40, 2)) for centre in (0.0, 4.0, 8.0)])
    labels = np.repeat([0, 1, 2], 40)
    gold = tmp_path / "gold.csv"
    pd.DataFrame({"x": points[:, 0], "y": points[:, 1], "Cluster": labels}).to_csv(gold, index=False)
    official = metric_value("silhouette", None, labels, features=points, mode="compat")
    standard = silhouette_score(points, labels)
    assert official > standard  # the bound below is out of the gold's reach without recalibration
    worse_labels = labels.copy()
    worse_labels[::4] = (worse_labels[::4] + 1) % 3
    worse = tmp_path / "worse.csv"
    pd.DataFrame({"x": points[:, 0], "y": points[:, 1], "Cluster": worse_labels}).to_csv(worse, index=False)

    def score(path: Path, mode: str) -> float:
        return score_ml(
            path, gold, metric="silhouette", lower_bound=0.1, upper_bound=official, mode=mode
        ).value

    assert score(gold, "corrected") == 1.0
    factor = standard / official
    expected = (silhouette_score(points, worse_labels) - 0.1 * factor) / (official * factor - 0.1 * factor)
    assert score(worse, "corrected") == pytest.approx(expected)
    assert score(gold, "compat") == 1.0  # officially the bound was the gold's own (inflated) value
