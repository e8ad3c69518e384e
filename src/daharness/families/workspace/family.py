"""The workspace family (DA-Code): its changed outputs for `validate`, its figures (`figures.py`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from daharness.core.backend import Snapshot
from daharness.core.family import FamilyBase, Mutation
from daharness.core.figures import FamilyFigures
from daharness.core.record import SampleRecord
from daharness.core.registry import family
from daharness.core.runlog import ScoringSettings
from daharness.core.submission import Submission
from daharness.core.task import Task
from daharness.families.workspace import damage
from daharness.families.workspace.commands import OutputsRescoring
from daharness.families.workspace.figures import category_figures, figure_tables
from daharness.families.workspace.modes import WORKSPACE_MODES


@family("workspace", order=20)
class WorkspaceFamily(FamilyBase):
    """DA-Code: mean score overall, by category (DW / ML / EDA), sub-category and difficulty."""

    title = "workspace (DA-Code)"
    modes = WORKSPACE_MODES
    mode_help = "Workspace (DA-Code) scoring: 'corrected' or 'compat' (official rules)."
    always_record_mode = True
    suite_dir = Path(__file__).parent / "suite"
    rescoring = OutputsRescoring()

    def owns_unlabelled(self, record: SampleRecord) -> bool:
        return bool(record.category)  # records of format 1: the workspace ones have a category

    def mutations(
        self, task: Task, submission: Submission, snapshot: Snapshot, scoring: ScoringSettings
    ) -> Iterator[Mutation]:
        return damage.mutations(task, submission, snapshot, scoring)

    def figures(self, records: list[SampleRecord]) -> FamilyFigures | None:
        figures = category_figures(records)
        return None if figures is None else figure_tables(figures)
