"""Rescore responses produced elsewhere (the official InfiAgent-DABench responses layout)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from daharness.errors import UserError, located
from daharness.jsonl import iter_jsonl
from daharness.report.dabench_metrics import dabench_figures, question_result
from daharness.scoring.closed_form import Mode, score_closed_form
from daharness.suites import load_suite
from daharness.tasks.dabench import load_dabench
from daharness.tasks.model import Family


def read_responses(path: Path) -> dict[str, str]:
    """id -> response, keeping the first non-empty response per id, as the official script does."""
    found: dict[str, str] = {}
    for line, row in iter_jsonl(path):
        if "id" not in row:
            continue  # the official script ignores such lines too
        if "response" not in row:
            raise located(path, "missing field 'response'", line)
        response = row["response"]
        if response is not None and not isinstance(response, str):
            raise located(path, f"field 'response' must be a string, got {type(response).__name__}", line)
        if response and str(row["id"]) not in found:
            found[str(row["id"])] = response
    return found


def rescore_dabench(
    responses: Path,
    *,
    questions: Path | None,
    labels: Path | None,
    suite: str | None,
    mode: Mode,
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
    results = []
    for task in tasks:
        score = score_closed_form(task, answers.get(task.id), mode=mode)
        results.append(
            question_result(
                task.id, score.details, score.excluded, task.metadata.concepts, task.metadata.level
            )
        )
    return dabench_figures(results), [w for task in tasks for w in task.warnings]


def rescore_dacode(
    tasks_file: Path,
    eval_file: Path,
    *,
    gold_dir: Path,
    outputs_dir: Path,
    source_dir: Path | None,
    mode: str,
) -> tuple[dict[str, Any], list[str]]:
    """Score the outputs of an earlier DA-Agent run (`<outputs>/<id>/` with `dabench/result.json`).

    A task whose output folder or result.json is missing scores 0 (the official tool silently leaves it
    out of the average; in compat mode the result says how many were left out that way)."""
    import json

    from daharness.agents.base import Submission
    from daharness.report.category_metrics import mean_by
    from daharness.scoring.dispatch import score_submission
    from daharness.tasks.dacode import load_dacode

    tasks = load_dacode(
        tasks_file,
        eval_file,
        source_dir=source_dir or gold_dir.parent / "source",
        gold_dir=gold_dir,
        suite="dacode",
    )
    scores: dict[str, float] = {}
    missing: list[str] = []
    for task in tasks:
        result_file = outputs_dir / task.id / "dabench" / "result.json"
        if not result_file.is_file():
            missing.append(task.id)
            scores[task.id] = 0.0
            continue
        try:
            result = json.loads(result_file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise located(result_file, f"not valid JSON ({exc.msg})", exc.lineno) from None
        answer = result.get("result")
        submission = Submission(answer=answer if isinstance(answer, str) else json.dumps(answer))
        score = score_submission(task, submission, workspace_mode=mode, workspace=outputs_dir / task.id)
        scores[task.id] = round(score.value, 4)
    by_type = mean_by(((t.metadata.subcategory or t.metadata.tags[0] or "?"), scores[t.id]) for t in tasks)
    by_hardness = mean_by(((t.metadata.level or "?"), scores[t.id]) for t in tasks)
    figures: dict[str, Any] = {
        "scores": scores,
        "average": round(sum(scores.values()) / len(scores), 4),
        "by_type": by_type,
        "by_hardness": by_hardness,
        "missing_outputs": missing,
    }
    if mode == "compat" and missing:
        present = [v for k, v in scores.items() if k not in missing]
        figures["official_average_without_missing"] = (
            round(sum(present) / len(present), 4) if present else None
        )
    return figures, [w for task in tasks for w in task.warnings]
