"""Apply a task's scorer specs to a submission and combine them with the task's conjunction."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from daharness.agents.base import Submission
from daharness.scoring.base import Score, combine
from daharness.scoring.closed_form import MODES, score_closed_form
from daharness.scoring.workspace import WORKSPACE_MODES, score_workspace_spec
from daharness.tasks.model import Task
from daharness.tasks.workspace_suite import WORKSPACE_SCORERS

ScorerFn = Callable[[Task, Submission, dict[str, Any]], Score]


def _closed_form(task: Task, submission: Submission, options: dict[str, Any]) -> Score:
    return score_closed_form(task, submission.answer, mode=options.get("mode", "normalized"))


SCORERS: dict[str, ScorerFn] = {"closed_form": _closed_form}


def score_submission(
    task: Task,
    submission: Submission,
    *,
    closed_form_mode: str = "normalized",
    workspace_mode: str = "corrected",
    workspace: Path | None = None,
) -> Score:
    """Score one submission against the final `workspace` of its sample.

    `closed_form_mode` overrides the mode of every closed-form scorer, `workspace_mode` that of the
    workspace scorers (table, database, text, ml, chart)."""
    if closed_form_mode not in MODES:
        raise ValueError(f"unknown closed-form mode {closed_form_mode!r}")
    if workspace_mode not in WORKSPACE_MODES:
        raise ValueError(f"unknown workspace mode {workspace_mode!r}")
    if not task.scorers:
        raise ValueError(f"task {task.id} has no scorer")
    scores = []
    for spec in task.scorers:
        options = dict(spec.options)
        if spec.name == "closed_form":
            options["mode"] = closed_form_mode
        if spec.name in WORKSPACE_SCORERS:
            scores.append(
                score_workspace_spec(spec.name, task, submission, workspace, options, workspace_mode)
            )
            continue
        scorer = SCORERS.get(spec.name)
        if scorer is None:
            known = ", ".join([*SCORERS, *WORKSPACE_SCORERS])
            raise ValueError(f"task {task.id}: unknown scorer {spec.name!r} (known: {known})")
        scores.append(scorer(task, submission, options))
    if len(scores) == 1:
        return scores[0]
    counted = [s for s in scores if not s.excluded]
    if not counted:
        return Score(value=0.0, excluded=True, explanation="every scorer excluded the sample")
    return Score(
        value=combine([s.value for s in counted], task.conjunction),
        explanation=f"{task.conjunction.value} of {len(counted)} scorers",
        details={"scorers": [s.model_dump() for s in scores]},
    )
