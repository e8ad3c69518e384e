"""`daharness score`: official outputs of other tools scored again (InfiAgent-DABench responses, DA-Agent
output folders, Tapilot-Crossing response files), by the families whose benchmarks define them."""

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
    print_warnings,
    scoring_confined,
)
from daharness.core.errors import UserError

CLOSED_FORM, WORKSPACE, INTERACTIVE = "closed_form", "workspace", "interactive"  # the families' mode groups


@app.command()
@takes_family_options("score", modes=(CLOSED_FORM, WORKSPACE, INTERACTIVE))
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
    tapilot_responses: Annotated[
        Path | None,
        typer.Option(
            help="Tapilot-Crossing response folder (<file>.jsonl with `response`, as call_api.py writes)."
        ),
    ] = None,
    tapilot_data: Annotated[
        Path | None, typer.Option(help="Tapilot-Crossing release folder (data/dialogue_data, data/resource).")
    ] = None,
    tapilot_timeout: Annotated[
        float, typer.Option(help="Tapilot-Crossing: seconds each script may run (the release's 30).", min=1)
    ] = 30.0,
    concurrency: Annotated[
        int, typer.Option("--concurrency", "-j", help="Entries scored at once.", min=1)
    ] = 1,
    sandbox: ScoringSandboxOption = "bwrap",
    debug: DebugOption = False,
) -> None:
    """Rescore existing outputs: closed-form responses (InfiAgent-DABench layout), DA-Agent output folders, or
    Tapilot-Crossing response files."""
    from daharness.cli.options import out
    from daharness.report.build import check_writable, write_json

    assert families is not None
    check_writable(json_path)  # before the scoring, not after it
    if tapilot_responses is not None:
        from daharness.families.interactive import print_rescored_responses, rescore_tapilot
        from daharness.runs.pipeline import SandboxSettings

        if tapilot_data is None:
            raise UserError("--tapilot-responses needs --tapilot-data (the release folder)")
        scoring_confined(sandbox)  # refuses a backend that cannot run
        mode = families.modes[INTERACTIVE]
        figures = rescore_tapilot(
            tapilot_responses, tapilot_data, mode=mode, sandbox=SandboxSettings(sandbox),
            timeout_s=tapilot_timeout, workers=concurrency,
        )  # fmt: skip
        print_rescored_responses(out, figures, f"Tapilot-Crossing responses · {mode}")
    elif dacode_eval is not None:
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
                "--responses is required (or --dacode-eval with --dacode-tasks, --gold, --outputs; or "
                "--tapilot-responses with --tapilot-data)"
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
