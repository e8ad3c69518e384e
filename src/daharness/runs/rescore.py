"""Scoring a finished daharness run again, from its saved answers and artifacts, with other scoring
settings (`daharness rescore`). Official outputs of other tools are rescored by their families
(`daharness score`)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from daharness.core.errors import UserError
from daharness.core.family import FamilyBase
from daharness.core.limits import Limits
from daharness.core.runlog import ScoringSettings
from daharness.core.submission import Submission
from daharness.core.task import Task
from daharness.runs.bounded_scoring import score_within_limits
from daharness.runs.pipeline import family_hooks
from daharness.runs.rundir import RunDir
from daharness.sandbox.workspace import folder_snapshot
from daharness.suites import load_suite


def _checked_in_the_sandbox(task: Task) -> bool:
    """Whether the task's family gathers evidence in the sandbox after the agent (its `finish` hook: a
    workflow check script, the interactive answer run after the history). The run keeps no copy of it,
    so saved files alone cannot score such a sample again."""
    return type(family_hooks(task)).finish is not FamilyBase.finish


def rescore_run(source: Path, out: Path, scoring: ScoringSettings, *, confined: bool = True) -> RunDir:
    """Score a finished run again from its saved answers and artifacts into a new run directory.

    Each scored sample's workspace is rebuilt from the task's files with the saved artifacts on top;
    samples that ended in an error have nothing to score and are copied as they are. The artifacts
    are scored as a run scores them: in the confined scoring worker (`confined=False`: unconfined)."""
    if out.resolve() == source.resolve():  # its records would be appended to the run being read
        raise UserError(f"--out {out}: the new run directory must not be the run being rescored")
    old = RunDir.open_for_reading(source)
    spec = old.spec()
    if not spec.suite_spec.get("spec"):
        raise UserError(
            f"{source}: run.json does not say how to load its suite (runs before 0.2 cannot be rescored)"
        )
    options = spec.suite_spec.get("options") or {}
    if not isinstance(spec.suite_spec["spec"], str):
        raise UserError(f"{source / 'run.json'}: field 'suite_spec.spec' must be a suite name or FORMAT:PATH")
    if not isinstance(options, dict) or not all(isinstance(v, str | bool) for v in options.values()):
        raise UserError(
            f"{source / 'run.json'}: field 'suite_spec.options' must map option names to strings or booleans"
        )
    suite = load_suite(spec.suite_spec["spec"], **options)  # each format reads its options' types itself
    tasks = {task.id: task for task in suite.tasks}
    if checked := sorted({str(task.family) for task in tasks.values() if _checked_in_the_sandbox(task)}):
        raise UserError(
            f"{source}: {' and '.join(checked)} answers are scored by checks run in the sandbox after the "
            f"agent; use `daharness run --agent replay --replay-from {source}` with the scoring options you want"
        )
    new_spec = spec.model_copy(update={"scoring": scoring})
    setattr(new_spec, "rescored_from", str(source.resolve()))  # noqa: B010  (an extra field of run.json)
    run = RunDir.open_for_writing(out, new_spec)
    for record in old.latest_records().values():
        trajectory = old.read_trajectory(record.key)
        task = tasks.get(record.id)
        if record.status != "scored" or record.failure or task is None or trajectory is None:
            run.append(record)
            continue
        submission = Submission(answers=trajectory.answers or [trajectory.answer])
        with tempfile.TemporaryDirectory(prefix="daharness-rescore-") as scratch:
            files = Path(scratch)
            for item in task.files:
                (files / item.path).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(item.source, files / item.path)
            artifacts = old.artifacts_dir(record.key)
            if artifacts.is_dir():
                shutil.copytree(artifacts, files, dirs_exist_ok=True, symlinks=True)
                shutil.copytree(artifacts, run.artifacts_dir(record.key), dirs_exist_ok=True, symlinks=True)
            captures = old.captures_dir(record.key)
            if captures.is_dir():
                shutil.copytree(captures, run.captures_dir(record.key), dirs_exist_ok=True)
            snapshot = folder_snapshot(
                files, tuple(record.artifacts), captures if captures.is_dir() else None
            )
            score = score_within_limits(task, submission, snapshot, scoring, Limits(), confined=confined)
        run.write_trajectory(trajectory)
        run.append(record.model_copy(update={"score": score}))
    return run
