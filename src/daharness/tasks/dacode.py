"""Loader for official DA-Code files: a task JSONL, an eval JSONL, and `source/<id>/` and `gold/<id>/`.

Task lines: `id`, `type`, `instruction`, `hardness`, `post_process`. Eval lines: `id`, `config` (`task`,
`type`, `hardness`, `metric`, `upper_bound`, `lower_bound`), `func` (list of official metric names),
`result` (per func: `{"file": [...]}`, `{"number": [...]}`), `options` (per func), optional `conj`.
Each official metric becomes one of our scorers; an option name the scorer does not know (a misspelling,
typically) is a warning naming the task and the option, and is ignored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from daharness.core.errors import UserError, located
from daharness.core.registry import check_task_scorers, scorers
from daharness.core.task import (
    AnswerFormat,
    Conjunction,
    Family,
    Gold,
    ScorerSpec,
    Task,
    TaskMetadata,
)
from daharness.jsonl import iter_jsonl
from daharness.tasks.workspace_suite import gold_files, visible_files

SOURCE = "DA-Code"
FUNC_TO_SCORER = {
    "compare_csv": "table",
    "compare_sqlite": "database",
    "compare_text": "text",
    "compare_ml": "ml",
    "compare_competition_ml": "ml",
    "compare_image": "chart",
}
# options the loader itself fills in from the eval config; an official `options` entry may not set them
_FILLED_BY_LOADER = frozenset(
    {"file", "gold", "expected", "metric", "lower_bound", "upper_bound", "evaluator"}
)
# DA-Code's task names -> (category, sub-category) of the paper's taxonomy
_TAXONOMY = {
    "data cleaning": ("DW", "data cleaning"),
    "data loading": ("DW", "data loading"),
    "data transformation": ("DW", "data transformation"),
    "data wrangling": ("DW", "data wrangling"),
    "data manipulation": ("EDA", "data manipulation"),
    "data insight": ("EDA", "data insights"),
    "data insights": ("EDA", "data insights"),
    "data visualization": ("EDA", "visualization"),
    "statistical analysis": ("EDA", "statistical analysis"),
    "machine learning": ("ML", "machine learning"),
    "classification": ("ML", "classification"),
    "regression": ("ML", "regression"),
    "clustering": ("ML", "clustering"),
    "competition": ("ML", "competition"),
}


def load_dacode(
    tasks_file: Path, eval_file: Path, *, source_dir: Path, gold_dir: Path, suite: str
) -> list[Task]:
    task_rows = {}
    for line, row in iter_jsonl(tasks_file):
        if "id" not in row or "instruction" not in row:
            raise located(tasks_file, "each task needs 'id' and 'instruction'", line)
        task_rows[str(row["id"])] = row
    tasks = []
    for line, row in iter_jsonl(eval_file):
        task_id = str(row.get("id", ""))
        if task_id not in task_rows:
            raise located(eval_file, f"eval config for {task_id!r}, which is not in {tasks_file}", line)
        if not isinstance(row.get("func"), list | str):
            raise located(eval_file, f"task {task_id}: field 'func' must be a list of metric names", line)
        tasks.append(_to_task(task_rows[task_id], row, source_dir / task_id, gold_dir / task_id, suite))
    if not tasks:
        raise UserError(f"{eval_file}: no eval configs")
    return tasks


def known_options(scorer_name: str) -> set[str]:
    """The official option names a scorer accepts (its options model, less what the loader fills)."""
    return set(scorers.get(scorer_name).options.model_fields) - _FILLED_BY_LOADER


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _to_task(task: dict[str, Any], evaluation: dict[str, Any], source: Path, gold: Path, suite: str) -> Task:
    task_id = str(task["id"])
    config = evaluation.get("config") or {}
    funcs = _as_list(evaluation["func"])
    results = _as_list(evaluation.get("result", []))
    options = _as_list(evaluation.get("options") or [{}])
    warnings: list[str] = []
    scorers = []
    for index, func in enumerate(funcs):
        name = FUNC_TO_SCORER.get(func)
        if name is None:
            warnings.append(f"task {task_id}: metric {func!r} is not supported; it is skipped")
            continue
        given = dict(options[index] if index < len(options) and options[index] else options[0] or {})
        for unknown in sorted(set(given) - known_options(name)):
            warnings.append(f"task {task_id}: unknown option {unknown!r} for {func} (ignored)")
            given.pop(unknown)
        result = results[index] if index < len(results) else (results[0] if results else {})
        scorers.append(ScorerSpec(name=name, options=_spec_options(name, func, given, result, config)))
    category, subcategory = _TAXONOMY.get(str(config.get("task", task.get("type", ""))).lower(), (None, None))
    hardness = str(config.get("hardness") or task.get("hardness") or "").lower() or None
    conj = evaluation.get("conj", "avg")
    converted = Task(
        id=task_id,
        suite=suite,
        family=Family.workspace,
        instructions=[task["instruction"]],
        files=visible_files(source),
        gold=Gold(files=gold_files(gold)),
        answer_format=AnswerFormat(
            kind="files" if any("file" in r for r in results if isinstance(r, dict)) else "text"
        ),
        scorers=scorers,
        conjunction=Conjunction(conj) if conj in Conjunction._value2member_map_ else Conjunction.avg,
        metadata=TaskMetadata(
            category=category,
            subcategory=subcategory,
            level=hardness,
            source=SOURCE,
            source_id=task_id,
            tags=[str(task.get("type", ""))],
        ),
        warnings=warnings,
    )
    check_task_scorers(converted)  # a wrong option type is an error naming the task and field
    return converted


def _spec_options(
    name: str, func: str, given: dict[str, Any], result: dict[str, Any], config: dict[str, Any]
) -> dict[str, Any]:
    spec = dict(given)
    if "number" in result:
        numbers = result["number"]
        spec["expected"] = numbers[0] if len(numbers) == 1 else numbers
    elif "file" in result:
        files = [Path(f).name for f in _as_list(result["file"])]
        if name == "chart":  # ["result.png", "dabench/plot.json", "dabench/result.npy"]: the image first
            files = [f for f in files if f.endswith((".png", ".jpg"))] or files
        spec["file"] = files[0]
        spec["gold"] = files if name == "table" and len(files) > 1 else files[0]
    if name == "ml":
        spec.update(metric=config.get("metric", "f1"), lower_bound=config.get("lower_bound", 0.0),
                    upper_bound=config.get("upper_bound", 1.0), evaluator=func)  # fmt: skip
    return spec
