"""Suites: the built-in ones shipped in this folder, and suites named by path to official files.

A suite is named on the command line as either

* a built-in name, e.g. ``closed-form`` (see ``daharness suites list``), or
* ``dabench:QUESTIONS.jsonl`` for official InfiAgent-DABench files; the labels file defaults to the
  questions file's name with ``questions`` replaced by ``labels``, the tables folder to ``da-dev-tables``
  or ``tables`` beside it; ``--labels`` and ``--tables`` override both. A ``solutions/`` folder beside
  it, holding ``<id>.py`` files, gives the tasks reference solutions.

Built-in suites are data, not code: a folder with a ``suite.json`` describing its files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from daharness.errors import UserError
from daharness.tasks.dabench import load_dabench
from daharness.tasks.model import Task
from daharness.tasks.workspace_suite import load_workspace_suite

BUILTIN_ROOT = Path(__file__).resolve().parent
DABENCH_PREFIX = "dabench:"


@dataclass
class Suite:
    name: str
    tasks: list[Task]
    description: str = ""
    sources: dict[str, str] = field(default_factory=dict)

    def warnings(self) -> list[str]:
        return [warning for task in self.tasks for warning in task.warnings]

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "tasks": len(self.tasks), "sources": self.sources}


def builtin_suites() -> dict[str, Path]:
    """Built-in suite name -> its folder."""
    found = {}
    for manifest in sorted(BUILTIN_ROOT.glob("*/suite.json")):
        found[json.loads(manifest.read_text())["name"]] = manifest.parent
    return found


def load_suite(spec: str, *, labels: Path | None = None, tables: Path | None = None) -> Suite:
    if spec.startswith(DABENCH_PREFIX):
        return _load_dabench_by_path(Path(spec.removeprefix(DABENCH_PREFIX)), labels, tables)
    folder = builtin_suites().get(spec)
    if folder is None:
        known = ", ".join(builtin_suites()) or "none"
        raise UserError(
            f"unknown suite {spec!r}: built-in suites are {known}; official files are named as "
            f"{DABENCH_PREFIX}QUESTIONS.jsonl"
        )
    return _load_builtin(folder)


def _load_builtin(folder: Path) -> Suite:
    manifest = json.loads((folder / "suite.json").read_text())
    if manifest.get("format") == "workspace":
        tasks = load_workspace_suite(folder, suite=manifest["name"])
        return Suite(manifest["name"], tasks, manifest.get("description", ""), {"builtin": manifest["name"]})
    if manifest.get("format") != "dabench":
        raise UserError(f"{folder / 'suite.json'}: field 'format': unsupported {manifest.get('format')!r}")
    tasks = load_dabench(
        folder / manifest["questions"],
        folder / manifest["labels"],
        folder / manifest["tables"],
        suite=manifest["name"],
        solutions=folder / manifest["solutions"] if manifest.get("solutions") else None,
    )
    return Suite(
        name=manifest["name"],
        tasks=tasks,
        description=manifest.get("description", ""),
        sources={"builtin": manifest["name"]},
    )


def _load_dabench_by_path(questions: Path, labels: Path | None, tables: Path | None) -> Suite:
    if not questions.is_file():
        raise UserError(f"{questions}: questions file not found")
    if labels is None:
        guess = questions.with_name(questions.name.replace("questions", "labels"))
        if guess == questions or not guess.is_file():
            raise UserError(f"{questions}: no labels file beside it; name one with --labels")
        labels = guess
    if tables is None:
        candidates = [questions.parent / "da-dev-tables", questions.parent / "tables"]
        tables = next((c for c in candidates if c.is_dir()), None)
        if tables is None:
            raise UserError(
                f"{questions}: no tables folder (da-dev-tables/ or tables/) beside it; use --tables"
            )
    name = f"{DABENCH_PREFIX}{questions.stem}"
    solutions = questions.parent / "solutions"  # optional reference solutions, <id>.py
    tasks = load_dabench(
        questions, labels, tables, suite=name, solutions=solutions if solutions.is_dir() else None
    )
    sources = {
        "questions": str(questions.resolve()),
        "labels": str(labels.resolve()),
        "tables": str(tables.resolve()),
    }
    return Suite(name=name, tasks=tasks, sources=sources)
