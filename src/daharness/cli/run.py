"""`daharness run`: an agent on a suite, every sample scored, into a run directory and its report; or a
run set of several suites, agents or models (`cli/run_set.py`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from daharness.cli.app import app
from daharness.cli.bundles import bundled
from daharness.cli.families import FamilyChoices, takes_family_options
from daharness.cli.options import DebugOption
from daharness.cli.run_options import AgentLimits, ModelChoice, SandboxChoice, ScaleOut, Selection
from daharness.core.errors import UserError

SuitesOption = Annotated[
    str,
    typer.Option(
        "--suite",
        "-s",
        help="Built-in suite name, or FORMAT:PATH (dabench:QUESTIONS.jsonl, ...); several, comma-separated, "
        "make a run set.",
    ),
]
AgentOption = Annotated[
    str,
    typer.Option(
        "--agent", "-a", help="Agent name (see `daharness agents`); several, comma-separated, make a run set."
    ),
]
OutOption = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        help="Run directory (a run set's folder); re-running with it resumes. Default: the newest unfinished "
        "run of the same suite, agent and mode under runs/, else a new runs/<timestamp>-<suite>-<agent>/ "
        "(a set: the newest unfinished set of the same runs, else runs/<timestamp>-set/).",
    ),
]


@app.command()
@takes_family_options("run", formats="all", agents=True)
@bundled
def run(
    suite: SuitesOption,
    agent: AgentOption,
    *,
    out_dir: OutOption = None,
    selection: Selection,
    families: FamilyChoices | None = None,
    sandbox: SandboxChoice,
    model: ModelChoice,
    agent_limits: AgentLimits,
    scale_out: ScaleOut,
    debug: DebugOption = False,
) -> None:
    """Run an agent on a suite, score every sample, write the run directory and its report. Several
    suites, agents or models (comma-separated) make a run set: each combination is a run of its own, in one
    folder, with one summary at the end."""
    from daharness.cli.run_one import run_and_report
    from daharness.cli.run_plan import plan_runs
    from daharness.cli.run_set import run_set
    from daharness.runs.error_budget import ErrorBudget

    assert families is not None
    families.agent_options.add_pairs(agent_limits.agent_option or [], "-A")
    _check_where_it_runs(sandbox.sandbox, scale_out.backend)
    budget = ErrorBudget.parse(selection.max_errors)
    if scale_out.backend == "local":  # the kernel template's numpy and pandas load while the suites do
        from daharness.sandbox import prepare_run

        prepare_run(sandbox.sandbox, sandbox.limits())
    plans = plan_runs(suite, agent, model, families, selection, sandbox, agent_limits)
    run_options = {
        "limit": selection.task_range(), "sample_shuffle": selection.sample_shuffle,
        "stop_after_unreachable": selection.stop_after_unreachable, "epochs": selection.epochs,
        "labels": selection.labels(), "concurrency": selection.concurrency, "executor": scale_out.settings(),
    }  # fmt: skip
    if len(plans) > 1:
        raise typer.Exit(run_set(plans, out_dir, budget, run_options))
    if code := run_and_report(plans[0], out_dir, budget, run_options):
        raise typer.Exit(code)


def _check_where_it_runs(sandbox: str, backend: str) -> None:
    from daharness.cli.options import err
    from daharness.runs.executors import executor_names
    from daharness.sandbox import UNSAFE_BACKEND, UNSAFE_WARNING, check_backend

    check_backend(sandbox)
    if sandbox != UNSAFE_BACKEND:  # agents' files are scored in a bwrap worker, whatever runs the agent
        check_backend("bwrap")
    if backend not in executor_names():
        raise UserError(f"--backend: unknown executor {backend!r}; known: {', '.join(executor_names())}")
    if sandbox == UNSAFE_BACKEND:
        err.print(f"[bold red]{UNSAFE_WARNING}[/]")
