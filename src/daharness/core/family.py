"""What a family contributes: its report figures, its per-sample hooks around the agent, and what the
command line and the shared layers ask of it (its scoring modes and format options, its built-in suite,
how `daharness validate` checks its tasks, what it adds to `score`, `generate` and `doctor`), so that
nothing outside the family names it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from daharness.core.backend import SandboxBackend, Snapshot
from daharness.core.family_commands import DoctorSection, Generation, Rescoring
from daharness.core.figures import FamilyFigures
from daharness.core.record import SampleRecord
from daharness.core.runlog import ScoringSettings
from daharness.core.scoring import ModeGroup
from daharness.core.submission import Submission
from daharness.core.suite import Suite
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
    # for tasks that run services in the sandbox (a backend without them refuses such tasks):
    read_only_dirs: tuple[Path, ...] = ()  # host folders mounted read-only at their own paths
    files: dict[str, str] = field(default_factory=dict)  # absolute path -> content, read-only (/etc/hosts)
    user_name: str | None = None  # the sandbox's user named so in its /etc/passwd (HOME: the workdir)
    run_dirs: tuple[str, ...] = ()  # empty writable folders (sockets), new at every start
    state_dir: str | None = None  # a writable folder that outlives restarts (the services' data)
    links: dict[str, str] = field(default_factory=dict)  # absolute path -> target
    extra_processes: int = 0  # on top of the process limit (servers and their threads)
    step_timeout_s: float = 0.0  # a step's time limit at least this (a step that starts servers)

    @property
    def has_services(self) -> bool:
        return bool(self.read_only_dirs or self.files or self.run_dirs or self.state_dir or self.links)


@dataclass(frozen=True)
class Mutation:
    """For `daharness validate`: the reference's result changed in one way, scored again. A `damage` (a
    wrong agent's result) or a `forbidden` change (one the task's instruction rules out) must score below
    the reference; an `allowed` change (one the instruction leaves open) must keep its score."""

    name: str
    submission: Submission
    snapshot: Snapshot | None
    kind: Literal["damage", "forbidden", "allowed"] = "damage"


@dataclass(frozen=True)
class FormatOption:
    """A command-line option of a suite format the family loads, handed to its loader by `name` (left
    out when not given): `daharness run --suite dabench:Q.jsonl --labels L.jsonl`."""

    name: str  # the loader's option, and the command's parameter
    help: str
    kind: Literal["path", "choice", "flag", "text"] = "path"  # a flag is given as True, or not at all
    choices: tuple[str, ...] = ()
    flag: str = ""  # "" is --<name>
    # True: it chooses how the tasks read (`run` only); False: where the suite's files are (every
    # command that loads a suite by path)
    variant: bool = False
    # the suite formats (their registered names: "dabench") whose loaders read it: given for a suite of
    # another format it is refused, not ignored; () leaves it unchecked
    formats: tuple[str, ...] = ()
    # False: a built-in suite of those formats names these files itself (its suite.json), so it refuses it
    builtin: bool = True

    @property
    def option(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")


class FamilyBase:
    """Defaults for a family registered with `@family(name)`; override what the family needs."""

    title = ""
    # names the family had before: run directories whose records use them are read under its name
    former_names: tuple[str, ...] = ()
    # the run-level switch of the family's scorers (their `@scorer(modes=...)`): the command line's
    # `mode_option` (default --<group>-mode) with `mode_help`, run.json's `scoring.modes`, report titles
    modes: ModeGroup | None = None
    mode_option = ""
    mode_help = ""
    # run.json names the mode even when no task of the run uses it (runs made before the modes were
    # recorded only for their own tasks resume only so)
    always_record_mode = False
    format_options: tuple[FormatOption, ...] = ()  # options of the formats the family loads
    suite_dir: Path | None = None  # its built-in suite, shipped with daharness: a folder with suite.json
    # False when the family's scorers read the answer text only, never a file: the harness then scores in
    # its own process (nothing hostile to bound, and a worker's imports would only cost time)
    reads_files = True
    # how `daharness validate` checks the family's tasks: "damage" (the reference scores 1 and damaged
    # outputs score lower) or "states" (the untouched state after setup scores 0 and a gold file or the
    # reference solution 1: tasks whose result lives in what their setup built, with no output to damage)
    validation: Literal["damage", "states"] = "damage"
    # what the family adds to the commands (core/family_commands.py): `daharness score` on the official
    # outputs of its benchmark's tools, and `daharness generate <command>`
    rescoring: Rescoring | None = None
    generation: Generation | None = None

    def doctor(self) -> list[DoctorSection]:
        """The family's part of `daharness doctor` (e.g. whether its applications can run here)."""
        return []

    @property
    def mode_group(self) -> str | None:
        """The scoring mode group whose choice the family's tables name."""
        return self.modes.name if self.modes is not None else None

    def owns_unlabelled(self, record: SampleRecord) -> bool:
        """Whether a record written before records named their family is one of this family's."""
        return False

    def figures(self, records: list[SampleRecord]) -> FamilyFigures | None:
        """The family's figures of a run, from its latest records: their `data` goes into report.json
        (`families.<name>`), and report/ draws their headline and tables (terminal, report.html,
        viewer). None: nothing to show."""
        return None

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

    def validate_states(
        self, suite: Suite, tasks: list[Task], scoring: ScoringSettings, concurrency: int
    ) -> list[Any]:
        """`validation = "states"`: check the tasks (and list the suite's unsupported ones), one result
        per task with `task_id`, `ok` and `as_json()`."""
        raise NotImplementedError(f"{type(self).__name__} checks its tasks by damage, not by states")

    def print_validation(self, console: Any, suite: str, results: list[Any]) -> None:
        """`validation = "states"`: print the results of `validate_states` (a rich Console)."""
