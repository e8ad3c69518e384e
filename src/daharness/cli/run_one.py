"""One run of `daharness run` (alone, or as a member of a run set): the samples run, the report written
and printed, and the exit code the run ends with."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

from daharness.cli.options import INFRASTRUCTURE_EXIT, error_line

if TYPE_CHECKING:
    from daharness.cli.run_plan import PlannedRun


def run_and_report(
    plan: PlannedRun, out_dir: Path | None, budget: Any, run_options: dict[str, Any], *, full: bool = True
) -> int:
    """Run, write the report and print it (`full`) or its headline; the exit code: 3 when the run stopped
    early or ended with more infrastructure errors than `budget` allows, 130 when interrupted, else 0 (a
    UserError, exit 2, is raised)."""
    from daharness.agents import make_agent
    from daharness.cli.options import err, out
    from daharness.report.build import write_report
    from daharness.report.terminal import print_headline, print_report
    from daharness.runs.rundir import RunDir
    from daharness.runs.runner import RunStopped, run_suite

    try:
        outcome = run_suite(
            plan.suite, plan.agent, out_dir, scoring=plan.scoring, sandbox=plan.sandbox, ids=plan.ids,
            agent_factory=functools.partial(make_agent, plan.agent_name, plan.settings, plan.options),
            console=err, models=plan.models(), **run_options,
        )  # fmt: skip
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]: finished samples are saved; run the same command to resume")
        return 130
    except RunStopped as exc:
        error_line(f"the run stopped: {exc}")
        return INFRASTRUCTURE_EXIT
    report = write_report(RunDir.open_for_reading(outcome.run_dir))
    if full:
        print_report(out, report)
        out.print(f"run directory: {outcome.run_dir} (report.html, report.json)")
    else:
        print_headline(out, report)
    if budget.exceeded(outcome.errors, outcome.selected):
        error_line(
            f"{outcome.errors} of {outcome.selected} samples ended in infrastructure errors, more than "
            f"--max-errors {budget.text} allows (reasons in report.html; the same command retries them)"
        )
        return INFRASTRUCTURE_EXIT
    return 0
