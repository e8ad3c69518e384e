"""Loader of built-in workspace suites (DA-Code family): one folder per task, see README.md."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictStr, ValidationError, field_validator

from daharness.core.errors import UserError, first_problem
from daharness.core.jsonl import read_json, read_text
from daharness.core.paths import Refused, SuiteFolder
from daharness.core.registry import check_task_scorers, suite_format
from daharness.core.suite import Suite
from daharness.core.task import (
    AnswerFormat,
    Conjunction,
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
    refused: dict[str, str] = {}
    tasks = load_workspace_suite(location, suite=manifest["name"], refused=refused)
    return Suite(
        manifest["name"], tasks, manifest.get("description", ""), {"builtin": manifest["name"]},
        unsupported=refused,
    )  # fmt: skip


def load_workspace_suite(location: Path, *, suite: str, refused: dict[str, str]) -> list[Task]:
    """The tasks of the suite folder `location`; a task whose files lead out of it (`core/paths.py`) is
    left out, its folder's name and the reason put into `refused`."""
    folder = SuiteFolder.at(location)
    tasks_dir = folder.optional_folder("tasks", what="tasks folder")
    if tasks_dir is None:
        raise UserError(f"{location}/tasks: tasks folder not found")
    tasks = []
    for name in folder.names(tasks_dir):
        try:
            tasks.append(_load_task(folder, folder.folder(name, within=tasks_dir, what="task folder"), suite))
        except Refused as exc:
            if not exc.wrong_kind:  # a plain file beside the task folders is not a task
                refused[name] = f"refused: {exc}"
    if not tasks and not refused:
        raise UserError(f"{tasks_dir}: no tasks")
    return tasks


def visible_files(suite: SuiteFolder, folder: Path | None) -> list[WorkspaceFile]:
    """Every file under `folder` (None: no folder), placed at the same relative path in the agent's
    workspace; each must be a regular file inside `suite` (Refused otherwise)."""
    if folder is None:
        return []
    return [WorkspaceFile(path=name, source=real) for name, real in suite.tree(folder, what="source file")]


def gold_files(suite: SuiteFolder, folder: Path | None) -> list[GoldFile]:
    """Every file under `folder` (None: no folder), named by its relative path, for scorers only."""
    if folder is None:
        return []
    return [GoldFile(name=name, source=real) for name, real in suite.tree(folder, what="gold file")]


def _load_task(folder: SuiteFolder, task_dir: Path, suite: str) -> Task:
    path = folder.optional_file("task.json", within=task_dir, what="task file")
    if path is None:  # a mistake in the suite, not a task to leave out
        raise UserError(f"{task_dir}/task.json: file not found")
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
    source = folder.optional_folder("source", within=task_dir, what="source folder")
    gold = folder.optional_folder("gold", within=task_dir, what="gold folder")
    reference = None
    for name, language in (("solution.py", "python"), ("solution.sh", "bash")):
        if solution := folder.optional_file(name, within=task_dir, what="reference solution"):
            reference = ReferenceSolution(language=language, code=read_text(solution))
            break
    outputs = fields.outputs
    task = Task(
        id=str(task_dir.name if fields.id is None else fields.id),
        suite=suite,
        family="workspace",
        instructions=[fields.instruction],
        files=visible_files(folder, source),
        gold=Gold(
            files=gold_files(folder, gold),
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
