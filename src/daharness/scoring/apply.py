"""Apply a task's scorers to a submission and combine their values with the task's conjunction."""

from __future__ import annotations

from daharness.core.backend import Snapshot
from daharness.core.registry import scorers
from daharness.core.runlog import ScoringSettings
from daharness.core.score import Score, combine
from daharness.core.scoring import ScoringContext
from daharness.core.submission import Submission
from daharness.core.task import Task


def score_submission(
    task: Task, submission: Submission, files: Snapshot | None, settings: ScoringSettings | None = None
) -> Score:
    """Score one submission and the files collected after it; each scorer's mode comes from `settings`
    (its mode group's choice, else the group's default)."""
    settings = settings or ScoringSettings()
    if not task.scorers:
        raise ValueError(f"task {task.id} has no scorer")
    scores = []
    for spec in task.scorers:
        entry = scorers.get(spec.name)
        options = entry.parse_options(spec.options, f"task {task.id}")
        mode = settings.mode(entry.modes.name, entry.modes.default) if entry.modes else ""
        context = ScoringContext(task=task, submission=submission, files=files, mode=mode)
        scores.append(entry.fn(context, options))
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
