"""What the viewer shows of a run: its report, its samples as table rows, and each sample's trajectory.

Runs of every format version open: run.json, records and trajectories are read through the versioned
run log, and a sample without a trajectory file still has its row and page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from daharness.core.errors import UserError
from daharness.core.record import SampleRecord
from daharness.core.runlog import RunSpec, TrajectoryFile, file_safe
from daharness.core.task import Task
from daharness.report.build import build_report, family_of
from daharness.report.run_tasks import reload_tasks
from daharness.runs.rundir import RunDir

IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
               ".svg": "image/svg+xml", ".webp": "image/webp"}  # fmt: skip


def verdict(record: SampleRecord) -> str:
    if record.status == "error" or record.score is None:
        return "error"
    if record.score.excluded:
        return "excluded"
    if record.score.value >= 1.0:
        return "right"
    return "partial" if record.score.value > 0 else "wrong"


def error_kind(record: SampleRecord) -> str:
    """harness (the sample failed outside the agent), code (some of the agent's code failed) or none."""
    if record.status == "error":
        return "harness"
    return "code" if record.agent_metrics.get("code_errors") else "none"


@dataclass
class ViewedRun:
    index: int
    root: Path
    label: str
    run: RunDir = field(init=False)

    def __post_init__(self) -> None:
        self.run = RunDir.open_for_reading(self.root)

    @cached_property
    def spec(self) -> RunSpec:
        return self.run.spec()

    @cached_property
    def report(self) -> dict[str, Any]:
        return build_report(self.run)

    @cached_property
    def records(self) -> dict[str, SampleRecord]:
        return self.run.latest_records()

    @cached_property
    def tasks(self) -> dict[str, Task]:
        return reload_tasks(self.spec)

    def by_page_name(self, name: str) -> SampleRecord | None:
        return next((r for r in self.records.values() if file_safe(r.key) == name), None)

    def trajectory(self, record: SampleRecord) -> TrajectoryFile | None:
        """The sample's trajectory, None when none was saved (UserError when the file is unreadable)."""
        return self.run.read_trajectory(record.key)

    def ordered(self) -> list[SampleRecord]:
        """The samples in the report's order (numeric ids numerically)."""
        return [self.records[row["id"]] for row in self.report["samples"]]

    def artifact(self, folder_name: str, name: str) -> Path | None:
        """The saved file `name` in artifacts/<folder_name>/, never a path outside that folder."""
        root = (self.root / "artifacts").resolve()
        folder = (root / folder_name).resolve()
        path = (folder / name).resolve()
        ok = folder.parent == root and path.is_relative_to(folder) and path.is_file()
        return path if ok else None


def open_runs(dirs: list[Path]) -> list[ViewedRun]:
    if not dirs:
        raise UserError("view needs at least one run directory")
    return [
        ViewedRun(index, path, chr(ord("A") + index) if index < 26 else f"R{index}")
        for index, path in enumerate(dirs)
    ]


def row_of(run: ViewedRun, record: SampleRecord) -> dict[str, Any]:
    metrics = record.agent_metrics
    score = record.score
    search = " ".join(
        str(part) for part in (record.id, record.answer, score.explanation if score else "", record.error,
                               " ".join(record.concepts), record.category) if part
    )  # fmt: skip
    return {
        "run": run.label,
        "id": record.key,
        "page": f"runs/{run.index}/samples/{file_safe(record.key)}.html",
        "verdict": verdict(record),
        "value": score.value if score else None,
        "family": family_of(record),
        "category": record.category or "",
        "level": record.level or "",
        "errors": error_kind(record),
        "stop_reason": str(metrics.get("stop_reason") or ""),
        "steps": metrics.get("steps"),
        "duration_s": record.duration_s,
        "attempt": record.attempt,
        "explanation": (score.explanation if score else record.error) or "",
        "search": search.lower(),
    }
