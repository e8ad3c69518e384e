"""The workspace family's figures: score by category, sub-category and difficulty, as DA-Code reports it (Table 3 and Figure 3).

A sample's score is its 0..1 value (partial credit counts); samples that ended in an infrastructure
error are left out and counted apart, as everywhere in the report.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from daharness.core.figures import Column, FamilyFigures, Figure, FigureTable, breakdown
from daharness.core.record import SampleRecord


def mean_by(pairs: Iterable[tuple[str, float]]) -> dict[str, float]:
    groups: dict[str, list[float]] = defaultdict(list)
    for key, value in pairs:
        groups[key].append(value)
    return {key: round(sum(values) / len(values), 4) for key, values in sorted(groups.items())}


def category_figures(records: Sequence[SampleRecord]) -> dict[str, Any] | None:
    """None when no sample has a category (e.g. closed-form suites)."""
    scored = [r for r in records if r.status == "scored" and r.score is not None and not r.score.excluded]
    if not any(r.category for r in scored):
        return None
    values = [(r, r.score.value) for r in scored]  # type: ignore[union-attr]
    return {
        "score": round(sum(v for _, v in values) / len(values), 4) if values else None,
        "by_category": mean_by((r.category or "unknown", v) for r, v in values),
        "by_subcategory": mean_by((f"{r.category or '?'} / {r.subcategory or '?'}", v) for r, v in values),
        "by_level": mean_by((r.level or "unknown", v) for r, v in values),
    }


def figure_tables(figures: dict[str, Any]) -> FamilyFigures:
    """DA-Code style: the mean score, then by category, sub-category and difficulty."""
    by_group = FigureTable(
        columns=[Column(label="Score", measure="mean")],
        sections=[
            breakdown("category", figures["by_category"]),
            breakdown("sub-category", figures["by_subcategory"], chart="bars"),
            breakdown("difficulty", figures["by_level"], chart="columns"),
        ],
    )
    headline = [Figure(label="mean score", value=figures["score"], measure="mean")]
    return FamilyFigures(data=figures, headline=headline, tables=[by_group])
