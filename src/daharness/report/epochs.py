"""Figures of a run whose tasks ran several times (`run --epochs N`), as the agent literature gives them:
each task's mean score over its epochs, pass@k (at least one of k tries right; Chen et al., 2021) and
pass^k (all k tries right; tau-bench, Yao et al., 2024), both with the unbiased estimator over the n
epochs a task has: pass@k = 1 - C(n-c, k) / C(n, k), pass^k = C(c, k) / C(n, k), c of them right."""

from __future__ import annotations

from collections.abc import Callable
from math import comb
from typing import Any

from daharness.core.record import SampleRecord
from daharness.report.stats import clustered_mean_interval, mean_interval


def headline_interval(records: list[SampleRecord], value: Callable[[SampleRecord], float]) -> dict[str, Any]:
    """The mean of `value` over `records` with its 95% interval; where a task has several records (its
    epochs), each task is one cluster (`clustered_mean_interval`), not each record an independent sample."""
    by_task: dict[str, list[float]] = {}
    for record in records:
        by_task.setdefault(record.id, []).append(value(record))
    if all(len(values) == 1 for values in by_task.values()):
        return mean_interval([value(record) for record in records])
    return clustered_mean_interval(list(by_task.values()))


def epoch_figures(records: list[SampleRecord], epochs: int) -> dict[str, Any] | None:
    """None for a run of one epoch. A task counts with the epochs it has scored (errors and excluded
    samples left out); pass@k and pass^k average over the tasks with at least k of them."""
    if epochs <= 1:
        return None
    by_task: dict[str, list[float]] = {}
    for record in records:
        if record.status == "scored" and record.score is not None and not record.score.excluded:
            by_task.setdefault(record.id, []).append(record.score.value)
    pass_at, pass_hat = {}, {}
    for k in range(1, epochs + 1):
        counts = [
            (len(values), sum(v >= 1.0 for v in values)) for values in by_task.values() if len(values) >= k
        ]
        if counts:
            pass_at[str(k)] = round(sum(1 - comb(n - c, k) / comb(n, k) for n, c in counts) / len(counts), 4)
            pass_hat[str(k)] = round(sum(comb(c, k) / comb(n, k) for n, c in counts) / len(counts), 4)
    means = [sum(values) / len(values) for values in by_task.values()]
    return {
        "epochs": epochs,
        "tasks": len(by_task),
        "mean_score": round(sum(means) / len(means), 4) if means else None,
        "pass@k": pass_at,
        "pass^k": pass_hat,
    }


def interval_basis(figure: dict[str, Any]) -> str:
    """What an interval was computed over: `over 8 samples`, or with epochs `over 8 samples of 4 tasks (a
    task's epochs count as one)`."""
    clusters = figure.get("clusters")
    tasks = f" of {clusters} tasks (a task's epochs count as one)" if clusters else ""
    return f"over {figure['n']} samples{tasks}"


def epochs_line(figures: dict[str, Any] | None) -> str | None:
    """`epochs 3 over 5 tasks: mean 0.667 · pass@1 0.667, pass@3 1.000 · pass^3 0.200`, or None."""
    if not figures or not figures["pass@k"]:
        return None
    last = str(max(int(k) for k in figures["pass@k"]))
    return (
        f"epochs {figures['epochs']} over {figures['tasks']} tasks: mean score {figures['mean_score']:.3f} · "
        f"pass@1 {figures['pass@k']['1']:.3f}, pass@{last} {figures['pass@k'][last]:.3f} · "
        f"pass^{last} {figures['pass^k'][last]:.3f}"
    )


def labels_line(run: dict[str, Any]) -> str | None:
    """`tags: nightly, gpt-4o · prompt=v2, commit=abc123`, or None when the run has neither."""
    parts = []
    if run.get("tags"):
        parts.append("tags: " + ", ".join(run["tags"]))
    if run.get("metadata"):
        parts.append(", ".join(f"{key}={value}" for key, value in run["metadata"].items()))
    return " · ".join(parts) or None
