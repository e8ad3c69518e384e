"""Adapters from workspace tasks' scorer specs to the scorers: find the predicted file in the sample's
final workspace and the gold file among the task's gold files, then call the pure scorer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from daharness.agents.base import Submission
from daharness.scoring.base import Score
from daharness.tasks.model import Task

WORKSPACE_MODES = ("corrected", "compat")
_PLUMBING = {"file", "gold", "mode"}


def gold_path(task: Task, name: str) -> Path:
    for gold in task.gold.files:
        if gold.name == name or Path(gold.name).name == name:
            return gold.source
    raise FileNotFoundError(f"task {task.id}: no gold file {name!r}")


def _predicted(workspace: Path | None, options: dict[str, Any]) -> Path | None:
    if workspace is None or not options.get("file"):
        return None
    return workspace / options["file"]


def _extra(options: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in options.items() if key not in _PLUMBING}


def score_workspace_spec(
    name: str, task: Task, submission: Submission, workspace: Path | None, options: dict[str, Any], mode: str
) -> Score:
    predicted = _predicted(workspace, options)
    gold_name = options.get("gold") or options.get("file")
    if predicted is None and name != "text":  # only a text answer can come without an output file
        return Score(value=0.0, explanation=f"{name} scorer of task {task.id}: no output file to score")
    if name == "table":
        from daharness.scoring.table import score_table

        golds = [gold_path(task, g) for g in (gold_name if isinstance(gold_name, list) else [gold_name])]
        return score_table(predicted, golds, mode=mode, **_extra(options))  # type: ignore[arg-type]
    if name == "database":
        from daharness.scoring.database import score_database

        return score_database(predicted, gold_path(task, gold_name), mode=mode, **_extra(options))  # type: ignore[arg-type]
    if name == "ml":
        from daharness.scoring.ml import score_ml

        return score_ml(predicted, gold_path(task, gold_name), mode=mode, **_extra(options))  # type: ignore[arg-type]
    if name == "text":
        import json

        from daharness.scoring.text import score_text

        if "expected" in options:
            expected = options["expected"]
        else:
            expected = json.loads(gold_path(task, options["gold"]).read_text(encoding="utf-8"))
        extra = {k: v for k, v in _extra(options).items() if k != "expected"}
        return score_text(expected, answer_text=submission.answer, answer_file=predicted, mode=mode, **extra)  # type: ignore[arg-type]
    if name == "chart":
        from daharness.scoring.chart import score_chart

        # the image itself must exist; its data comes from the capture written beside it
        capture = Path(f"{predicted}.json") if predicted is not None and predicted.is_file() else None
        gold = gold_path(task, gold_name if str(gold_name).endswith(".json") else f"{gold_name}.json")
        return score_chart(
            capture if capture and capture.is_file() else None, gold, mode=mode, **_extra(options)
        )  # type: ignore[arg-type]
    raise ValueError(f"task {task.id}: unknown workspace scorer {name!r}")
