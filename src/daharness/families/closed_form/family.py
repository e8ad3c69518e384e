"""The closed-form family (InfiAgent-DABench): its options, its wrong answers for `validate`, its figures
(`figures.py`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from daharness.core.family import FamilyBase, FormatOption, OpenFresh
from daharness.core.figures import FamilyFigures
from daharness.core.record import SampleRecord
from daharness.core.registry import family
from daharness.core.submission import Submission
from daharness.core.task import Task
from daharness.families.closed_form.commands import QuestionsGeneration, ResponsesRescoring
from daharness.families.closed_form.damage import damaged_answers
from daharness.families.closed_form.figures import dabench_figures, figure_tables, question_results
from daharness.families.closed_form.scorer import CLOSED_FORM_MODES


@family("closed-form", order=10)
class ClosedFormFamily(FamilyBase):
    """InfiAgent-DABench: accuracy by question, proportional and by sub-question; by concept and level."""

    title = "closed-form (InfiAgent-DABench)"
    former_names = ("closed_form",)  # in the records of daharness before format 3
    modes = CLOSED_FORM_MODES
    mode_option = "--mode"
    mode_help = "Closed-form scoring: 'normalized' or 'strict' (official rule)."
    always_record_mode = True
    format_options = (
        FormatOption("labels", "Labels JSONL for a dabench: suite.", formats=("dabench",), builtin=False),
        FormatOption(
            "tables", "Folder of CSV tables for a dabench: suite.", formats=("dabench",), builtin=False
        ),
    )
    suite_dir = Path(__file__).parent / "suite"
    reads_files = False
    rescoring = ResponsesRescoring()
    generation = QuestionsGeneration()

    def owns_unlabelled(self, record: SampleRecord) -> bool:
        return not record.category  # records of format 1: the closed-form ones have no category

    def damaged(
        self, task: Task, submission: Submission, open_fresh: OpenFresh, scratch: Path
    ) -> Iterator[tuple[str, Submission]]:
        for name, answer in damaged_answers(list(task.gold.answers)):
            yield name, replace(submission, answers=[answer])

    def figures(self, records: list[SampleRecord]) -> FamilyFigures:
        return figure_tables(dabench_figures(question_results(records)))
