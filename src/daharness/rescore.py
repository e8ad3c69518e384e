"""Scoring again what was produced before: official DABench responses, DA-Agent output folders, and
finished daharness runs (from their saved answers and artifacts, with other scoring settings)."""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from daharness.core.backend import Snapshot
from daharness.core.errors import UserError, located
from daharness.core.family import FamilyBase
from daharness.core.limits import Limits
from daharness.core.record import SampleRecord
from daharness.core.runlog import ScoringSettings
from daharness.core.score import Score
from daharness.core.submission import Submission
from daharness.core.task import Family, Task
from daharness.families.closed_form import dabench_figures, question_result
from daharness.families.workspace import category_figures
from daharness.jsonl import iter_jsonl
from daharness.runs.bounded_scoring import score_within_limits
from daharness.runs.pipeline import family_hooks, record_fields
from daharness.runs.rundir import RunDir
from daharness.sandbox.workspace import folder_snapshot
from daharness.scoring import score_submission
from daharness.scoring.apply import describe
from daharness.scoring.closed_form import score_closed_form
from daharness.suites import load_suite
from daharness.tasks.dabench import load_dabench


def read_responses(path: Path) -> dict[str, str]:
    """id -> response, keeping the first non-empty response per id, as the official script does."""
    found: dict[str, str] = {}
    rows = 0
    for line, row in iter_jsonl(path):
        rows += 1
        if "id" not in row:
            continue  # the official script ignores such lines too
        if "response" not in row:
            raise located(path, "missing field 'response'", line)
        response = row["response"]
        if response is not None and not isinstance(response, str):
            raise located(path, f"field 'response' must be a string, got {type(response).__name__}", line)
        if response and str(row["id"]) not in found:
            found[str(row["id"])] = response
    if not rows:
        raise UserError(f"{path}: holds no responses (the file is empty)")
    return found


def rescore_dabench(
    responses: Path, *, questions: Path | None, labels: Path | None, suite: str | None, mode: str
) -> tuple[dict[str, Any], list[str]]:
    """Score every question against the responses; returns (figures, loader warnings)."""
    if suite is not None:
        tasks = load_suite(suite).tasks
        if any(task.family != Family.closed_form for task in tasks):
            raise UserError(
                f"--suite {suite}: not a closed-form suite; --responses rescoring needs @name[value] answers"
            )
    elif questions is not None and labels is not None:
        tasks = load_dabench(questions, labels, None, suite=f"dabench:{questions.stem}")
    else:
        raise UserError("name the questions with --questions and --labels, or a built-in --suite")
    answers = read_responses(responses)
    unknown = sorted(set(answers) - {task.id for task in tasks})
    if unknown and len(unknown) == len(answers):  # the wrong file, or another benchmark's ids
        raise UserError(
            f"{responses}: no response id names a question of these tasks (first: {unknown[0]!r})"
        )
    warnings = (
        [f"{responses}: responses naming no question ({len(unknown)}): {', '.join(unknown[:5])}"]
        if unknown
        else []
    )
    results = []
    for task in tasks:
        score = score_closed_form(task, answers.get(task.id), mode=mode)  # type: ignore[arg-type]
        results.append(
            question_result(
                task.id, score.details, score.excluded, task.metadata.concepts, task.metadata.level
            )
        )
    return dabench_figures(results), warnings + [w for task in tasks for w in task.warnings]


