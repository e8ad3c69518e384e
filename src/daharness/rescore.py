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
