"""`daharness validate` for workflow (Spider2-V) suites.

For every supported task: the untouched state after setup must score 0 (no task passes without work),
and so must the state where the task's tools only did again what the setup gives them to do, on the
files as the setup left them (`dbt seed`, `dbt run` and `dbt build` in every dbt project, every notebook
executed as it is, every workbook saved unchanged): a task that this passes asks for nothing more (a
"bug" the tool accepts, a notebook that only needs running). Where the expected result is one file
compared by one function (a `*_gt*.xlsx`, a gold CSV, a gold DuckDB checked by `check_local_database`
alone), that file put at the result path must score 1; and a task with a reference solution must score 1
with it. Unsupported tasks are listed with their reason.
"""

from __future__ import annotations

import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from daharness.agents.reference import ReferenceAgent
from daharness.core.agent import Agent
from daharness.core.backend import SandboxBackend, Snapshot
from daharness.core.limits import Limits
from daharness.core.runlog import ScoringSettings
from daharness.core.submission import Submission
from daharness.core.suite import Suite
from daharness.core.task import Task
from daharness.runs.pipeline import SandboxSettings, solve_and_collect
from daharness.sandbox.workspace import folder_snapshot
from daharness.scoring import score_submission


class IdleAgent:
    """Does nothing: what the untouched task state scores."""

    name = "idle"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}

    def solve(self, task: Task, sandbox: SandboxBackend) -> Submission:
        return Submission(stop_reason="idle")


# the tools' own commands on every file of their kind that the setup left (hidden folders and installed
# dbt packages aside), errors ignored: dbt in each project, each notebook executed, each workbook saved
_EACH = (
    "find . -path '*/.*' -prune -o -name '{pattern}' -print | grep -v /dbt_packages/ | "
    "while read -r found; do {command} >/dev/null 2>&1; done"
)
_TOOLS = {
    "dbt_project.yml": '(cd "$(dirname "$found")" || exit; dbt seed; dbt run; dbt build)',
    "*.ipynb": 'jupyter nbconvert --to notebook --execute --inplace --allow-errors "$found"',
    "*.xlsx": 'python -c "import openpyxl, sys; openpyxl.load_workbook(sys.argv[1]).save(sys.argv[1])" "$found"',
}
SETUP_COMMANDS = tuple(_EACH.format(pattern=pattern, command=command) for pattern, command in _TOOLS.items())


class SetupCommandsAgent:
    """Runs only the tools' own commands on the files as the setup left them, changing nothing itself:
    what a task scores when its tools do again what the setup gives them to do."""

    name = "setup-commands"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}

    def solve(self, task: Task, sandbox: SandboxBackend) -> Submission:
        submission = Submission(stop_reason="setup-commands")
        for command in SETUP_COMMANDS:
            submission.act("bash", {"command": command}, sandbox.bash(f"cd ~ && {command}"))
        return submission


@dataclass
class WorkflowValidation:
    task_id: str
    supported: bool = True
    reason: str = ""
    initial: float | None = None
    setup_only: float | None = None
    gold: float | None = None
    reference: float | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "supported": self.supported, "reason": self.reason, "initial": self.initial,
            "setup_only": self.setup_only, "gold": self.gold,
        }  # fmt: skip
        if self.reference is not None:
            found["reference"] = self.reference
        if self.problems:
            found["problems"] = self.problems
        return found


def validate_suite(
    suite: Suite, tasks: list[Task], scoring: ScoringSettings, concurrency: int
) -> list[WorkflowValidation]:
    """Each task checked, `concurrency` at once, with the suite's unsupported tasks and their reasons."""
    unsupported = [WorkflowValidation(i, supported=False, reason=why) for i, why in suite.unsupported.items()]
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        checked = list(pool.map(lambda task: validate_workflow_task(task, scoring=scoring), tasks))
    return sorted(unsupported + checked, key=lambda result: result.task_id)


