"""What the interactive family adds to the commands: `daharness score --tapilot-responses` (response files
of the official Tapilot-Crossing files, scored as the run command scores them) and `daharness generate
interactive` (Tapilot-Crossing's Decision Company loop)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import Field

from daharness.core.family_commands import (
    CommandOptions,
    Generation,
    GenerationRequest,
    Rescoring,
    RescoringContext,
)


class ResponseFilesOptions(CommandOptions):
    tapilot_responses: Path = Field(
        description="Tapilot-Crossing response folder (<file>.jsonl with `response`, as call_api.py writes)."
    )
    tapilot_data: Path = Field(
        description="Tapilot-Crossing release folder (data/dialogue_data, data/resource)."
    )
    tapilot_timeout: float = Field(
        30.0, ge=1, description="Tapilot-Crossing: seconds each script may run (the release's 30)."
    )


class ResponseFilesRescoring(Rescoring):
    options = ResponseFilesOptions
    selected_by = "tapilot_responses"
    what = "Tapilot-Crossing response files"

    def rescore(self, options: ResponseFilesOptions, context: RescoringContext) -> dict[str, Any]:
        from daharness.families.interactive.rescore import print_rescored_responses, rescore_tapilot
        from daharness.runs.pipeline import SandboxSettings

        context.confined()  # refuses a backend that cannot run
        figures = rescore_tapilot(
            options.tapilot_responses,
            options.tapilot_data,
            mode=context.mode,
            sandbox=SandboxSettings(context.sandbox),
            timeout_s=options.tapilot_timeout,
            workers=context.concurrency,
        )
        print_rescored_responses(context.console, figures, f"Tapilot-Crossing responses · {context.mode}")
        return figures


class DialoguesOptions(CommandOptions):
    dialogues: int = Field(2, ge=1, description="Dialogues to write.")
    turns: int = Field(6, ge=1, description="Turns tried per dialogue.")


class DialoguesGeneration(Generation):
    command = "interactive"
    help = (
        "Tapilot-Crossing's Decision Company loop: a client persona asks, a data scientist answers with code "
        "run in the sandbox; normal, clarification, plot, insight-mining, plot-QA and best-guess turns."
    )
    options = DialoguesOptions
    counts = "dialogues"

    def total(self, options: DialoguesOptions, tables: Path) -> int:
        return options.dialogues

    def generate(self, options: DialoguesOptions, request: GenerationRequest) -> list[Any]:
        from daharness.families.interactive.generate import Settings, generate_interactive

        settings = Settings(
            request.tables,
            request.out,
            options.dialogues,
            options.turns,
            request.sandbox,
            encoding=request.encoding,
        )
        return generate_interactive(settings, request.client, request.advance, say=request.say)

    def summary(self, entries: list[Any]) -> Iterable[str]:
        from daharness.families.interactive.generate import summary

        return summary(entries)
