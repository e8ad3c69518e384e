"""The workflow family's figures, as Spider2-V reports them: success rate (a sample succeeds when it scores
1) overall, by application, by category, by interface (cli / gui / cli+gui), by instruction (abstract /
verbose) and by difficulty."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from daharness.core.figures import Column, FamilyFigures, Figure, FigureTable, Row, Section
from daharness.core.record import SampleRecord

INTERFACES = ("cli", "gui", "cli+gui")
INSTRUCTIONS = ("abstract", "verbose")
# each breakdown: its name, its key in the figures, and whether report.html draws it
_BREAKDOWNS = (
    ("application", "by_app", True),
    ("category", "by_category", True),
    ("interface", "by_interface", True),
    ("instruction", "by_instruction", True),
    ("difficulty", "by_level", False),
)


def workflow_figures(records: list[SampleRecord]) -> dict[str, Any] | None:
    scored = [r for r in records if r.status == "scored" and r.score is not None and not r.score.excluded]
    if not scored:
        return None
    values = [(r, r.score.value) for r in scored]  # type: ignore[union-attr]

    def groups(key_of: Any) -> dict[str, dict[str, Any]]:
        return _rates((key, value) for record, value in values for key in key_of(record))

    return {
        "samples": len(values),
        "success_rate": round(sum(v >= 1.0 for _, v in values) / len(values), 4),
        "mean_score": round(sum(v for _, v in values) / len(values), 4),
        "by_app": groups(
            lambda r: [t.removeprefix("app:") for t in r.tags if t.startswith("app:")] or ["unknown"]
        ),
        "by_category": groups(lambda r: [r.category or "unknown"]),
        "by_interface": groups(lambda r: [t for t in r.tags if t in INTERFACES] or ["unknown"]),
        "by_instruction": groups(lambda r: [t for t in r.tags if t in INSTRUCTIONS] or ["unknown"]),
        "by_level": groups(lambda r: [r.level or "unknown"]),
    }


def _rates(pairs: Iterable[tuple[str, float]]) -> dict[str, dict[str, Any]]:
    found: dict[str, list[float]] = defaultdict(list)
    for key, value in pairs:
        found[key].append(value)
    return {
        key: {"samples": len(vals), "success_rate": round(sum(v >= 1.0 for v in vals) / len(vals), 4)}
        for key, vals in sorted(found.items())
    }


def figure_tables(figures: dict[str, Any]) -> FamilyFigures:
    """The success rate and mean score, then the samples and success rate of each group."""
    headline = [
        Figure(label="success rate", value=figures["success_rate"], measure="rate"),
        Figure(label="mean score", value=figures["mean_score"], measure="mean"),
        Figure(label="samples", value=figures["samples"], measure="count"),
    ]
    sections = [
        Section(
            name=name,
            rows=[
                Row(group=group, values=[row["samples"], row["success_rate"]])
                for group, row in figures[key].items()
            ],
            chart="columns" if charted else None,
        )
        for name, key, charted in _BREAKDOWNS
    ]
    columns = [Column(label="samples", measure="count"), Column(label="Success rate", measure="rate")]
    return FamilyFigures(
        data=figures, headline=headline, tables=[FigureTable(columns=columns, sections=sections)]
    )
