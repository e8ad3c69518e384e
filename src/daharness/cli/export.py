"""`daharness export`: a run in another tool's format."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from daharness.cli.app import app
from daharness.cli.options import DebugOption, out


class ExportFormat(StrEnum):
    inspect = "inspect"


@app.command()
def export(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.")],
    out_path: Annotated[Path, typer.Argument(help="The file (.eval or .json) or folder to write.")],
    format: Annotated[
        ExportFormat, typer.Option("--format", help="inspect: an Inspect AI eval log.")
    ] = ExportFormat.inspect,
    debug: DebugOption = False,
) -> None:
    """Write a run in another tool's format (Inspect AI: `inspect view` reads it)."""
    from daharness.export.inspect_log import export_inspect

    written = export_inspect(run_dir, out_path)
    out.print(f"wrote {written}")
