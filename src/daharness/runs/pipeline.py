"""One sample, end to end: prepare -> solve -> collect -> score -> record.

`run`, `validate` and `rescore` all go through these stages; only what they do with the result differs
(the runner writes it to the run directory, validate damages the collected files and scores again).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from daharness.core.agent import Agent
from daharness.core.backend import Snapshot
from daharness.core.errors import InfrastructureError
from daharness.core.limits import Limits
from daharness.core.record import SampleRecord
from daharness.core.registry import families
from daharness.core.runlog import ScoringSettings, TrajectoryFile
from daharness.core.score import Score
from daharness.core.submission import Submission
from daharness.core.task import Task
from daharness.models import ModelFatalError
from daharness.sandbox import SandboxError, open_sandbox
from daharness.scoring import score_submission


@dataclass(frozen=True)
class SandboxSettings:
    backend: str = "bwrap"
    limits: Limits = field(default_factory=Limits)


@dataclass
class SampleResult:
    """A finished sample: its record, its trajectory, and (until `discard`) its collected files."""

    record: SampleRecord
    trajectory: TrajectoryFile
    submission: Submission | None = None
    snapshot: Snapshot | None = None

    def discard(self) -> None:
        if self.snapshot is not None:
            shutil.rmtree(self.snapshot.root.parent, ignore_errors=True)
            self.snapshot = None


def record_fields(task: Task, agent_name: str, attempt: int) -> dict[str, Any]:
    """What every record of a task carries, whatever happened to it."""
    return {
        "id": task.id,
        "agent": agent_name,
        "family": task.family,
        "attempt": attempt,
        "concepts": task.metadata.concepts,
        "level": task.metadata.level,
        "category": task.metadata.category,
        "subcategory": task.metadata.subcategory,
        "source_id": task.metadata.source_id,
        "tags": task.metadata.tags,
    }


@contextmanager
def prepared(task: Task, sandbox: SandboxSettings) -> Iterator[Any]:
    """prepare: a started sandbox holding the task's files, after the family's setup; closed on exit."""
    box = open_sandbox(sandbox.backend, task, sandbox.limits)
    try:
        box.start()
        hooks = families.get(task.family).impl if task.family in families else None
        if hooks is not None:
            hooks.prepare(task, box)
        yield box
    finally:
        box.close()


def solve_and_collect(task: Task, agent: Agent, sandbox: SandboxSettings) -> tuple[Submission, Snapshot]:
    """solve + collect: the agent works, the family finishes, the workspace is frozen into a snapshot."""
    scratch = Path(tempfile.mkdtemp(prefix=f"daharness-collected-{task.id[:40]}-"))
    try:
        with prepared(task, sandbox) as box:
            submission = agent.solve(task, box)
            hooks = families.get(task.family).impl if task.family in families else None
            if hooks is not None:
                hooks.finish(task, box, submission)
            snapshot = box.snapshot(scratch / "files")
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return submission, snapshot


def run_sample(
    task: Task, agent: Agent, *, sandbox: SandboxSettings, scoring: ScoringSettings, attempt: int = 1
) -> SampleResult:
    """Every stage for one sample. Whatever fails outside the agent becomes an `error` record; a fatal
    model error (wrong key, model or URL) is raised so that the run stops."""
    started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
    clock = time.perf_counter()
    common = {**record_fields(task, agent.name, attempt), "started_at": started_at}
    snapshot = None
    try:
        submission, snapshot = solve_and_collect(task, agent, sandbox)
        score = score_submission(task, submission, snapshot, scoring)
        record = scored_record(common, submission, score, snapshot, time.perf_counter() - clock)
        trajectory = trajectory_of(task, agent.name, attempt, submission)
        return SampleResult(record, trajectory, submission, snapshot)
    except ModelFatalError:
        if snapshot is not None:
            shutil.rmtree(snapshot.root.parent, ignore_errors=True)
        raise
    except Exception as exc:  # the harness failed: a crashed solution, the sandbox, a missing file, a bug
        if snapshot is not None:
            shutil.rmtree(snapshot.root.parent, ignore_errors=True)
        events: list[Any] = []
        if isinstance(exc, InfrastructureError):
            events, error = exc.trajectory, str(exc)
        elif isinstance(exc, SandboxError):
            error = f"sandbox: {exc}"
        else:
            error = f"{type(exc).__name__}: {exc}"
        record = SampleRecord(status="error", error=error, duration_s=time.perf_counter() - clock, **common)
        trajectory = TrajectoryFile(id=task.id, agent=agent.name, attempt=attempt, steps=events)
        return SampleResult(record, trajectory)


def scored_record(
    common: dict[str, Any], submission: Submission, score: Score, snapshot: Snapshot | None, seconds: float
) -> SampleRecord:
    return SampleRecord(
        status="scored", score=score, answer=submission.answer,
        artifacts=list(snapshot.changed) if snapshot else [], agent_metrics=submission.metrics(),
        duration_s=round(seconds, 4), **common,
    )  # fmt: skip


def trajectory_of(task: Task, agent_name: str, attempt: int, submission: Submission) -> TrajectoryFile:
    return TrajectoryFile(
        id=task.id, agent=agent_name, attempt=attempt, answer=submission.answer, answers=submission.answers,
        finished=submission.finished, stop_reason=submission.stop_reason,
        steps=list(submission.trajectory),
    )  # fmt: skip
