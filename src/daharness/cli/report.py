"""`daharness report`: a run directory's report computed again and printed."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from daharness.cli.app import app
from daharness.cli.options import DebugOption


@app.command()
def report(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.")], debug: DebugOption = False
) -> None:
    """Recompute report.json and report.html for a run directory and print the figures."""
    from daharness.cli.options import out
    from daharness.report.build import write_report
    from daharness.report.terminal import print_report
    from daharness.runs.rundir import RunDir

    print_report(out, write_report(RunDir.open_for_reading(run_dir)))
    out.print(f"wrote {run_dir / 'report.json'} and {run_dir / 'report.html'}")
