"""What the workspace family adds to the commands: `daharness score --dacode-eval`, the output folders of
an earlier DA-Agent run scored by DA-Code's task and eval files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

from daharness.core.family_commands import CommandOptions, Rescoring, RescoringContext


class OutputsOptions(CommandOptions):
    dacode_eval: Path = Field(description="DA-Code eval JSONL.")
    dacode_tasks: Path = Field(description="DA-Code task JSONL (rescoring DA-Agent outputs).")
    gold: Path = Field(description="DA-Code gold folder (gold/<id>/).")
    outputs: Path = Field(description="DA-Agent output folder (<id>/dabench/result.json).")


class OutputsRescoring(Rescoring):
    options = OutputsOptions
    selected_by = "dacode_eval"
    what = "DA-Agent output folders"

    def rescore(self, options: OutputsOptions, context: RescoringContext) -> dict[str, Any]:
        from daharness.families.workspace.rescore import print_rescored_outputs, rescore_dacode

        figures, warnings = rescore_dacode(
            options.dacode_tasks,
            options.dacode_eval,
            gold_dir=options.gold,
            outputs_dir=options.outputs,
            source_dir=None,
            mode=context.mode,
            confined=context.confined(),
        )
        context.warn(warnings)
        print_rescored_outputs(context.console, figures, f"DA-Code outputs · {context.mode}")
        return figures
