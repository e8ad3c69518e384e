"""`daharness score`: official outputs of other tools scored again (InfiAgent-DABench responses, DA-Agent
output folders), by the two families whose benchmarks define them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from daharness.cli.app import app
from daharness.cli.families import FamilyChoices, takes_family_options
from daharness.cli.options import (
    DebugOption,
    JsonOption,
    ScoringSandboxOption,
    out,
    print_warnings,
    scoring_confined,
)
from daharness.core.errors import UserError

CLOSED_FORM, WORKSPACE = "closed_form", "workspace"  # the mode groups of the two families


@app.command()
@takes_family_options("score", modes=(CLOSED_FORM, WORKSPACE))
def score(
    responses: Annotated[
        Path | None, typer.Option(help='Responses JSONL: {"id": ..., "response": "..."} per line.')
    ] = None,
    questions: Annotated[Path | None, typer.Option(help="Official questions JSONL.")] = None,
    labels: Annotated[Path | None, typer.Option(help="Labels JSONL for a dabench: suite.")] = None,
    suite: Annotated[
        str | None, typer.Option(help="A built-in suite instead of --questions/--labels.")
    ] = None,
    families: FamilyChoices | None = None,
    json_path: JsonOption = None,
    dacode_tasks: Annotated[
        Path | None, typer.Option(help="DA-Code task JSONL (rescoring DA-Agent outputs).")
    ] = None,
    dacode_eval: Annotated[Path | None, typer.Option(help="DA-Code eval JSONL.")] = None,
    gold: Annotated[Path | None, typer.Option(help="DA-Code gold folder (gold/<id>/).")] = None,
    outputs: Annotated[
        Path | None, typer.Option(help="DA-Agent output folder (<id>/dabench/result.json).")
    ] = None,
    sandbox: ScoringSandboxOption = "bwrap",
    debug: DebugOption = False,
) -> None:
    """Rescore existing outputs: closed-form responses (InfiAgent-DABench layout), or DA-Agent output folders."""
    from daharness.report.build import check_writable, write_json

    assert families is not None
    check_writable(json_path)  # before the scoring, not after it
    if dacode_eval is not None:
        from daharness.families.workspace import print_rescored_outputs, rescore_dacode

        if dacode_tasks is None or gold is None or outputs is None:
            raise UserError("--dacode-eval needs --dacode-tasks, --gold and --outputs too")
        mode = families.modes[WORKSPACE]
        figures, warnings = rescore_dacode(
            dacode_tasks,
            dacode_eval,
            gold_dir=gold,
            outputs_dir=outputs,
            source_dir=None,
            mode=mode,
            confined=scoring_confined(sandbox),
        )
        print_warnings(warnings)
        print_rescored_outputs(out, figures, f"DA-Code outputs · {mode}")
    else:
        from daharness.families.closed_form import official_analysis, print_dabench, rescore_dabench

        if responses is None:
            raise UserError(
                "--responses is required (or --dacode-eval with --dacode-tasks, --gold, --outputs)"
            )
        mode = families.modes[CLOSED_FORM]
        figures, warnings = rescore_dabench(
            responses, questions=questions, labels=labels, suite=suite, mode=mode
        )
        print_warnings(warnings)
        print_dabench(out, figures, f"{responses.name} · {mode}")
        figures = official_analysis(figures)
    if json_path is not None:
        write_json(json_path, figures)
        out.print(f"wrote {json_path}")
