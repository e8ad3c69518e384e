"""`daharness run` with several suites, agents or models: the run set. Its runs go one after another into
their folders under the set's (`runs/run_set.py`); each says its figures in one line, and the set ends
with one table of every run and the comparison of the runs of each suite (summary.json, compare.html).
The exit code is the worst of the runs' (130 as soon as one is interrupted: the rest do not start)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from daharness.cli.options import error_line
from daharness.core.errors import UserError

if TYPE_CHECKING:
    from daharness.cli.run_plan import PlannedRun
    from daharness.runs.run_set import RunSetFile

INTERRUPTED = 130


def run_set(plans: list[PlannedRun], out_dir: Path | None, budget: Any, run_options: dict[str, Any]) -> int:
    """Run every planned run into the set's folder (resuming those begun) and summarize; the exit code."""
    from rich.markup import escape

    from daharness.cli.options import out
    from daharness.cli.run_one import run_and_report
    from daharness.runs.run_set import choose_set_dir, members, read_set, write_set
    from daharness.runs.runner import resume_state

    runs = members([plan.what() for plan in plans])

    def states_in(folder: Path) -> list[tuple[str, str | None]]:
        return [
            resume_state(folder / m.dir, plan.spec, plan.wanted) for m, plan in zip(runs, plans, strict=True)
        ]

    folder = choose_set_dir(out_dir, runs, states_in)
    states = states_in(folder)
    write_set(folder, runs)
    begun = sum(state != "new" for state, _ in states)
    out.print(
        f"run set {escape(str(folder))}: {len(runs)} runs" + (f" ({begun} begun before)" if begun else "")
    )
    codes: dict[str, int] = {}
    for number, (member, plan) in enumerate(zip(runs, plans, strict=True), start=1):
        what = " · ".join(part for part in member.what() if part)
        out.rule(f"run {number} of {len(runs)}: {escape(what)}")
        try:
            codes[member.dir] = run_and_report(plan, folder / member.dir, budget, run_options, full=False)
        except UserError as exc:  # what stops one run (a model refusing the key) leaves the others to run
            error_line(f"{what}: {exc}")
            codes[member.dir] = 2
        if codes[member.dir] == INTERRUPTED:
            break
    _summarize(folder, read_set(folder), codes)
    return worst(list(codes.values()))


def worst(codes: list[int]) -> int:
    """The set's exit code: 130 when a run was interrupted, else the highest of its runs' (0, 2, 3)."""
    return INTERRUPTED if INTERRUPTED in codes else max(codes, default=0)


def _summarize(folder: Path, found: RunSetFile | None, codes: dict[str, int]) -> None:
    from daharness.cli.options import out
    from daharness.report.build import write_json, write_text
    from daharness.report.compare_render import render_comparison_html
    from daharness.report.run_set import print_set_summary, set_summary
    from daharness.runs.run_set import SUMMARY_FILE

    assert found is not None  # written before the first run
    summary = set_summary(folder, found, codes)
    write_json(folder / SUMMARY_FILE, summary)
    out.rule()
    print_set_summary(out, summary)
    if summary["comparisons"]:
        write_text(folder / "compare.html", render_comparison_html(*summary["comparisons"]))
    out.print(
        f"run set: {folder} ({SUMMARY_FILE}"
        + (", compare.html" if summary["comparisons"] else "")
        + f"; `daharness compare {folder}` compares its runs of each suite)",
        highlight=False,
    )
