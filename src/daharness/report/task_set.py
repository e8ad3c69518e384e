"""The task set of a run: which tasks its figures are over, named by a short hash of the suite, the task
ids it ran and the suite's tasks it left out because they cannot run where it was made (`run.json`
`left_out`). Two runs that both score 100% on different task sets (a machine without Dagster leaves its
tasks out) show different hashes, in their reports and in `compare`, which warns."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from daharness.core.record import SampleRecord
from daharness.core.runlog import RunSpec

_SHOWN = 5  # left-out ids a line names before "..."


def task_set(records: Iterable[SampleRecord], spec: RunSpec) -> dict[str, Any]:
    """`{"hash", "tasks", "left_out"}`: a left-out task that has a record since (the machine gained what
    it needed, and the run was resumed) counts as ran."""
    tasks = sorted({record.id for record in records})
    left_out = sorted(set(spec.left_out) - set(tasks))
    named = {"suite": spec.suite.get("name"), "version": spec.suite.get("version"), "tasks": tasks}
    digest = hashlib.sha256(json.dumps({**named, "left_out": left_out}).encode()).hexdigest()[:12]
    return {"hash": digest, "tasks": len(tasks), "left_out": left_out}


def task_set_text(found: dict[str, Any] | None) -> str | None:
    """`task set 3fa2c1b09e7d: 33 tasks, 6 left out here (cannot run: a, b, ...)`, or None (a report
    written before task sets were named)."""
    if not found:
        return None
    text = f"task set {found['hash']}: {found['tasks']} tasks"
    left_out = found["left_out"]
    if left_out:
        shown = ", ".join(left_out[:_SHOWN]) + (", ..." if len(left_out) > _SHOWN else "")
        text += f", {len(left_out)} left out where it ran (cannot run there: {shown})"
    return text


def task_set_warning(runs: list[dict[str, Any]]) -> str | None:
    """compare's warning when the runs' task sets differ (each run as compare describes it)."""
    found = [run for run in runs if run.get("task_set")]
    if len({run["task_set"]["hash"] for run in found}) <= 1:
        return None
    named = "; ".join(
        f"{run['label']}: {run['task_set']['hash']} ({run['task_set']['tasks']} tasks"
        + (f", {len(run['task_set']['left_out'])} left out" if run["task_set"]["left_out"] else "")
        + ")"
        for run in found
    )
    return (
        f"the runs' task sets differ ({named}): each run's own figures are over other tasks, so equal "
        "figures do not mean equal results; the paired figures use the samples both runs scored"
    )
