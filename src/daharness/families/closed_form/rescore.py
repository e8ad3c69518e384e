"""Scoring official InfiAgent-DABench responses (`daharness score --responses`): the official
`{"id": ..., "response": ...}` lines against the questions and labels, into the official figures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from daharness.core.errors import UserError, located
from daharness.core.jsonl import iter_jsonl
from daharness.families.closed_form.figures import dabench_figures, question_result
from daharness.families.closed_form.loader import load_dabench
from daharness.families.closed_form.scorer import score_closed_form
from daharness.suites import load_suite


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
        if any(task.family != "closed-form" for task in tasks):
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
