"""The closed-form family's figures (InfiAgent-DABench), computed as the official analysis script does, plus a level breakdown.

Input is one `QuestionResult` per question. Excluded questions (strict mode: no response) count in no
denominator, exactly like the official script; in normalized mode nothing is excluded but unscorable
tasks. Values are rounded to 4 places and laid out like the official `*_evaluation_analysis.json`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rich.table import Table

from daharness.core.family import FamilyBase, FormatOption, OpenFresh
from daharness.core.record import SampleRecord
from daharness.core.registry import family
from daharness.core.submission import Submission
from daharness.core.task import Task
from daharness.families.closed_form.damage import damaged_answers
from daharness.families.closed_form.scorer import CLOSED_FORM_MODES
from daharness.report.bars import svg_bars
from daharness.report.html import card
from daharness.report.html import pct as pct_html
from daharness.report.terminal import pct

ACCURACY_BY_QUESTION = "Accuracy by Question"
ACCURACY_PROPORTIONAL = "Accuracy Proportional by Sub-Question"
ACCURACY_BY_SUB_QUESTION = "Accuracy by Sub-Question"


@dataclass
class QuestionResult:
    id: str
    correctness: dict[str, bool] = field(default_factory=dict)
    concepts: list[str] = field(default_factory=list)
    level: str | None = None
    excluded: bool = False

    @property
    def all_correct(self) -> bool:
        return all(self.correctness.values())


def _ratio(correct: float, total: int) -> float:
    return round(correct / total, 4) if total > 0 else 0


def _accuracy_by_group(pairs: Iterable[tuple[Any, QuestionResult]]) -> dict[Any, float]:
    totals: dict[Any, list[int]] = defaultdict(lambda: [0, 0])
    for key, result in pairs:
        totals[key][0] += result.all_correct
        totals[key][1] += 1
    return {key: _ratio(correct, total) for key, (correct, total) in totals.items()}


def dabench_figures(results: Sequence[QuestionResult]) -> dict[str, Any]:
    counted = [r for r in results if not r.excluded]
    n = len(counted)
    sub_correct = sum(sum(r.correctness.values()) for r in counted)
    sub_total = sum(len(r.correctness) for r in counted)
    proportional = sum(sum(r.correctness.values()) / len(r.correctness) for r in counted if r.correctness)
    count_accuracy = _accuracy_by_group((len(r.concepts), r) for r in counted)
    multi = [r for r in counted if len(r.concepts) >= 2]
    return {
        "main_results": {
            ACCURACY_BY_QUESTION: _ratio(sum(r.all_correct for r in counted), n),
            ACCURACY_PROPORTIONAL: _ratio(proportional, n),
            ACCURACY_BY_SUB_QUESTION: _ratio(sub_correct, sub_total),
        },
        "concept_accuracy_analysis": _accuracy_by_group((c, r) for r in counted for c in r.concepts),
        "concept_count_accuracy_analysis": {str(k): v for k, v in sorted(count_accuracy.items())},
        "two_or_more_concepts_accuracy": _ratio(sum(r.all_correct for r in multi), len(multi))
        if multi
        else None,
        "by_level": _accuracy_by_group((r.level or "unknown", r) for r in counted),
        "counts": {
            "questions": len(results),
            "counted": n,
            "excluded": len(results) - n,
            "correct": sum(r.all_correct for r in counted),
            "sub_questions": sub_total,
            "sub_questions_correct": sub_correct,
        },
    }


def question_result(
    id: str, score_details: dict[str, Any], excluded: bool, concepts: list[str], level: str | None
) -> QuestionResult:
    """Build a QuestionResult from a closed-form Score's details."""
    subs = score_details.get("sub_answers", {})
    correctness = {name: bool(entry["correct"]) for name, entry in subs.items()}
    return QuestionResult(id=id, correctness=correctness, concepts=concepts, level=level, excluded=excluded)


def question_results(records: Sequence[SampleRecord]) -> list[QuestionResult]:
    scored = [r for r in records if r.status == "scored" and r.score is not None]
    return [question_result(r.id, r.score.details, r.score.excluded, r.concepts, r.level) for r in scored]  # type: ignore[union-attr]


def print_dabench(console: Any, figures: dict[str, Any], title: str) -> None:
    """Print the DABench figures: main results, then by concept, by concept count and by level."""
    main = Table(title=title, title_justify="left", show_header=True)
    main.add_column("metric")
    main.add_column("value", justify="right")
    for name, value in figures["main_results"].items():
        main.add_row(name, pct(value))
    main.add_row("Accuracy for >= 2 concepts", pct(figures["two_or_more_concepts_accuracy"]))
    counts = figures.get("counts", {})
    if counts:
        main.add_row("questions counted / excluded", f"{counts['counted']} / {counts['excluded']}")
    console.print(main)
    breakdown = Table(show_header=True, title_justify="left")
    breakdown.add_column("breakdown")
    breakdown.add_column("group")
    breakdown.add_column(ACCURACY_BY_QUESTION, justify="right")
    sections = (
        ("concept", figures["concept_accuracy_analysis"]),
        ("# concepts", figures["concept_count_accuracy_analysis"]),
        ("level", figures["by_level"]),
    )
    for label, values in sections:
        for group, value in sorted(values.items()):
            breakdown.add_row(label, str(group), pct(value))
    console.print(breakdown)


@family("closed_form", order=10)
class ClosedFormFamily(FamilyBase):
    """InfiAgent-DABench: accuracy by question, proportional and by sub-question; by concept and level."""

    title = "closed-form (InfiAgent-DABench)"
    modes = CLOSED_FORM_MODES
    mode_option = "--mode"
    mode_help = "Closed-form scoring: 'normalized' or 'strict' (official rule)."
    always_record_mode = True
    format_options = (
        FormatOption("labels", "Labels JSONL for a dabench: suite."),
        FormatOption("tables", "Folder of CSV tables for a dabench: suite."),
    )
    suite_dir = Path(__file__).parent / "suite"
    reads_files = False

    def owns_unlabelled(self, record: SampleRecord) -> bool:
        return not record.category  # records of format 1: the closed-form ones have no category

    def damaged(
        self, task: Task, submission: Submission, open_fresh: OpenFresh, scratch: Path
    ) -> Iterator[tuple[str, Submission]]:
        for name, answer in damaged_answers(list(task.gold.answers)):
            yield name, replace(submission, answers=[answer])

    def figures(self, records: list[SampleRecord]) -> dict[str, Any] | None:
        return dabench_figures(question_results(records))

    def print_figures(self, console: Any, figures: dict[str, Any], title: str) -> None:
        print_dabench(console, figures, title)

    def html(self, figures: dict[str, Any]) -> str:
        cards = "".join(card(name, pct_html(value)) for name, value in figures["main_results"].items())
        return (
            f'<div class="cards">{cards}</div><div class="charts">'
            f"<figure>{svg_bars(figures['concept_accuracy_analysis'], 'Accuracy by concept', True)}</figure>"
            f"<figure>{svg_bars(figures['by_level'], 'Accuracy by level', False)}</figure></div>"
        )


def official_analysis(figures: dict[str, Any]) -> dict[str, Any]:
    """The official `*_evaluation_analysis.json` layout, plus `by_level`."""
    keys = (
        "main_results",
        "concept_accuracy_analysis",
        "concept_count_accuracy_analysis",
        "two_or_more_concepts_accuracy",
        "by_level",
    )
    return {key: figures[key] for key in keys}
