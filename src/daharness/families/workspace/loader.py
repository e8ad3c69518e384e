"""Loader of built-in workspace suites (DA-Code family): one folder per task, see README.md."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictStr, ValidationError, field_validator

from daharness.core.errors import UserError, first_problem
from daharness.core.jsonl import read_json, read_text
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
from daharness.suites.manifest import read_manifest


class _ScorerEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)  # built when a workspace suite loads

    name: StrictStr
    options: dict[str, Any] | None = None


class TaskFile(BaseModel):
    """A task's `task.json` (README.md, "Writing a workspace suite"): its JSON types, checked when the suite loads;
    fields it does not know are kept out and named in a warning."""

    model_config = ConfigDict(extra="ignore", defer_build=True)  # built when a workspace suite loads

    id: StrictStr | None = None  # a number is read as its text
    instruction: StrictStr
    scorers: list[_ScorerEntry]
    conjunction: Conjunction = Conjunction.avg
    outputs: list[StrictStr] = Field(default_factory=list)
    tags: list[StrictStr] = Field(default_factory=list)
    category: StrictStr | None = None
    subcategory: StrictStr | None = None
    level: StrictStr | None = None
    source: StrictStr | None = None
    answer: StrictStr | None = None
    threshold: StrictFloat | None = None  # an int is accepted, a boolean is not

    @field_validator("id", mode="before")
    @classmethod
    def _number_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


@suite_format("workspace", prefix="workspace:")
def workspace_suite(location: Path, options: Mapping[str, Any]) -> Suite:
    """A folder of DA-Code style tasks, one sub-folder each (README.md, "Writing a workspace suite")."""
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


def _load_task(task_dir: Path, suite: str) -> Task:
    path = task_dir / "task.json"
    raw = read_json(path)
    if not isinstance(raw, dict):
        raise UserError(f"{path}: expected a JSON object")
    try:
        fields = TaskFile.model_validate(raw)
    except ValidationError as exc:
        raise UserError(f"{path}: {first_problem(exc)}") from None
    warnings = [
        f"task {task_dir.name}: unknown field {name!r} ignored"
        for name in raw
        if name not in TaskFile.model_fields
    ]
    scorers = [ScorerSpec(name=entry.name, options=entry.options or {}) for entry in fields.scorers]
    source, gold = task_dir / "source", task_dir / "gold"
    reference = None
    if (task_dir / "solution.py").is_file():
        reference = ReferenceSolution(language="python", code=read_text(task_dir / "solution.py"))
    elif (task_dir / "solution.sh").is_file():
        reference = ReferenceSolution(language="bash", code=read_text(task_dir / "solution.sh"))
    outputs = fields.outputs
    task = Task(
        id=str(task_dir.name if fields.id is None else fields.id),
        suite=suite,
        family=Family.workspace,
        instructions=[fields.instruction],
        files=visible_files(source),
        gold=Gold(
            files=gold_files(gold),
            data={"outputs": outputs, "threshold": fields.threshold},
        ),
        answer_format=AnswerFormat(kind="files" if outputs else "text", text=fields.answer or ""),
        scorers=scorers,
        conjunction=fields.conjunction,
        metadata=TaskMetadata(
            category=fields.category,
            subcategory=fields.subcategory,
            level=fields.level,
            tags=fields.tags,
            source=fields.source,
            source_id=task_dir.name if fields.id is None else fields.id,
        ),
        reference=reference,
        warnings=warnings,
    )
    try:
        check_task_scorers(task)
    except UserError as exc:
        raise UserError(f"{path}: {exc}") from None
    return task
