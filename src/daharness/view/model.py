"""What the viewer shows of a run: its report, its samples as table rows, and each sample's trajectory.

Runs of every format version open: run.json, records and trajectories are read through the versioned
run log, and a sample without a trajectory file still has its row and page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import Any

from daharness.core.errors import UserError
from daharness.core.record import SampleRecord
from daharness.core.runlog import RunSpec, TrajectoryFile, file_safe
from daharness.core.task import Task
from daharness.report.build import build_report, family_of
from daharness.report.run_tasks import reload_tasks
from daharness.runs.rundir import RunDir

WORKBOOK_TYPES = {".xlsx", ".xlsm"}
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
    seen: tuple[int, int] = field(init=False, default=(0, 0))

    def __post_init__(self) -> None:
        self.run = RunDir.open_for_reading(self.root)
        self.seen = self.version()

    def version(self) -> tuple[int, int]:
        """What changes when a sample is added to the run (its samples file grows as the run goes on)."""
        try:
            found = self.run.samples_path.stat()
        except FileNotFoundError:
            return (0, 0)
        return (found.st_mtime_ns, found.st_size)

    def refresh(self) -> None:
        """Forget the records and the report when the run has changed since they were read."""
        now = self.version()
        if now != self.seen:
            self.seen = now
            for name in ("report", "records"):
                self.__dict__.pop(name, None)

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

    def neighbours(self, record: SampleRecord) -> tuple[SampleRecord | None, SampleRecord | None]:
        """The samples before and after `record` in the report's order."""
        ordered = self.ordered()
        at = next(i for i, r in enumerate(ordered) if r.key == record.key)
        return (ordered[at - 1] if at else None, ordered[at + 1] if at + 1 < len(ordered) else None)

    def gold_image(self, record_id: str, name: str) -> Path | None:
        """A gold image of the sample's task that a chart scorer compares with (shown beside the agent's)."""
        task = self.tasks.get(record_id)
        if task is None or PurePosixPath(name).suffix.lower() not in IMAGE_TYPES:
            return None
        charts = {str(s.options.get("file")) for s in task.scorers if s.name == "chart"}
        found = next((f.source for f in task.gold.files if f.name == name and name in charts), None)
        return found if found is not None and found.is_file() else None

    def gold_workbooks(self, record: SampleRecord) -> list[tuple[str, Path]]:
        """(the agent's file name, the gold workbook) of each scorer that compares a workbook the agent
        left (`result`: a file) with a gold one (`expected`: a gold file), as Spider2-V's evaluators do."""
        task = self.tasks.get(record.id)
        if task is None:
            return []
        gold_files = {f.name: f.source for f in task.gold.files}
        found: list[tuple[str, Path]] = []
        for spec in task.scorers:
            result, expected = spec.options.get("result"), spec.options.get("expected")
            if not (isinstance(result, dict) and isinstance(expected, dict)):
                continue
            mine, gold = PurePosixPath(str(result.get("path"))), gold_files.get(str(expected.get("path")))
            if mine.is_relative_to(task.workdir):  # the path in the home, as the artifacts name it
                mine = mine.relative_to(task.workdir)
            kinds = (result.get("kind"), expected.get("kind"))
            if gold is not None and kinds == ("file", "gold") and mine.suffix.lower() in WORKBOOK_TYPES:
                found += [(str(mine), gold)] if (str(mine), gold) not in found else []
        return found

    def artifact(self, folder_name: str, name: str) -> Path | None:
        """The saved file `name` in artifacts/<folder_name>/, never a path outside that folder."""
        return self.saved_file("artifacts", folder_name, name)

    def saved_file(self, kind: str, folder_name: str, name: str) -> Path | None:
        """The file `name` in <kind>/<folder_name>/ of the run (kind: artifacts, the agent's files, or
        attachments, what the harness kept for the trajectory), never a path outside that folder."""
        root = (self.root / kind).resolve()
        folder = (root / folder_name).resolve()
        path = (folder / name).resolve()
        ok = folder.parent == root and path.is_relative_to(folder) and path.is_file()
        return path if ok else None


def version_of(runs: list[ViewedRun]) -> str:
    """What the served index page compares to know that a run has new samples."""
    return "-".join(f"{run.seen[0]}.{run.seen[1]}" for run in runs)


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
    task = run.tasks.get(record.id)
    request = " ".join(task.instructions) if task else ""
    search = " ".join(
        str(part) for part in (record.id, request, record.answer, score.explanation if score else "", record.error,
                               " ".join(record.concepts), record.category) if part
    )  # fmt: skip
    return {
        "run": run.label,
        "id": record.key,
        "page": f"runs/{run.index}/samples/{file_safe(record.key)}.html",
        "request": request,  # what the task asks: a closed-form id alone ("3") says nothing
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
