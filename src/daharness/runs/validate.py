"""`daharness validate`: check a suite's tasks the way DA-Code's authors did (section 3.5).

For every task the reference solution runs in the sandbox and must score 1 (ML tasks: at least the
task's `threshold`). Then the task's family changes the reference's result in the ways a wrong agent
would, and each changed version is scored again:

- `FamilyBase.mutations`: changed output files or a changed final answer (the workspace family deletes
  an output, drops a column, moves numbers by 5%, changes a chart's type; in corrected mode it also
  makes the changes an instruction may allow or forbid). A damaging or forbidden change must score
  below the reference; an allowed one must keep its score.
- `FamilyBase.damaged`: wrong answers (a closed-form number moved by 5%, a wrong letter, a dropped
  intent, the suite's decoy code...). Such an answer must lower the score or, where the family reports
  one, the score's `accr` (Tapilot's AccR).

A task that fails a check is reported; the command exits non-zero if any does. Families whose tasks
are checked by their states (`FamilyBase.validation = "states"`) check them with their own code.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field

from daharness.agents.reference import ReferenceAgent
from daharness.core.family import Mutation
from daharness.core.limits import Limits
from daharness.core.runlog import ScoringSettings
from daharness.core.score import Score
from daharness.core.task import Task
from daharness.runs.pipeline import SandboxSettings, family_hooks, solve_and_collect, started
from daharness.scoring import score_submission


@dataclass
class TaskValidation:
    task_id: str
    reference_score: float | None = None
    required: float = 1.0
    problems: list[str] = field(default_factory=list)
    mutations: dict[str, float] = field(default_factory=dict)
    allowed: dict[str, float] = field(default_factory=dict)  # changes the instruction allows

    @property
    def ok(self) -> bool:
        return not self.problems


def validate_task(task: Task, *, scoring: ScoringSettings, limits: Limits | None = None) -> TaskValidation:
    result = TaskValidation(task.id, required=float(task.gold.data.get("threshold") or 1.0))
    snapshot = None
    settings = SandboxSettings(limits=limits or Limits())
    try:
        submission, snapshot = solve_and_collect(task, ReferenceAgent(), settings)
        score = score_submission(task, submission, snapshot, scoring)
        result.reference_score = score.value
        if score.value < result.required:
            result.problems.append(
                f"reference scores {score.value:.3f} < {result.required:g}: {score.explanation}"
            )
            return result
        if _accr(score) < result.required:
            result.problems.append(
                f"reference's AccR is {_accr(score):.3f} < {result.required:g}: {score.explanation}"
            )
            return result
        family = family_hooks(task)
        for mutation in family.mutations(task, submission, snapshot, scoring):
            value = score_submission(task, mutation.submission, mutation.snapshot, scoring).value
            _judge(result, mutation, value, score.value)
        scratch = snapshot.root.parent / "validate"
        for name, wrong in family.damaged(task, submission, lambda: started(task, settings), scratch):
            damaged = score_submission(task, wrong, snapshot, scoring)
            result.mutations[name] = min(damaged.value, _accr(damaged))
            if damaged.value >= score.value and _accr(damaged) >= _accr(score):
                result.problems.append(f"damaged answer '{name}' still scores {damaged.value:.3f}")
    except Exception as exc:  # a broken task is a finding, not a crash of the command
        result.problems.append(f"{type(exc).__name__}: {exc}")
    finally:
        if snapshot is not None:
            shutil.rmtree(snapshot.root.parent, ignore_errors=True)
    return result


def _judge(result: TaskValidation, mutation: Mutation, value: float, reference: float) -> None:
    """Damaging and forbidden changes must score lower, allowed ones keep the reference's score."""
    if mutation.kind == "allowed":
        result.allowed[mutation.name] = value
        if value < reference:
            result.problems.append(
                f"'{mutation.name}' scores {value:.3f}, but the task's options allow it (corrected mode must "
                "not penalize what the instruction leaves open)"
            )
        return
    result.mutations[mutation.name] = value
    if value >= reference:
        why = " (the task forbids it)" if mutation.kind == "forbidden" else ""
        result.problems.append(f"mutation '{mutation.name}' still scores {value:.3f}{why}")


def _accr(score: Score) -> float:
    """A family's second figure of a score (Tapilot's AccR), else the score itself."""
    return float(score.details.get("accr", score.value))
