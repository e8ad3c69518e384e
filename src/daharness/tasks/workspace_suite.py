"""Loader of built-in workspace suites (DA-Code family): one folder per task, see docs/workspace-suites.md."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from daharness.core.errors import UserError
from daharness.core.registry import check_task_scorers, suite_format
from daharness.core.suite import Suite
from daharness.core.task import (
    AnswerFormat,
    Conjunction,
    Family,
    Gold,
    GoldFile,
    ReferenceSolution,
    ScorerSpec,
    Task,
    TaskMetadata,
    WorkspaceFile,
)
from daharness.jsonl import read_json, read_text
from daharness.tasks.manifest import read_manifest

_KNOWN_FIELDS = {
    "id", "instruction", "category", "subcategory", "level", "outputs", "scorers", "conjunction",
    "answer", "threshold", "source", "tags",
}  # fmt: skip


@suite_format("workspace", prefix="workspace:")
def workspace_suite(location: Path, options: Mapping[str, Any]) -> Suite:
    """A folder of DA-Code style tasks, one sub-folder each (docs/workspace-suites.md)."""
    if not location.is_dir():
        raise UserError(f"{location}: not a folder of workspace tasks")
    manifest = read_manifest(location)
    tasks = load_workspace_suite(location, suite=manifest["name"])
    return Suite(manifest["name"], tasks, manifest.get("description", ""), {"builtin": manifest["name"]})


def load_workspace_suite(folder: Path, *, suite: str) -> list[Task]:
    tasks_dir = folder / "tasks"
    if not tasks_dir.is_dir():
        raise UserError(f"{tasks_dir}: tasks folder not found")
    tasks = [_load_task(task_dir, suite) for task_dir in sorted(tasks_dir.iterdir()) if task_dir.is_dir()]
    if not tasks:
        raise UserError(f"{tasks_dir}: no tasks")
    return tasks


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []


def visible_files(folder: Path) -> list[WorkspaceFile]:
    """Every file under `folder`, placed at the same relative path in the agent's workspace."""
    return [WorkspaceFile(path=p.relative_to(folder).as_posix(), source=p.resolve()) for p in _files(folder)]


def gold_files(folder: Path) -> list[GoldFile]:
    """Every file under `folder`, named by its relative path, for scorers only."""
    return [GoldFile(name=p.relative_to(folder).as_posix(), source=p.resolve()) for p in _files(folder)]


def _field_problem(raw: dict[str, Any]) -> str | None:
    """What is wrong with the JSON types of a task.json's fields (None when nothing)."""
    if not isinstance(raw["instruction"], str):
        return "field 'instruction' must be a string"
    for name in ("category", "subcategory", "level", "source", "answer"):
        if raw.get(name) is not None and not isinstance(raw[name], str):
            return f"field {name!r} must be a string"
    for name in ("outputs", "tags", "scorers"):
        value = raw.get(name, [])
        if not isinstance(value, list) or (name != "scorers" and not all(isinstance(v, str) for v in value)):
            return f"field {name!r} must be a list" + ("" if name == "scorers" else " of strings")
    threshold = raw.get("threshold")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, int | float)):
        return "field 'threshold' must be a number (or null)"
    return None


def _load_task(task_dir: Path, suite: str) -> Task:
    path = task_dir / "task.json"
    raw = read_json(path)
    if not isinstance(raw, dict):
        raise UserError(f"{path}: expected a JSON object")
    for field in ("instruction", "scorers"):
        if field not in raw:
            raise UserError(f"{path}: missing field {field!r}")
    if problem := _field_problem(raw):
        raise UserError(f"{path}: {problem}")
    warnings = [
        f"task {task_dir.name}: unknown field {name!r} ignored" for name in raw if name not in _KNOWN_FIELDS
    ]
    scorers = []
    for index, spec in enumerate(raw["scorers"]):
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            raise UserError(f"{path}: scorers[{index}]: an object with a scorer 'name' is expected")
        if not isinstance(spec.get("options") or {}, dict):
            raise UserError(f"{path}: scorers[{index}]: 'options' must be an object")
        scorers.append(ScorerSpec(name=spec["name"], options=dict(spec.get("options") or {})))
    try:
        conjunction = Conjunction(raw.get("conjunction", "avg"))
    except ValueError:
        raise UserError(f"{path}: field 'conjunction' must be one of avg, and, or, max, min") from None
    source, gold = task_dir / "source", task_dir / "gold"
    reference = None
    if (task_dir / "solution.py").is_file():
        reference = ReferenceSolution(language="python", code=read_text(task_dir / "solution.py"))
    elif (task_dir / "solution.sh").is_file():
        reference = ReferenceSolution(language="bash", code=read_text(task_dir / "solution.sh"))
    outputs = list(raw.get("outputs", []))
    task = Task(
        id=str(raw.get("id", task_dir.name)),
        suite=suite,
        family=Family.workspace,
        instructions=[raw["instruction"]],
        files=visible_files(source),
        gold=Gold(
            files=gold_files(gold),
            data={"outputs": outputs, "threshold": raw.get("threshold")},
        ),
        answer_format=AnswerFormat(kind="files" if outputs else "text", text=str(raw.get("answer", ""))),
        scorers=scorers,
        conjunction=conjunction,
        metadata=TaskMetadata(
            category=raw.get("category"),
            subcategory=raw.get("subcategory"),
            level=raw.get("level"),
            tags=list(raw.get("tags", [])),
            source=raw.get("source"),
            source_id=raw.get("id", task_dir.name),
        ),
        reference=reference,
        warnings=warnings,
    )
    try:
        check_task_scorers(task)
    except UserError as exc:
        raise UserError(f"{path}: {exc}") from None
    return task
