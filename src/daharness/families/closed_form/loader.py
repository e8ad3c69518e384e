"""Loader for the official InfiAgent-DABench files: questions JSONL, labels JSONL and a folder of CSVs.

Real label files carry defects (a value that is just ``[``, duplicate names in one question, values with
literal quotes, empty answer lists, absolute paths). They do not stop loading: each defect becomes a
warning on the task, naming the id, and ``daharness suites check`` lists them. Structural problems that
make a line meaningless (bad JSON, a missing field, an unknown table, labels for an unknown question)
are errors naming the file and line. A table or solution that leads out of its folder (`core/paths.py`)
refuses its question, listed in `Suite.unsupported` with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from daharness.core.errors import UserError, located
from daharness.core.jsonl import iter_jsonl, read_text
from daharness.core.paths import Refused, SuiteFolder
from daharness.core.registry import suite_format
from daharness.core.suite import Suite
from daharness.core.task import (
    AnswerFormat,
    Gold,
    ReferenceSolution,
    ScorerSpec,
    Task,
    TaskMetadata,
    WorkspaceFile,
)
from daharness.suites.manifest import read_manifest

SOURCE = "InfiAgent-DABench"
_FORMAT_NAME = re.compile(r"@(\w+)\[")
_REQUIRED_QUESTION_FIELDS = {"id": (int, str), "question": str, "format": str, "file_name": str}
_ABSOLUTE_PATH = re.compile(r"(^|[\s'\"(\[])(/[\w.-]+/|[A-Za-z]:\\)")


def load_dabench(
    questions: Path,
    labels: Path | None,
    tables: Path | None,
    *,
    suite: str,
    solutions: Path | None = None,
    refused: dict[str, str] | None = None,
) -> list[Task]:
    """Read official DABench files into Tasks (in question-file order).

    `tables` may be None when only scoring: tasks then carry no workspace files. A question whose table
    or solution is refused (a link out of its folder, a FIFO...) goes into `refused` with the reason;
    without `refused` it is an error naming the line.
    """
    if tables is not None and not tables.is_dir():
        raise UserError(f"{tables}: tables folder not found")
    table_folder = SuiteFolder.at(tables) if tables is not None else None
    solution_folder = SuiteFolder.at(solutions) if solutions is not None else None
    label_rows = _read_labels(labels) if labels is not None else None
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for line, row in iter_jsonl(questions):
        _check_question(questions, line, row)
        task_id = str(row["id"])
        if task_id in seen:
            raise located(
                questions, f"duplicate question id {row['id']!r} (first on line {seen[task_id]})", line
            )
        seen[task_id] = line
        try:
            table = table_folder.file(row["file_name"], what="table") if table_folder else None
            solution = (
                solution_folder.optional_file(f"{task_id}.py", what="reference solution")
                if solution_folder
                else None
            )
        except Refused as exc:
            if exc.missing:
                raise located(
                    questions, f"question {task_id}: table {row['file_name']!r} not found in {tables}", line
                ) from None
            if refused is None:
                raise located(questions, f"question {task_id}: {exc}", line) from None
            refused[task_id] = f"refused: {exc}"
            continue
        answers, warnings = ([], [])
        if label_rows is not None:
            if task_id not in label_rows:
                raise located(questions, f"question {task_id} has no labels in {labels}", line)
            answers, warnings = _clean_answers(task_id, label_rows[task_id][1], row["format"])
        tasks.append(_to_task(row, table, answers, warnings, suite, solution))
    if label_rows is not None:
        for task_id, (label_line, _) in label_rows.items():
            if task_id not in seen:
                raise located(
                    labels, f"labels for id {task_id} but no such question in {questions}", label_line
                )
    if not tasks and not refused:
        raise UserError(f"{questions}: no questions")
    return tasks


def _check_question(path: Path, line: int, row: dict[str, Any]) -> None:
    for field, kind in _REQUIRED_QUESTION_FIELDS.items():
        if field not in row:
            raise located(path, f"missing field {field!r}", line)
        if not isinstance(row[field], kind):
            raise located(path, f"field {field!r} has the wrong type ({type(row[field]).__name__})", line)
    concepts = row.get("concepts", [])
    if not isinstance(concepts, list) or not all(isinstance(c, str) for c in concepts):
        raise located(path, "field 'concepts' must be a list of strings", line)


def _read_labels(path: Path) -> dict[str, tuple[int, Any]]:
    rows: dict[str, tuple[int, Any]] = {}
    for line, row in iter_jsonl(path):
        if "id" not in row:
            raise located(path, "missing field 'id'", line)
        if not isinstance(row.get("common_answers"), list):
            raise located(path, "field 'common_answers' must be a list of [name, value] pairs", line)
        task_id = str(row["id"])
        if task_id in rows:
            raise located(
                path, f"duplicate labels for id {row['id']!r} (first on line {rows[task_id][0]})", line
            )
        rows[task_id] = (line, row["common_answers"])
    return rows


def _clean_answers(task_id: str, raw: list[Any], format_text: str) -> tuple[list[tuple[str, str]], list[str]]:
    """Turn raw label pairs into (name, value) strings and describe every defect found."""
    answers: list[tuple[str, str]] = []
    warnings: list[str] = []
    if not raw:
        warnings.append(f"task {task_id}: empty answer list (no labels to score against)")
    names_in_format = set(_FORMAT_NAME.findall(format_text))
    for entry in raw:
        if not (isinstance(entry, list | tuple) and len(entry) == 2):
            warnings.append(f"task {task_id}: malformed label entry {entry!r} skipped")
            continue
        name, value = str(entry[0]), str(entry[1])
        if any(name == seen for seen, _ in answers):
            warnings.append(f"task {task_id}: duplicate answer name {name!r} (the last value wins)")
        if _unbalanced(value):
            warnings.append(f"task {task_id}: label {name!r} has unbalanced brackets: {value!r}")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            warnings.append(f"task {task_id}: label {name!r} has literal quotes: {value!r}")
        if _ABSOLUTE_PATH.search(value):
            warnings.append(f"task {task_id}: label {name!r} holds an absolute path: {value!r}")
        if names_in_format and name not in names_in_format:
            warnings.append(f"task {task_id}: label {name!r} is not named in the format requirement")
        answers.append((name, value))
    return answers, warnings


def _unbalanced(value: str) -> bool:
    depth = 0
    for char in value:
        depth += {"[": 1, "]": -1}.get(char, 0)
        if depth < 0:
            return True
    return depth != 0


def _to_task(
    row: dict[str, Any],
    table: Path | None,
    answers: list[tuple[str, str]],
    warnings: list[str],
    suite: str,
    solution: Path | None,
) -> Task:
    """`table` and `solution` (None: none) are checked paths (`core/paths.py`)."""
    reference = ReferenceSolution(language="python", code=read_text(solution)) if solution else None
    concepts = row.get("concepts", [])
    return Task(
        id=str(row["id"]),
        suite=suite,
        family="closed-form",
        instructions=[row["question"]],
        constraints=str(row.get("constraints") or ""),
        files=[WorkspaceFile(path=row["file_name"], source=table)] if table else [],
        gold=Gold(answers=answers),
        answer_format=AnswerFormat(
            kind="at_name", text=row["format"], names=list(dict.fromkeys(_FORMAT_NAME.findall(row["format"])))
        ),
        scorers=[ScorerSpec(name="closed_form")],
        metadata=TaskMetadata(
            concepts=list(concepts),
            level=row.get("level"),
            source=SOURCE,
            source_id=row["id"],
        ),
        reference=reference,
        warnings=warnings,
    )


@suite_format("dabench", prefix="dabench:")
def dabench_suite(location: Path, options: Mapping[str, Any]) -> Suite:
    """Official InfiAgent-DABench files: `dabench:QUESTIONS.jsonl` (labels and tables beside it, or
    `--labels` / `--tables`), or a built-in folder whose suite.json names its files."""
    if location.is_dir():
        folder = SuiteFolder.at(location)
        if folder.optional_file("suite.json", what="manifest") is None:
            raise UserError(
                f"{location}: a folder without suite.json; name the questions file (dabench:FILE)"
            )
        manifest = read_manifest(location)
        if given := [f"--{name}" for name in ("labels", "tables") if options.get(name)]:
            raise UserError(
                f"{' and '.join(given)}: the suite {manifest.get('name', location)} names its own files in its "
                "suite.json; they apply to dabench:QUESTIONS.jsonl"
            )
        for key in ("questions", "labels", "tables", *(["solutions"] if "solutions" in manifest else [])):
            if not isinstance(manifest.get(key), str):
                raise UserError(f"{location}/suite.json: field {key!r} must name a file or folder")
        refused: dict[str, str] = {}
        tasks = load_dabench(
            folder.file(manifest["questions"], what="questions file"),
            folder.file(manifest["labels"], what="labels file"),
            folder.folder(manifest["tables"], what="tables folder"),
            suite=manifest["name"],
            solutions=folder.folder(manifest["solutions"], what="solutions folder")
            if manifest.get("solutions")
            else None,
            refused=refused,
        )
        return Suite(
            manifest["name"], tasks, manifest.get("description", ""), {"builtin": manifest["name"]},
            unsupported=refused,
        )  # fmt: skip
    labels, tables = options.get("labels"), options.get("tables")
    return _load_by_path(location, Path(labels) if labels else None, Path(tables) if tables else None)


def _load_by_path(questions: Path, labels: Path | None, tables: Path | None) -> Suite:
    if not questions.is_file():
        raise UserError(f"{questions}: questions file not found")
    beside = SuiteFolder.at(questions.parent)  # what is found beside the questions stays inside it
    if labels is None:
        guess = questions.name.replace("questions", "labels")
        found = beside.optional_file(guess, what="labels file") if guess != questions.name else None
        if found is None:
            raise UserError(f"{questions}: no labels file beside it; name one with --labels")
        labels = found
    if tables is None:
        tables = next(
            (found for name in ("da-dev-tables", "tables") if (found := beside.optional_folder(name))), None
        )
        if tables is None:
            raise UserError(
                f"{questions}: no tables folder (da-dev-tables/ or tables/) beside it; use --tables"
            )
    name = f"dabench:{questions.stem}"
    solutions = beside.optional_folder("solutions", what="solutions folder")  # optional, <id>.py
    refused: dict[str, str] = {}
    tasks = load_dabench(questions, labels, tables, suite=name, solutions=solutions, refused=refused)
    sources = {
        "questions": str(questions.resolve()),
        "labels": str(labels.resolve()),
        "tables": str(tables.resolve()),
    }
    return Suite(name=name, tasks=tasks, sources=sources, unsupported=refused)
