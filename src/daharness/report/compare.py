"""Compare runs: each run's figures with intervals, and each later run against the first, paired by sample.

A sample counts in a run's figures when it was scored and not excluded (errors of the harness are
counted apart, as in the single-run report). Two runs are paired on the sample ids both counted; the
comparison gives, overall and per group (family, category, and for DABench-style tasks each concept),
the paired difference with its interval and test, and lists the samples that flipped between right and
wrong. Runs of any format version open (records are read through the versioned run log).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from daharness.core.record import SampleRecord
from daharness.report.build import family_of
from daharness.report.epochs import epoch_figures, headline_interval
from daharness.report.stats import mcnemar, mean_interval, paired_difference
from daharness.report.task_set import task_set, task_set_warning
from daharness.runs.rundir import RunDir


def counted_records(run: RunDir) -> dict[str, SampleRecord]:
    """The latest record of each sample that was scored and not excluded."""
    return {
        rid: record
        for rid, record in run.latest_records().items()
        if record.status == "scored" and record.score is not None and not record.score.excluded
    }


def groups_of(record: SampleRecord) -> list[str]:
    """The groups a sample is compared in besides 'all': its family, its category or its concepts."""
    found = [f"family: {family_of(record)}"]
    if record.category:
        found.append(f"category: {record.category}")
    else:
        found += [f"concept: {concept}" for concept in record.concepts]
    if record.level:
        found.append(f"level: {record.level}")
    return found


def _right(record: SampleRecord) -> bool:
    return record.score is not None and record.score.value >= 1.0


def _value(record: SampleRecord) -> float:
    return record.score.value if record.score else 0.0


def run_figures(records: dict[str, SampleRecord]) -> dict[str, Any]:
    """A run's accuracy and mean score with their intervals, a task's epochs as one cluster (as in its report)."""
    values = list(records.values())
    return {
        "accuracy": headline_interval(values, lambda r: float(_right(r))),
        "mean_score": headline_interval(values, _value),
    }


def _paired_group(name: str, pairs: Sequence[tuple[SampleRecord, SampleRecord]]) -> dict[str, Any]:
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    return {
        "group": name,
        "n": len(pairs),
        "accuracy": {
            "a": mean_interval([float(_right(r)) for r in a])["value"],
            "b": mean_interval([float(_right(r)) for r in b])["value"],
            **paired_difference([float(_right(r)) for r in a], [float(_right(r)) for r in b]),
            "mcnemar": mcnemar([_right(r) for r in a], [_right(r) for r in b]),  # the test for pass/fail
        },
        "mean_score": {
            "a": mean_interval([_value(r) for r in a])["value"],
            "b": mean_interval([_value(r) for r in b])["value"],
            **paired_difference([_value(r) for r in a], [_value(r) for r in b]),
        },
    }


def compare_pair(a: dict[str, SampleRecord], b: dict[str, SampleRecord]) -> dict[str, Any]:
    shared = sorted(set(a) & set(b), key=_natural)
    pairs = [(a[i], b[i]) for i in shared]
    grouped: dict[str, list[tuple[SampleRecord, SampleRecord]]] = {}
    for pair in pairs:
        for name in groups_of(pair[0]):
            grouped.setdefault(name, []).append(pair)
    flipped = [
        {
            "id": first.id,
            "direction": "gained" if _right(second) else "lost",
            "a": _value(first),
            "b": _value(second),
            "a_answer": first.answer,
            "b_answer": second.answer,
        }
        for first, second in pairs
        if _right(first) != _right(second)
    ]
    return {
        "paired": len(pairs),
        "only_in_a": sorted(set(a) - set(b), key=_natural),
        "only_in_b": sorted(set(b) - set(a), key=_natural),
        "groups": [_paired_group("all", pairs)]
        + [_paired_group(name, grouped[name]) for name in sorted(grouped)],
        "flipped": flipped,
    }


def compare_runs(dirs: Sequence[Path]) -> dict[str, Any]:
    """Figures of every run, and every later run compared with the first."""
    runs = [RunDir.open_for_reading(path) for path in dirs]
    labels = [chr(ord("A") + index) if index < 26 else f"R{index}" for index in range(len(runs))]
    counted = [counted_records(run) for run in runs]
    described = []
    for label, run, records in zip(labels, runs, counted, strict=True):
        spec = run.spec()
        all_records = run.latest_records()
        described.append(
            {
                "label": label,
                "dir": str(run.root),
                "suite": spec.suite.get("name"),
                "agent": spec.agent.get("name"),
                "model": spec.agent.get("model"),
                "scoring": spec.scoring.modes,
                "samples": len(all_records),
                "errors": sum(r.status == "error" for r in all_records.values()),
                "figures": run_figures(records),
                "epochs": epoch_figures(list(all_records.values()), spec.epochs),
                "tags": spec.tags,
                "metadata": spec.metadata,
                "task_set": task_set(all_records.values(), spec),
            }
        )
    comparisons = [
        {
            "a": labels[0],
            "b": labels[index],
            # samples pair by id: ids of two different suites may name different questions
            "same_suite": described[index]["suite"] == described[0]["suite"],
            "same_task_set": described[index]["task_set"]["hash"] == described[0]["task_set"]["hash"],
            **compare_pair(counted[0], counted[index]),
        }
        for index in range(1, len(runs))
    ]
    return {"runs": described, "comparisons": comparisons, "task_sets_differ": task_set_warning(described)}


def _natural(sample_id: str) -> tuple[int, int | str]:
    return (0, int(sample_id)) if sample_id.isdigit() else (1, sample_id)


def significant(p: float | None, level: float = 0.05) -> bool:
    return p is not None and p < level
