"""A suite: named tasks loaded from a built-in folder or official files."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from daharness.core.task import Task


@dataclass
class Suite:
    name: str
    tasks: list[Task]
    description: str = ""
    sources: dict[str, str] = field(default_factory=dict)
    unsupported: dict[str, str] = field(default_factory=dict)  # task id -> why it cannot run here
    spec: str = ""  # how it was named when loaded (a built-in name or PREFIX:PATH)
    options: dict[str, Any] = field(default_factory=dict)  # the format options it was loaded with
    version: int | None = None  # suite.json's `version`: raised whenever the suite's data or scoring changes

    def reload_spec(self) -> dict[str, Any]:
        """How to load the suite again (kept in run.json): paths as strings, other options as they are."""
        options = {k: str(v) if isinstance(v, PurePath) else v for k, v in self.options.items()}
        return {"spec": self.spec, "options": options}

    def warnings(self) -> list[str]:
        return [warning for task in self.tasks for warning in task.warnings]

    def describe(self) -> dict[str, Any]:
        described: dict[str, Any] = {"name": self.name, "tasks": len(self.tasks), "sources": self.sources}
        if self.version is not None:
            described["version"] = self.version
        return described