def validate_workflow_task(
    task: Task, *, scoring: ScoringSettings, limits: Limits | None = None
) -> WorkflowValidation:
    result = WorkflowValidation(task.id)
    sandbox = SandboxSettings(limits=limits or Limits())
    snapshot = None
    try:
        submission, snapshot = solve_and_collect(task, IdleAgent(), sandbox)
        initial = score_submission(task, submission, snapshot, scoring)
        result.initial = initial.value
        if initial.value > 0:
            result.problems.append(f"the untouched state scores {initial.value:.3f}: {initial.explanation}")
        result.setup_only = _score_of(task, SetupCommandsAgent(), sandbox, scoring)
        if result.setup_only >= 1.0:
            result.problems.append(
                f"only running the tools again on the files as the setup left them scores "
                f"{result.setup_only:.3f} (dbt seed/run/build, executing the notebooks, saving the workbooks)"
            )
        if (target := single_gold_target(task)) is not None:
            result.gold = _score_with_gold(task, submission, snapshot, target, scoring)
            if result.gold < 1.0:
                result.problems.append(f"the gold file at {target[0]} scores {result.gold:.3f}")
        if task.reference is not None:
            result.reference = _score_of(task, ReferenceAgent(), sandbox, scoring)
            if result.reference < 1.0:
                result.problems.append(f"the reference solution scores {result.reference:.3f}")
    except Exception as exc:  # a broken task is a finding, not a crash of the command
        result.problems.append(f"{type(exc).__name__}: {exc}")
    finally:
        if snapshot is not None:
            shutil.rmtree(snapshot.root.parent, ignore_errors=True)
    return result


def single_gold_target(task: Task) -> tuple[str, str] | None:
    """(result path, gold name) when the task is one function comparing one file with one gold file."""
    if len(task.scorers) != 1:
        return None
    options = task.scorers[0].options
    result, expected = options.get("result", {}), options.get("expected", {})
    if result.get("kind") == "file" and expected.get("kind") == "gold":
        return str(result["path"]), str(expected["path"])
    return None


def _score_with_gold(
    task: Task, submission: Submission, snapshot: Snapshot, target: tuple[str, str], scoring: ScoringSettings
) -> float:
    path, gold_name = target
    gold = next(g.source for g in task.gold.files if g.name == gold_name)
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "files"
        shutil.copytree(snapshot.root, copy)
        (copy / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(gold, copy / path)
        return score_submission(task, submission, folder_snapshot(copy), scoring).value


def _score_of(task: Task, agent: Agent, sandbox: SandboxSettings, scoring: ScoringSettings) -> float:
    submission, snapshot = solve_and_collect(task, agent, sandbox)
    try:
        return score_submission(task, submission, snapshot, scoring).value
    finally:
        shutil.rmtree(snapshot.root.parent, ignore_errors=True)


def print_workflow_validation(console: Console, suite: str, results: list[Any]) -> None:
    """The table of `daharness validate` on a workflow suite: support, and the scores of the untouched
    state, of the setup's commands run again, of the gold file and of the reference."""
    table = Table(title=f"{suite}: validation", title_justify="left")
    for column in ("task", "supported", "initial", "setup only", "gold", "reference", "verdict"):
        table.add_column(column)

    def value(number: float | None) -> str:
        return "—" if number is None else f"{number:.3f}"

    for result in results:
        if not result.supported:
            verdict = f"[yellow]unsupported: {escape(result.reason)}[/]"
        else:
            verdict = "[green]ok[/]" if result.ok else "[red]" + escape("; ".join(result.problems)) + "[/]"
        table.add_row(
            result.task_id, "yes" if result.supported else "no", value(result.initial),
            value(result.setup_only), value(result.gold), value(result.reference), verdict,
        )  # fmt: skip
    console.print(table)
    supported = [r for r in results if r.supported]
    failed = [r.task_id for r in supported if not r.ok]
    console.print(
        f"{len(supported)} supported, {len(results) - len(supported)} unsupported; "
        f"{len(supported) - len(failed)} of {len(supported)} supported tasks pass"
        + (f"; failing: {', '.join(failed)}" if failed else "")
    )
