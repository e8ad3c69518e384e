"""What the closed-form family adds to the commands: `daharness score --responses` (InfiAgent-DABench's
response files scored as its official script does) and `daharness generate closed-form`."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator, model_validator

from daharness.core.family_commands import (
    CommandOptions,
    Generation,
    GenerationRequest,
    Rescoring,
    RescoringContext,
)


class ResponsesOptions(CommandOptions):
    responses: Path = Field(description='Responses JSONL: {"id": ..., "response": "..."} per line.')
    questions: Path | None = Field(None, description="Official questions JSONL.")
    labels: Path | None = Field(None, description="Labels JSONL for a dabench: suite.")
    suite: str | None = Field(None, description="A built-in suite instead of --questions/--labels.")


class ResponsesRescoring(Rescoring):
    options = ResponsesOptions
    selected_by = "responses"
    what = "closed-form responses (InfiAgent-DABench layout)"

    def rescore(self, options: ResponsesOptions, context: RescoringContext) -> dict[str, Any]:
        from daharness.families.closed_form.figures import figure_tables, official_analysis
        from daharness.families.closed_form.rescore import rescore_dabench

        figures, warnings = rescore_dabench(
            options.responses,
            questions=options.questions,
            labels=options.labels,
            suite=options.suite,
            mode=context.mode,
        )
        context.warn(warnings)
        context.draw(figure_tables(figures), f"{options.responses.name} · {context.mode}")
        return official_analysis(figures)


class QuestionsOptions(CommandOptions):
    per_table: int = Field(4, ge=1, description="Questions asked per table.")
    concepts: tuple[str, ...] | None = Field(
        None, description="Comma-separated DABench concepts (default: all seven)."
    )
    solutions: int = Field(3, ge=1, description="Independent solutions run per question.")
    agree: int | None = Field(None, ge=1, description="Solutions that must agree (default: all of them).")

    @field_validator("concepts", mode="before")
    @classmethod
    def _known_concepts(cls, given: Any) -> Any:
        from daharness.families.closed_form.generate import CONCEPTS

        if not isinstance(given, str):
            return given
        chosen = tuple(concept.strip() for concept in given.split(","))
        if unknown := [concept for concept in chosen if concept not in CONCEPTS]:
            raise ValueError(f"unknown concept {unknown[0]!r}; known: {', '.join(CONCEPTS)}")
        return chosen

    @model_validator(mode="after")
    def _agree_at_most_solutions(self) -> QuestionsOptions:
        if self.agree is not None and self.agree > self.solutions:
            raise ValueError(f"--agree: {self.agree} is more than the {self.solutions} solutions")
        return self


class QuestionsGeneration(Generation):
    command = "closed-form"
    help = "Questions per table, concept and level; answers fixed by agreeing solutions run in the sandbox."
    options = QuestionsOptions
    counts = "questions"
    review_files = ("review.html", "review.jsonl")

    def total(self, options: QuestionsOptions, tables: Path) -> int:
        return len(list(tables.glob("*.csv"))) * options.per_table

    def generate(self, options: QuestionsOptions, request: GenerationRequest) -> list[Any]:
        from daharness.families.closed_form.generate import CONCEPTS, Settings, generate_closed_form

        settings = Settings(
            request.tables,
            request.out,
            options.per_table,
            options.concepts or CONCEPTS,
            options.solutions,
            options.agree or options.solutions,
            request.sandbox,
            encoding=request.encoding,
        )
        return generate_closed_form(settings, request.client, request.advance, say=request.say)

    def summary(self, entries: list[Any]) -> Iterable[str]:
        from daharness.families.closed_form.generate import summary

        return summary(entries)