def rescore_dacode(
    tasks_file: Path,
    eval_file: Path,
    *,
    gold_dir: Path,
    outputs_dir: Path,
    source_dir: Path | None,
    mode: str,
    confined: bool = True,
) -> tuple[dict[str, Any], list[str]]:
    """Score the outputs of an earlier DA-Agent run (`<outputs>/<id>/` with `dabench/result.json`).

    Every task gets a score and a reason, never an exception: a task whose output folder or result.json
    is missing scores 0 (the official tool silently leaves it out of the average; in compat mode the
    result says how many were left out that way); a result.json that is not JSON, or lacks `result`,
    scores 0; in compat a run that did not finish (`"finished": false`) scores 0, as officially; a
    scorer that fails (e.g. a gold file the benchmark lacks) scores 0 with the error. The folders are
    agents' files: they are read, result.json included, only in the confined scoring worker
    (`confined=False`: unconfined, `--sandbox unsafe-local`)."""
    from daharness.tasks.dacode import load_dacode

    if not outputs_dir.is_dir():  # every task would score 0 for a mistyped path
        raise UserError(f"--outputs {outputs_dir}: not a folder")
    tasks = load_dacode(
        tasks_file,
        eval_file,
        source_dir=source_dir or gold_dir.parent / "source",
        gold_dir=gold_dir,
        suite="dacode",
    )
    settings = ScoringSettings(modes={"workspace": mode})
    records: list[SampleRecord] = []
    missing: list[str] = []
    explanations: dict[str, str] = {}
    for task in tasks:
        folder = outputs_dir / task.id
        result_file = folder / DACODE_RESULT
        if not result_file.is_file():
            missing.append(task.id)
            score = Score(value=0.0, explanation=f"no {result_file.relative_to(outputs_dir)}")
        else:
            score = _score_output(task, folder, settings, confined)
        explanations[task.id] = score.explanation
        records.append(_record(task, score.value))
    scores = {r.id: r.score.value for r in records}  # type: ignore[union-attr]
    figures: dict[str, Any] = {
        "scores": scores,
        "average": sum(scores.values()) / len(scores),
        **(category_figures(records) or {}),
        "missing_outputs": missing,
        "explanations": explanations,
    }
    if mode == "compat" and missing:
        present = [v for k, v in scores.items() if k not in missing]
        figures["official_average_without_missing"] = sum(present) / len(present) if present else None
    return figures, [w for task in tasks for w in task.warnings]


DACODE_RESULT = "dabench/result.json"


def _score_output(task: Task, folder: Path, settings: ScoringSettings, confined: bool) -> Score:
    """One DA-Agent output folder, every file of it the agent's, scored in the scoring worker."""
    collected = folder_snapshot(folder)
    snapshot = replace(collected, changed=tuple(sorted(collected.files)))
    try:
        return score_within_limits(
            task, Submission(), snapshot, settings, Limits(), confined=confined, call=SCORE_DACODE_OUTPUT
        )
    except Exception as exc:  # a benchmark defect (e.g. a missing gold file) must not stop the others
        return Score(value=0.0, explanation=f"cannot score: {type(exc).__name__}: {exc}")


SCORE_DACODE_OUTPUT = "daharness.rescore:score_dacode_output"


def score_dacode_output(
    task: Task, submission: Submission, snapshot: Snapshot, settings: ScoringSettings
) -> Score:
    """Runs in the scoring worker: the answer in the folder's dabench/result.json, then the task's
    scorers; any problem with result.json is a 0 with the reason."""
    result_file = snapshot.path(DACODE_RESULT)
    if result_file is None:
        return Score(value=0.0, explanation=f"no {DACODE_RESULT} was read (see the withheld files)")
    try:
        result = json.loads(result_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        return Score(value=0.0, explanation=f"{result_file.name} is not valid JSON ({describe(exc)})")
    if not isinstance(result, dict) or "result" not in result:
        return Score(value=0.0, explanation=f"{result_file.name} has no 'result' field")
    if settings.modes.get("workspace") == "compat" and result.get("finished") is False:
        return Score(value=0.0, explanation="the run did not finish (the official evaluator scores it 0)")
    answer = result["result"]
    try:
        text = answer if isinstance(answer, str) else json.dumps(answer)
    except (ValueError, RecursionError) as exc:
        return Score(
            value=0.0, explanation=f"{result_file.name}: its 'result' cannot be read ({describe(exc)})"
        )
    scored = replace(submission, answers=[text], finished=result.get("finished") is not False)
    return score_submission(task, scored, snapshot, settings)


def _record(task: Task, value: float) -> SampleRecord:
    return SampleRecord(
        status="scored",
        score=Score(value=value),
        started_at="",
        duration_s=0.0,
        **record_fields(task, "outputs", 1),
    )


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
        trajectory = old.read_trajectory(record.id)
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
            artifacts = old.artifacts_dir(record.id)
            if artifacts.is_dir():
                shutil.copytree(artifacts, files, dirs_exist_ok=True, symlinks=True)
                shutil.copytree(artifacts, run.artifacts_dir(record.id), dirs_exist_ok=True, symlinks=True)
            captures = old.captures_dir(record.id)
            if captures.is_dir():
                shutil.copytree(captures, run.captures_dir(record.id), dirs_exist_ok=True)
            snapshot = folder_snapshot(
                files, tuple(record.artifacts), captures if captures.is_dir() else None
            )
            score = score_within_limits(task, submission, snapshot, scoring, Limits(), confined=confined)
        run.write_trajectory(trajectory)
        run.append(record.model_copy(update={"score": score}))
    return run
