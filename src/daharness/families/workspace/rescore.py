"""Scoring the output folders of an earlier DA-Agent run (`daharness score --dacode-eval`), by DA-Code's
task and eval files, and the table of what they scored."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from daharness.core.backend import Snapshot
from daharness.core.errors import UserError
from daharness.core.limits import Limits
from daharness.core.record import SampleRecord
from daharness.core.runlog import ScoringSettings
from daharness.core.score import Score
from daharness.core.submission import Submission
from daharness.core.task import Task
from daharness.families.workspace.dacode import load_dacode
from daharness.families.workspace.figures import category_figures
from daharness.runs.bounded_scoring import score_within_limits
from daharness.runs.pipeline import record_fields
from daharness.sandbox.workspace import folder_snapshot
from daharness.scoring import score_submission
from daharness.scoring.apply import describe


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
    if not outputs_dir.is_dir():  # every task would score 0 for a mistyped path
        raise UserError(f"--outputs {outputs_dir}: not a folder")
    refused: dict[str, str] = {}
    tasks = load_dacode(
        tasks_file,
        eval_file,
        source_dir=source_dir or gold_dir.parent / "source",
        gold_dir=gold_dir,
        suite="dacode",
        refused=refused,
    )
    if not tasks:
        raise UserError(f"{eval_file}: no task can be scored ({len(refused)} refused)")
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
        "refused": refused,  # configs no scorer can take: not scored, not in the average
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


SCORE_DACODE_OUTPUT = "daharness.families.workspace.rescore:score_dacode_output"


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


def print_rescored_outputs(console: Console, figures: dict[str, Any], title: str) -> None:
    """Per-task scores of rescored DA-Agent outputs, with the by-type and by-hardness means."""
    table = Table(title=title, title_justify="left")
    table.add_column("task")
    table.add_column("score", justify="right")
    table.add_column("why (below 1)", overflow="fold")
    reasons = figures.get("explanations", {})
    for task_id, value in figures["scores"].items():
        table.add_row(
            task_id,
            f"{value:.4f}" + (" (no output)" if task_id in figures["missing_outputs"] else ""),
            escape(reasons.get(task_id, "")[:120]) if value < 1 else "",
        )
    console.print(table)
    for label, key in (
        ("by category", "by_category"),
        ("by type", "by_subcategory"),
        ("by hardness", "by_level"),
    ):
        console.print(f"{label}: " + ", ".join(f"{k} {v:.4f}" for k, v in figures.get(key, {}).items()))
    console.print(f"average {figures['average']:.4f} over {len(figures['scores'])} tasks")
    for task_id, reason in figures.get("refused", {}).items():
        console.print(f"[yellow]refused[/] {escape(task_id)}: {escape(reason)}")
    if figures.get("refused"):
        console.print(
            f"{len(figures['refused'])} tasks refused (their configs cannot be scored; not in the average)"
        )
    if figures.get("official_average_without_missing") is not None:
        console.print(
            "the official tool drops tasks without output: its average would be "
            f"{figures['official_average_without_missing']:.4f}"
        )
