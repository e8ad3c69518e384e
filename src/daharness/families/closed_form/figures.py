"""The closed-form family's figures (InfiAgent-DABench), computed as the official analysis script does, plus a level breakdown.

Input is one `QuestionResult` per question. Excluded questions (strict mode: no response) count in no
denominator, exactly like the official script; in normalized mode nothing is excluded but unscorable
tasks. Values are rounded to 4 places and laid out like the official `*_evaluation_analysis.json`
(`dabench_figures`); `figure_tables` gives them to the report to draw.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from daharness.core.figures import Column, FamilyFigures, Figure, FigureTable, breakdown
from daharness.core.record import SampleRecord

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


def figure_tables(figures: dict[str, Any]) -> FamilyFigures:
    """The DABench figures to draw: the main results, then accuracy by concept, number of concepts and level."""
    main, counts = figures["main_results"], figures.get("counts", {})
    headline = [
        Figure(label=ACCURACY_BY_QUESTION, value=main[ACCURACY_BY_QUESTION], measure="rate"),
        Figure(label=ACCURACY_PROPORTIONAL, value=main[ACCURACY_PROPORTIONAL], measure="mean"),
        Figure(label=ACCURACY_BY_SUB_QUESTION, value=main[ACCURACY_BY_SUB_QUESTION], measure="rate"),
        Figure(
            label="Accuracy for >= 2 concepts", value=figures["two_or_more_concepts_accuracy"], measure="rate"
        ),
    ]
    if counts:
        headline += [
            Figure(label="questions counted", value=counts["counted"], measure="count"),
            Figure(label="questions excluded", value=counts["excluded"], measure="count"),
        ]
    by_question = FigureTable(
        columns=[Column(label="Accuracy", measure="rate")],
        sections=[
            breakdown("concept", dict(sorted(figures["concept_accuracy_analysis"].items())), chart="bars"),
            breakdown("# concepts", figures["concept_count_accuracy_analysis"]),
            breakdown("level", dict(sorted(figures["by_level"].items())), chart="columns"),
        ],
    )
    return FamilyFigures(data=figures, headline=headline, tables=[by_question])


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
