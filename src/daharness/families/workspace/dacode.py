"""Loader for official DA-Code files: a task JSONL, an eval JSONL, and `source/<id>/` and `gold/<id>/`.

As a suite, `dacode:DIR` (see `dacode_suite`) takes DIR in the official repository's layout
(`configs/task/*.jsonl`, `configs/eval/*.jsonl`, `source/`, `gold/`, as in yiyihum/da-code's `da_code/`
folder; the repository root works too) or flat (`tasks.jsonl`, `eval.jsonl`, `source/`, `gold/`).

Task lines: `id`, `type`, `instruction`, `hardness`, `post_process`. Eval lines: `id`, `config` (`task`,
`type`, `hardness`, `metric`, `upper_bound`, `lower_bound`), `func` (list of official metric names),
`result` (per func: `{"file": [...]}`, `{"number": [...]}`), `options` (per func), optional `conj`.
Each official metric becomes one of our scorers; an option name the scorer does not know (a misspelling,
typically) is a warning naming the task and the option, and is ignored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from daharness.core.errors import UserError, located
from daharness.core.jsonl import iter_jsonl
from daharness.core.paths import Refused, SuiteFolder
from daharness.core.registry import check_task_scorers, scorers, suite_format
from daharness.core.suite import Suite
from daharness.core.task import (
    AnswerFormat,
    Conjunction,
    Gold,
    GoldFile,
    ScorerSpec,
    Task,
    TaskMetadata,
    WorkspaceFile,
)
from daharness.families.workspace.loader import gold_files, visible_files
from daharness.families.workspace.scorers.chart_compat import OFFICIAL_KEYS

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
    {"file", "gold", "expected", "alternatives", "metric", "lower_bound", "upper_bound", "evaluator"}
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
    "machine learning competition": ("ML", "competition"),
    "classification": ("ML", "classification"),
    "regression": ("ML", "regression"),
    "clustering": ("ML", "clustering"),
    "competition": ("ML", "competition"),
}


_ML_TYPES = {
    "binary classification": "classification",
    "multi classification": "classification",
    "regression": "regression",
    "cluster": "clustering",
}


def load_dacode(
    tasks_file: Path | Sequence[Path],
    eval_file: Path | Sequence[Path],
    *,
    source_dir: Path,
    gold_dir: Path,
    suite: str,
    refused: dict[str, str] | None = None,
) -> list[Task]:
    """Tasks from task and eval JSONL files (several files: their union, the first line of an id wins).

    A config whose options no scorer can take (a type the official metric would not accept either), or
    whose `source/<id>/` or `gold/<id>/` leads out of its folder (`core/paths.py`: a link out, an id
    that climbs out, a FIFO), is refused alone: its id and the reason go into `refused` and the other
    tasks load. Without `refused` such a config is an error naming the file and line."""
    task_files = [tasks_file] if isinstance(tasks_file, Path) else list(tasks_file)
    eval_files = [eval_file] if isinstance(eval_file, Path) else list(eval_file)
    task_rows: dict[str, dict[str, Any]] = {}
    for path in task_files:
        for line, row in iter_jsonl(path):
            if "id" not in row or "instruction" not in row:
                raise located(path, "each task needs 'id' and 'instruction'", line)
            if not isinstance(row["instruction"], str):
                raise located(path, f"task {row['id']}: field 'instruction' must be a string", line)
            task_rows.setdefault(str(row["id"]), row)
    tasks: dict[str, Task] = {}
    folders = _TaskFolders(source_dir, gold_dir)
    for path in eval_files:
        for line, row in iter_jsonl(path):
            task_id = str(row.get("id", ""))
            if task_id in tasks:
                continue
            if task_id not in task_rows:
                where = ", ".join(str(f) for f in task_files)
                raise located(path, f"eval config for {task_id!r}, which is not in {where}", line)
            if problem := _eval_row_problem(row):
                raise located(path, f"task {task_id}: {problem}", line)
            try:
                tasks[task_id] = _to_task(task_rows[task_id], row, folders, suite)
            except UserError as exc:
                if refused is None:
                    raise located(path, str(exc), line) from exc
                why = f"refused: {exc}" if isinstance(exc, Refused) else str(exc)
                refused[task_id] = f"{path.name} line {line}: {why}"
    if not tasks and not refused:
        raise UserError(f"{', '.join(str(f) for f in eval_files)}: no eval configs")
    return list(tasks.values())


class _TaskFolders:
    """`source/<id>/` and `gold/<id>/`: each held inside its own folder (a missing one holds nothing)."""

    def __init__(self, source_dir: Path, gold_dir: Path) -> None:
        self.source = SuiteFolder.at(source_dir) if source_dir.is_dir() else None
        self.gold = SuiteFolder.at(gold_dir) if gold_dir.is_dir() else None

    def visible(self, task_id: str) -> list[WorkspaceFile]:
        if self.source is None:
            return []
        return visible_files(self.source, self.source.optional_folder(task_id, what="source folder"))

    def hidden(self, task_id: str) -> list[GoldFile]:
        if self.gold is None:
            return []
        return gold_files(self.gold, self.gold.optional_folder(task_id, what="gold folder"))


def _eval_row_problem(row: dict[str, Any]) -> str | None:
    """What is wrong with the shape of an eval line (None when nothing): what `_to_task` relies on."""
    funcs = _as_list(row.get("func"))
    if not funcs or not all(isinstance(func, str) for func in funcs):
        return "field 'func' must be a list of metric names"
    if not isinstance(row.get("config") or {}, dict):
        return "field 'config' must be an object"
    if not all(isinstance(item or {}, dict) for item in _as_list(row.get("options") or [{}])):
        return "field 'options' must be a list of objects (one per metric)"
    for item in _as_list(row.get("result", [])):
        if not isinstance(item, dict):
            return "field 'result' must be a list of objects (one per metric)"
        if "number" in item and (not isinstance(item["number"], list) or not item["number"]):
            return "field 'result': 'number' must be a non-empty list"
        if "file" in item and (not isinstance(item["file"], list | str) or not item["file"]):
            return "field 'result': 'file' must be a file name or a non-empty list of them"
    if not isinstance(row.get("conj", "avg"), str):
        return "field 'conj' must be a string"
    return None


@suite_format("dacode", prefix="dacode:")
def dacode_suite(location: Path, options: Mapping[str, Any]) -> Suite:
    """Official DA-Code tasks: `dacode:DIR` with `configs/task/*.jsonl` and `configs/eval/*.jsonl` (the
    repository's `da_code/` folder, or the repository itself), or flat `tasks.jsonl` and `eval.jsonl`;
    `source/` and `gold/` beside them."""
    if not location.is_dir():
        raise UserError(f"{location}: not a folder of DA-Code tasks")
    suite = SuiteFolder.at(location)  # every file below is held inside it (`core/paths.py`)
    root = suite.folder("da_code") if suite.optional_folder("da_code/configs") else suite.root
    task_files, eval_files = _config_files(suite, root)
    data = {}
    for folder in ("source", "gold"):
        data[folder] = suite.optional_folder(folder, within=root, what="folder")
        if data[folder] is None:
            raise UserError(f"{root}: no {folder}/ folder beside the configs")
    name = f"dacode:{suite.root.name}"
    refused: dict[str, str] = {}
    tasks = load_dacode(
        task_files,
        eval_files,
        source_dir=data["source"],
        gold_dir=data["gold"],
        suite=name,
        refused=refused,
    )
    sources = {"tasks": ", ".join(map(str, task_files)), "eval": ", ".join(map(str, eval_files))}
    return Suite(name=name, tasks=tasks, sources={**sources, "root": str(root)}, unsupported=refused)


def _config_files(suite: SuiteFolder, root: Path) -> tuple[list[Path], list[Path]]:
    """(task files, eval files): flat files, else the official configs folder. There, `all.jsonl` /
    `eval_all.jsonl` (what the official evaluate.py reads) alone when present, else every JSONL file."""
    flat = [suite.optional_file(name, within=root) for name in ("tasks.jsonl", "eval.jsonl")]
    if flat[0] and flat[1]:
        return [flat[0]], [flat[1]]
    task_dir = suite.optional_folder("configs/task", within=root)
    eval_dir = suite.optional_folder("configs/eval", within=root)
    if task_dir is None or eval_dir is None:
        raise UserError(
            f"{root}: expected tasks.jsonl and eval.jsonl, or configs/task/*.jsonl and configs/eval/*.jsonl"
        )

    def pick(folder: Path, preferred: str) -> list[Path]:
        if chosen := suite.optional_file(preferred, within=folder):
            return [chosen]
        files = suite.entries(folder, "*.jsonl")
        if not files:
            raise UserError(f"{folder}: no .jsonl files")
        return files

    return pick(task_dir, "all.jsonl"), pick(eval_dir, "eval_all.jsonl")


def known_options(scorer_name: str) -> set[str]:
    """The official option names a scorer accepts (its options model, less what the loader fills)."""
    return set(scorers.get(scorer_name).options.model_fields) - _FILLED_BY_LOADER


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _to_task(task: dict[str, Any], evaluation: dict[str, Any], folders: _TaskFolders, suite: str) -> Task:
    task_id = str(task["id"])
    config = evaluation.get("config") or {}
    funcs, results, options = _aligned(evaluation)
    warnings: list[str] = []
    scorers = []
    for index, func in enumerate(funcs):
        name = FUNC_TO_SCORER.get(func)
        if name is None:
            warnings.append(f"task {task_id}: metric {func!r} is not supported; it is skipped")
            continue
        given = dict(options[index] or {})
        for unknown in sorted(set(given) - known_options(name)):
            warnings.append(f"task {task_id}: unknown option {unknown!r} for {func} (ignored)")
            given.pop(unknown)
        if name == "chart":
            for key in [k for k in given.get("keys") or [] if str(k).lower() not in OFFICIAL_KEYS]:
                warnings.append(
                    f"task {task_id}: unknown chart key {key!r} (compat scores 0, as the official "
                    "evaluator fails; corrected ignores it)"
                )
        result = results[index]
        scorers.append(ScorerSpec(name=name, options=_spec_options(name, func, given, result, config)))
    category, subcategory = _TAXONOMY.get(str(config.get("task", task.get("type", ""))).lower(), (None, None))
    if subcategory == "machine learning":  # the config's type says which kind
        subcategory = _ML_TYPES.get(str(config.get("type", "")).lower(), subcategory)
    hardness = str(config.get("hardness") or task.get("hardness") or "").lower() or None
    conj = evaluation.get("conj", "avg")
    converted = Task(
        id=task_id,
        suite=suite,
        family="workspace",
        instructions=[task["instruction"]],
        files=folders.visible(task_id),
        gold=Gold(files=folders.hidden(task_id)),
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


def _aligned(evaluation: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]], list[dict[str, Any]]]:
    """(metric, result, options) per metric call, as the official evaluate.py lines them up: a single metric
    runs once per result entry (e.g. one compare_csv over two files, scores averaged), a single options
    entry serves every call, and longer lists are cut to the shortest."""
    funcs = _as_list(evaluation["func"])
    results = _as_list(evaluation.get("result") or [{}])
    options = [item or {} for item in _as_list(evaluation.get("options") or [{}])]
    if any("number" in item for item in results):  # a text answer: one expected value, whatever follows
        results = results[:1]
    calls = max(len(funcs), len(results))
    funcs, results, options = (
        [*items] * calls if len(items) == 1 else items for items in (funcs, results, options)
    )
    calls = min(len(funcs), len(results), len(options))
    return funcs[:calls], results[:calls], options[:calls]


def _spec_options(
    name: str, func: str, given: dict[str, Any], result: dict[str, Any], config: dict[str, Any]
) -> dict[str, Any]:
    spec = dict(given)
    if "number" in result:
        numbers = result["number"]
        spec["expected"] = numbers[0] if len(numbers) == 1 else numbers
        if len(numbers) > 1:  # several acceptable answers: the official evaluator keeps the best score
            spec["alternatives"] = True
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
