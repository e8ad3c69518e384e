"""What a family contributes: its report figures and its per-sample hooks around the agent."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from daharness.core.backend import SandboxBackend, Snapshot
from daharness.core.record import SampleRecord
from daharness.core.runlog import ScoringSettings
from daharness.core.submission import Submission
from daharness.core.task import Task

# a sandbox holding the task's untouched files, started and closed by the `with` block
OpenFresh = Callable[[], AbstractContextManager[SandboxBackend]]


@dataclass(frozen=True)
class SampleEnvironment:
    """What a family's hooks may use around one sample: the agent's sandbox, fresh sandboxes holding the
    task's untouched files (to run reference code where the agent could not have changed anything), and
    a scratch folder of the harness that the agent cannot reach."""

    sandbox: SandboxBackend
    open_fresh: OpenFresh
    scratch: Path


@dataclass(frozen=True)
class SandboxAdditions:
    """What a family adds to the sandboxes of its tasks: environment variables, host folders of commands
    mounted read-only and put first on PATH, and whether HOME is the workspace (tasks written for a
    user's home folder)."""

    env: dict[str, str] = field(default_factory=dict)
    path_dirs: tuple[Path, ...] = ()
    home_is_workdir: bool = False


@dataclass(frozen=True)
class Mutation:
    """For `daharness validate`: the reference's result changed in one way, scored again. A `damage` (a
    wrong agent's result) or a `forbidden` change (one the task's instruction rules out) must score below
    the reference; an `allowed` change (one the instruction leaves open) must keep its score."""

    name: str
    submission: Submission
    snapshot: Snapshot | None
    kind: Literal["damage", "forbidden", "allowed"] = "damage"


class FamilyBase:
    """Defaults for a family registered with `@family(name)`; override what the family needs."""

    title = ""
    mode_group: str | None = None  # the scoring mode group whose choice the family's tables name
    # False when the family's scorers read the answer text only, never a file: the harness then scores in
    # its own process (nothing hostile to bound, and a worker's imports would only cost time)
    reads_files = True
    # how `daharness validate` checks the family's tasks: "damage" (the reference scores 1 and damaged
    # outputs score lower) or "states" (the untouched state after setup scores 0 and a gold file or the
    # reference solution 1: tasks whose result lives in what their setup built, with no output to damage)
    validation: Literal["damage", "states"] = "damage"

    def figures(self, records: list[SampleRecord]) -> dict[str, Any] | None:
        """The family's figures of a run (report.json `families.<name>`), from its latest records."""
        return None

    def print_figures(self, console: Any, figures: dict[str, Any], title: str) -> None:
        """Print the figures as terminal tables (a rich Console)."""

    def html(self, figures: dict[str, Any]) -> str:
        """An HTML fragment for report.html."""
        return ""

    def sandbox_additions(self, task: Task) -> SandboxAdditions:
        """What the sandboxes of `task` get besides the task's files (read when a sandbox is built)."""
        return SandboxAdditions()

    def prepare(self, task: Task, env: SampleEnvironment) -> SandboxBackend | None:
        """Before the agent starts (e.g. a workflow task's setup steps, run in `env.sandbox`). It may
        return a sandbox for the agent to use instead of `env.sandbox` (one that wraps it, say, to run
        the setup only when the agent first uses it)."""
        return None

    def finish(self, task: Task, env: SampleEnvironment, submission: Submission) -> None:
        """After the agent ends, before its files are collected: e.g. run a check script and keep its
        output in `submission.evidence`, which scorers read."""

    def mutations(
        self, task: Task, submission: Submission, snapshot: Snapshot, scoring: ScoringSettings
    ) -> Iterator[Mutation]:
        """For `daharness validate`: the reference's result (its `submission` and collected files in
        `snapshot`) changed in the ways a wrong agent would change it, each named. A mutation's files may
        live only until the next one is asked for."""
        return iter(())

    def damaged(
        self,
        task: Task,
        submission: Submission,
        open_fresh: OpenFresh,
        scratch: Path,
    ) -> Iterator[tuple[str, Submission]]:
        """For `daharness validate`: wrong versions of the reference's submission (a changed number, a
        wrong letter...), each named; every one must score below the reference. `open_fresh` gives
        sandboxes holding the task's untouched files, `scratch` a folder for what they produce."""
        return iter(())
