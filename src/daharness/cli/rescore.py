"""`daharness rescore`: a finished run scored again, from its saved answers and artifacts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from daharness.cli.app import app
from daharness.cli.families import FamilyChoices, takes_family_options
from daharness.cli.options import DebugOption, ScoringSandboxOption, scoring_confined


@app.command()
@takes_family_options("rescore")
def rescore(
    run_dir: Annotated[Path, typer.Argument(help="A finished run directory.")],
    out_dir: Annotated[Path, typer.Option("--out", "-o", help="The new run directory.")],
    families: FamilyChoices | None = None,
    sandbox: ScoringSandboxOption = "bwrap",
    debug: DebugOption = False,
) -> None:
    """Score a finished run again from its saved answers and artifacts, into a new run directory."""
    from daharness.cli.options import out
    from daharness.report.build import write_report
    from daharness.report.terminal import print_report
    from daharness.runs.rescore import rescore_run

    assert families is not None
    confined = scoring_confined(sandbox)
    run = rescore_run(run_dir, out_dir, families.scoring(used=None), confined=confined)
    print_report(out, write_report(run))
    out.print(f"run directory: {out_dir} (report.html, report.json)")
