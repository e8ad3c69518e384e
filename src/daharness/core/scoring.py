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
from daharness.core.errors import InfrastructureError
from daharness.core.submission import Submission
from daharness.core.task import Task


class ScorerOptions(BaseModel):
    """Base of every scorer's options: unknown keys are an error naming the key."""

    # built when a suite names the scorer: registering the families defines dozens that a run never uses
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class NoOptions(ScorerOptions):
    pass


@dataclass(frozen=True)
class ModeGroup:
    """Scorers that share one run-level mode switch (e.g. all DA-Code scorers: corrected / compat)."""

    name: str
    choices: tuple[str, ...]
    default: str
    help: str = ""
    # names the group had before: run.json files that use them are read under `name`
    former_names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.default not in self.choices:
            raise ValueError(f"mode group {self.name}: default {self.default!r} is not a choice")


class GoldProblem(Exception):
    """The gold side cannot be scored against (a gold file missing or unreadable, a reference that left
    no result): the benchmark's fault, never the agent's. The one exception a scorer raises that makes
    the sample an infrastructure error (see `blames_the_agent`)."""


class GoldMissing(GoldProblem, FileNotFoundError):
    """A task names a gold file that its suite does not have (the benchmark's fault, not the agent's)."""


def blames_the_agent(error: BaseException) -> bool:
    """The rule for an exception raised while a scorer ran (docs/scoring-integrity.md, "Who is to
    blame"): the agent's, so a wrong answer scored 0 with the reason, unless it says that the gold side
    or the harness failed (`GoldProblem`, `InfrastructureError`) or it is not an error at all
    (KeyboardInterrupt, SystemExit). A scorer only runs on what the agent produced, and any of its
    files or answers can make any parser raise (RecursionError on deep nesting, MemoryError, a
    UnicodeError, a TypeError on a list where an object was expected): were such exceptions
    infrastructure errors, a hostile answer would leave the mean instead of counting as wrong."""
    return isinstance(error, Exception) and not isinstance(error, GoldProblem | InfrastructureError)


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
