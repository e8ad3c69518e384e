"""`daharness compare`: runs side by side, with intervals and paired tests."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from daharness.cli.app import app
from daharness.cli.options import DebugOption, JsonOption
from daharness.core.errors import UserError


@app.command()
def compare(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(
            help="Two or more run directories, the first the baseline; or a run set's folder (its runs of "
            "each suite are compared)."
        ),
    ],
    html_path: Annotated[Path | None, typer.Option("--html", help="Write the comparison as HTML.")] = None,
    json_path: JsonOption = None,
    debug: DebugOption = False,
) -> None:
    """Compare runs: figures with 95% intervals, paired differences and tests by group, flipped samples."""
    from daharness.cli.options import out
    from daharness.report.build import check_writable, write_json, write_text
    from daharness.report.compare import compare_runs
    from daharness.report.compare_render import print_comparison, render_comparison_html

    check_writable(html_path)
    check_writable(json_path)
    groups = _groups(run_dirs)
    reports = [compare_runs(group) for group in groups]
    for report in reports:
        _check_comparable(report)
        print_comparison(out, report)
    if html_path is not None:
        write_text(html_path, render_comparison_html(*reports))
        out.print(f"wrote {html_path}")
    if json_path is not None:
        write_json(json_path, reports[0] if len(reports) == 1 else {"suites": reports})
        out.print(f"wrote {json_path}")


def _groups(paths: list[Path]) -> list[list[Path]]:
    """The runs to compare: the given ones, or with a run set's folder among them, its runs (and the
    others given) by suite, each suite run more than once compared on its own."""
    from daharness.report.run_set import group_by_suite
    from daharness.runs.run_set import with_set_runs

    dirs, sets = with_set_runs(paths)
    groups = [group for group in group_by_suite(dirs) if len(group) > 1] if sets else [dirs]
    if not groups or len(dirs) < 2:
        raise UserError(
            "compare needs at least two run directories"
            + (" of one suite (a run set's runs are compared by suite)" if sets else "")
        )
    return groups


def _check_comparable(figures: dict[str, Any]) -> None:
    """Samples pair by id: runs that share none have nothing to compare (a table of dashes said so
    before). Runs of different suites that do share ids are compared, with the table's warning."""
    runs = {run["label"]: run for run in figures["runs"]}
    for comparison in figures["comparisons"]:
        a, b = runs[comparison["a"]], runs[comparison["b"]]
        if not comparison["paired"]:
            suites = f"{b['dir']} ran suite {b['suite']!r}, {a['dir']} ran {a['suite']!r}"
            why = suites if not comparison["same_suite"] else f"{b['dir']} and {a['dir']}"
            raise UserError(f"{why}: no scored sample in common, nothing to compare")
