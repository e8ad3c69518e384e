"""`daharness export`: a run in another tool's format."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from daharness.cli.app import app
from daharness.cli.options import DebugOption
from daharness.core.errors import UserError


class ExportFormat(StrEnum):
    inspect = "inspect"
    sft = "sft"


@app.command()
def export(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.")],
    out_path: Annotated[
        Path, typer.Argument(help="The file (.eval or .json) or folder to write; sft: a .jsonl file.")
    ],
    format: Annotated[
        ExportFormat,
        typer.Option(
            "--format", help="inspect: an Inspect AI eval log; sft: chat-format training examples (JSONL)."
        ),
    ] = ExportFormat.inspect,
    min_score: Annotated[
        float | None, typer.Option("--min-score", help="sft: only samples that scored at least this.")
    ] = None,
    debug: DebugOption = False,
) -> None:
    """Write a run in another tool's format (Inspect AI: `inspect view` reads it; sft: one training
    example per scored sample, OpenAI chat messages with tool calls and the sample's metadata)."""
    from daharness.cli.options import out

    if format == ExportFormat.sft:
        from daharness.export.sft import export_sft

        count = export_sft(run_dir, out_path, min_score)
        out.print(f"wrote {count} examples to {out_path}")
        return
    if min_score is not None:
        raise UserError("--min-score: only for --format sft")
    from daharness.export.inspect_log import export_inspect

    written = export_inspect(run_dir, out_path)
    out.print(f"wrote {written}")
