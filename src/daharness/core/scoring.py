"""The scorer contract: what a registered scorer receives, and how its options and modes are declared.

A scorer is a function `(ScoringContext, Options) -> Score` registered with `@scorer(name,
options=Options, modes=GROUP)`. Its options are a pydantic model, checked when a task is loaded; its
mode (e.g. `strict` / `normalized`) comes from the run-level setting for its mode group.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from daharness.core.backend import Snapshot
from daharness.core.submission import Submission
from daharness.core.task import Task


class ScorerOptions(BaseModel):
    """Base of every scorer's options: unknown keys are an error naming the key."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class NoOptions(ScorerOptions):
    pass


@dataclass(frozen=True)
class ModeGroup:
    """Scorers that share one run-level mode switch (e.g. all DA-Code scorers: corrected / compat)."""

    name: str
    choices: tuple[str, ...]
    default: str
    help: str = ""

    def __post_init__(self) -> None:
        if self.default not in self.choices:
            raise ValueError(f"mode group {self.name}: default {self.default!r} is not a choice")


class GoldMissing(FileNotFoundError):
    """A task names a gold file that its suite does not have (the benchmark's fault, not the agent's)."""


@dataclass(frozen=True)
class ScoringContext:
    """Everything one scorer may look at: the task, the agent's answers, its submitted files, the mode."""

    task: Task
    submission: Submission
    files: Snapshot | None
    mode: str

    def output(self, name: str | None) -> Path | None:
        """A submitted file by its workspace path; None when absent (or no files were submitted)."""
        if not name or self.files is None:
            return None
        return self.files.path(name)

    def gold(self, name: str) -> Path:
        """A gold file by name (its path under the task's gold folder, or its base name)."""
        for gold in self.task.gold.files:
            if gold.name == name or Path(gold.name).name == name:
                return gold.source
        raise GoldMissing(f"task {self.task.id}: no gold file {name!r}")
