"""The workspace family's figures: score by category, sub-category and difficulty, as DA-Code reports it (Table 3 and Figure 3).

A sample's score is its 0..1 value (partial credit counts); samples that ended in an infrastructure
error are left out and counted apart, as everywhere in the report.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from rich.table import Table

from daharness.core.backend import Snapshot
from daharness.core.family import FamilyBase, Mutation
from daharness.core.record import SampleRecord
from daharness.core.registry import family
from daharness.core.runlog import ScoringSettings
from daharness.core.submission import Submission
from daharness.core.task import Task
from daharness.families.workspace import damage
from daharness.families.workspace.modes import WORKSPACE_MODES
from daharness.report.bars import svg_bars
from daharness.report.html import card
from daharness.report.html import pct as pct_html
from daharness.report.terminal import pct


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


def print_categories(console: Any, figures: dict[str, Any], title: str) -> None:
    """DA-Code style: mean score overall, by category, sub-category and difficulty."""
    table = Table(title=title, title_justify="left")
    table.add_column("breakdown")
    table.add_column("group")
    table.add_column("score", justify="right")
    table.add_row("all", "", pct(figures["score"]))
    for label, key in (
        ("category", "by_category"),
        ("sub-category", "by_subcategory"),
        ("difficulty", "by_level"),
    ):
        for group, value in figures[key].items():
            table.add_row(label, group, pct(value))
    console.print(table)


@family("workspace", order=20)
class WorkspaceFamily(FamilyBase):
    """DA-Code: mean score overall, by category (DW / ML / EDA), sub-category and difficulty."""

    title = "workspace (DA-Code)"
    modes = WORKSPACE_MODES
    mode_help = "Workspace (DA-Code) scoring: 'corrected' or 'compat' (official rules)."
    always_record_mode = True
    suite_dir = Path(__file__).parent / "suite"

    def owns_unlabelled(self, record: SampleRecord) -> bool:
        return bool(record.category)  # records of format 1: the workspace ones have a category

    def mutations(
        self, task: Task, submission: Submission, snapshot: Snapshot, scoring: ScoringSettings
    ) -> Iterator[Mutation]:
        return damage.mutations(task, submission, snapshot, scoring)

    def figures(self, records: list[SampleRecord]) -> dict[str, Any] | None:
        return category_figures(records)

    def print_figures(self, console: Any, figures: dict[str, Any], title: str) -> None:
        print_categories(console, figures, title)

    def html(self, figures: dict[str, Any]) -> str:
        return (
            f'<div class="cards">{card("mean score", pct_html(figures["score"]))}</div><div class="charts">'
            f"<figure>{svg_bars(figures['by_subcategory'], 'Score by category / sub-category', True, 'score')}</figure>"
            f"<figure>{svg_bars(figures['by_level'], 'Score by difficulty', False, 'score')}</figure></div>"
        )
