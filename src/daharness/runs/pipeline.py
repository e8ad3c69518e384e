"""One sample, end to end: prepare -> solve -> collect -> score -> record.

prepare: a sandbox with the task's files, then the family's setup hook. solve: the agent. collect: the
family's after-hook (checks that run once the agent is done), then a symlink-free snapshot of the
workspace. score: the task's scorers on the submission and the snapshot. record: one SampleRecord,
with the entries left out of the snapshot and the agent's suspicious actions (integrity.py).

Who is to blame when something fails: before the agent acts (sandbox start, setup), in scoring, or in
the model API, the harness (an `error` record, retried on resume). While the agent's code runs or its
files are collected, the agent, unless a fresh sandbox of the same task cannot start either (then the
host is at fault): an agent that breaks its kernel on purpose gets 0, not an `error` that the accuracy
would leave out.

`run`, `validate` and `rescore` all go through these stages; only what they do with the result differs
(the runner writes it to the run directory, validate damages the collected files and scores again).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from daharness.core.agent import Agent
from daharness.core.backend import SandboxBackend, Snapshot
from daharness.core.errors import AgentFailure, InfrastructureError
from daharness.core.family import FamilyBase, SampleEnvironment
from daharness.core.limits import Limits
from daharness.core.record import UNREACHABLE, SampleRecord
from daharness.core.registry import families
from daharness.core.runlog import ScoringSettings, TrajectoryFile, file_safe
from daharness.core.score import Score
from daharness.core.submission import Event, ModelCall, Note, Submission
from daharness.core.task import Task
from daharness.models import ModelFatalError
from daharness.runs.bounded_scoring import score_within_limits
from daharness.runs.integrity import skipped_files, suspicious_actions
from daharness.runs.screens import AFTER_SETUP, BEFORE_CHECKS, keep_screens, screen_note
from daharness.sandbox import SandboxError, SandboxNotStarted, open_sandbox
from daharness.sandbox.local import UNSAFE_BACKEND
from daharness.sandbox.scratch import process_scratch
from daharness.sandbox.workspace import display_name, remove_tree


@dataclass(frozen=True)
class SandboxSettings:
    backend: str = "bwrap"
    limits: Limits = field(default_factory=Limits)
    desktop: bool = False  # every sample gets a desktop (a task that needs one gets it anyway)

    @property
    def confines_scoring(self) -> bool:
        """Whether the scoring of agent files runs confined in bubblewrap: always, but under the
        unsafe-local backend, which says agent code runs unconfined (and so does its scoring)."""
        return self.backend != UNSAFE_BACKEND


@dataclass
class SampleResult:
    """A finished sample: its record, its trajectory, and (until `discard`) its collected files."""

    record: SampleRecord
    trajectory: TrajectoryFile
    submission: Submission | None = None
    snapshot: Snapshot | None = None
    attachments: dict[str, bytes] = field(default_factory=dict)  # the submission's, kept in attachments/<id>/

    def discard(self) -> None:
        if self.snapshot is not None:
            remove_tree(self.snapshot.root.parent)
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


def start_sandbox(task: Task, sandbox: SandboxSettings) -> SandboxBackend:
    """A sandbox holding the task's untouched files and what its family adds to them (commands,
    variables, services), starting in the background (its first use waits)."""
    additions = family_hooks(task).sandbox_additions(task)
    box = open_sandbox(sandbox.backend, task, sandbox.limits, desktop=sandbox.desktop, additions=additions)
    try:
        box.start_soon()
    except BaseException:
        box.close()
        raise
    return box


@contextmanager
def started(
    task: Task, sandbox: SandboxSettings, ahead: SandboxBackend | None = None
) -> Iterator[SandboxBackend]:
    """A sandbox holding the task's untouched files, starting (its first use waits for it): `ahead`, one
    started for this task before its sample began, or a new one; closed (and removed) on exit."""
    if ahead is None:
        box = start_sandbox(task, sandbox)
    else:
        box = ahead
        box.restart_clock()
    try:
        yield box
    finally:
        box.close()


def family_hooks(task: Task) -> FamilyBase:
    return families.get(task.family).impl if task.family in families else FamilyBase()


def solve_and_collect(
    task: Task,
    agent: Agent,
    sandbox: SandboxSettings,
    usage: dict[str, Any] | None = None,
    ahead: SandboxBackend | None = None,
) -> tuple[Submission, Snapshot]:
    """prepare + solve + collect: the family's setup, the agent's work, the family's checks after it,
    then the workspace frozen into a snapshot (in a scratch folder the caller removes). What the
    sandbox used (memory peak, restarts, limits hit) is put in `usage` when given. `ahead`: the task's
    sandbox, started before the sample (it is used, and closed, as a new one would be)."""
    try:
        scratch = Path(
            tempfile.mkdtemp(prefix=f"daharness-collected-{file_safe(task.id)[:40]}-", dir=process_scratch())
        )
    except BaseException:
        if ahead is not None:  # not yet in `started`, which closes it
            ahead.close()
        raise
    hooks = family_hooks(task)
    try:
        with started(task, sandbox, ahead) as box:
            try:
                env = SampleEnvironment(box, lambda: started(task, sandbox), scratch / "harness")
                env.scratch.mkdir()
                prepared = hooks.prepare(task, env) or box
                first = screen_note(box, AFTER_SETUP)
                try:
                    submission = agent.solve(task, prepared)
                    keep_screens(submission, first, screen_note(box, BEFORE_CHECKS))
                    hooks.finish(task, env, submission)
                except SandboxNotStarted:
                    raise  # the host's failure, whatever the agent did
                except SandboxError as exc:
                    raise blame(task, sandbox, exc, _history(box)) from exc
                try:
                    snapshot = box.snapshot(scratch / "files")
                except Exception as exc:  # whatever the agent left made collecting fail
                    reason = f"collecting the agent's files failed: {type(exc).__name__}: {exc}"
                    raise AgentFailure(reason, _history(box)) from exc
            finally:
                if usage is not None:
                    usage.update(box.resource_usage())
    except BaseException:
        remove_tree(scratch)
        raise
    return submission, snapshot


def blame(task: Task, sandbox: SandboxSettings, exc: SandboxError, history: list[Event]) -> Exception:
    """The sandbox failed while the agent's code ran. If a fresh sandbox of the same task starts and
    answers, the host is fine and the agent's code did it (an AgentFailure); else the host is at fault
    and the SandboxError stands."""
    try:
        with started(task, sandbox) as probe:
            healthy = probe.python("print(6 * 7)").stdout.strip() == "42"
    except Exception:
        healthy = False
    if not healthy:
        return exc
    return AgentFailure(f"the agent's code broke its sandbox: {exc}", history)


def _history(box: SandboxBackend) -> list[Event]:
    return list(box.history)


def run_sample(
    task: Task,
    agent: Agent,
    *,
    sandbox: SandboxSettings,
    scoring: ScoringSettings,
    attempt: int = 1,
    ahead: SandboxBackend | None = None,
) -> SampleResult:
    """Every stage for one sample. Whatever fails outside the agent becomes an `error` record; a fatal
    model error (wrong key, model or URL) is raised so that the run stops. `ahead`: the task's sandbox,
    started while earlier samples ran."""
    started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
    clock = time.perf_counter()
    common = {**record_fields(task, agent.name, attempt), "started_at": started_at}
    snapshot = None
    usage: dict[str, Any] = {}
    try:
        submission, snapshot = solve_and_collect(task, agent, sandbox, usage, ahead)
        score = score_within_limits(
            task, submission, snapshot, scoring, sandbox.limits, confined=sandbox.confines_scoring
        )
        record = scored_record(common, submission, score, snapshot, time.perf_counter() - clock)
        record.extra.update(sandbox_extra(usage, snapshot))
        record.skipped_files = skipped_files(snapshot)
        record.suspicious = suspicious_actions(
            submission.trajectory,
            snapshot,
            task.workdir,
            answer=submission.answer,
            reported=submission.suspicions,
        )
        trajectory = trajectory_of(task, agent.name, attempt, submission)
        return SampleResult(record, trajectory, submission, snapshot, submission.attachments)
    except ModelFatalError:
        if snapshot is not None:
            remove_tree(snapshot.root.parent)
        raise
    except AgentFailure as exc:
        record = failure_record(common, str(exc), exc.trajectory, task.workdir, time.perf_counter() - clock)
        record.extra.update(sandbox_extra(usage, None))
        events = [*exc.trajectory, Note(text=f"agent failure: {exc}")]
        return SampleResult(
            record, TrajectoryFile(id=task.id, agent=agent.name, attempt=attempt, steps=events)
        )
    except Exception as exc:  # the harness failed: a crashed solution, the sandbox, a missing file, a bug
        if snapshot is not None:
            remove_tree(snapshot.root.parent)
        events: list[Any] = []
        if isinstance(exc, InfrastructureError):
            events, error = exc.trajectory, str(exc)
        elif isinstance(exc, SandboxError):
            error = f"sandbox: {exc}"
        else:
            error = f"{type(exc).__name__}: {exc}"
        record = SampleRecord(status="error", error=error, duration_s=time.perf_counter() - clock, **common)
        record.extra.update(sandbox_extra(usage, None))
        if getattr(exc, "unreachable", False):
            record.extra[UNREACHABLE] = True  # the runner stops after several such samples in a row
        try:
            trajectory = TrajectoryFile(id=task.id, agent=agent.name, attempt=attempt, steps=events)
        except Exception:  # events the trajectory schema refuses must not lose the record
            trajectory = TrajectoryFile(id=task.id, agent=agent.name, attempt=attempt)
        return SampleResult(record, trajectory)


def scored_record(
    common: dict[str, Any], submission: Submission, score: Score, snapshot: Snapshot | None, seconds: float
) -> SampleRecord:
    return SampleRecord(
        status="scored", score=score, answer=submission.answer,
        artifacts=[display_name(n) for n in snapshot.changed] if snapshot else [],
        agent_metrics=agent_metrics_of(submission),
        duration_s=round(seconds, 4), **common,
    )  # fmt: skip


def agent_metrics_of(submission: Submission) -> dict[str, Any]:
    """The agent's figures, with how many model replies came from the response cache: a cached reply
    costs nothing and takes no time, so cost and time figures must say how many there were."""
    metrics = submission.metrics()
    calls = [event for event in submission.trajectory if isinstance(event, ModelCall)]
    if calls:
        metrics["usage"] = {**metrics["usage"], "cached_calls": sum(call.cached for call in calls)}
    return metrics


def sandbox_extra(usage: dict[str, Any], snapshot: Snapshot | None) -> dict[str, Any]:
    """What the record says about the sandbox: its usage, and the agent's files left behind (over the
    workspace quota) with a notice."""
    extra: dict[str, Any] = {"sandbox": usage} if usage else {}
    over = [entry.path for entry in snapshot.skipped if entry.kind == "over_quota"] if snapshot else []
    if over:
        extra["notices"] = [
            f"{len(over)} workspace files beyond the workspace quota were not collected, e.g. "
            + ", ".join(display_name(name) for name in over[:5])
        ]
    return extra


def failure_record(
    common: dict[str, Any], reason: str, events: list[Event], workdir: str, seconds: float
) -> SampleRecord:
    """A sample the agent's own code broke: a wrong answer (0) that says why, never an `error`."""
    return SampleRecord(
        status="scored", score=Score(value=0.0, explanation=f"agent failure: {reason}"), failure=reason,
        suspicious=suspicious_actions(events, None, workdir), duration_s=round(seconds, 4), **common,
    )  # fmt: skip


def trajectory_of(task: Task, agent_name: str, attempt: int, submission: Submission) -> TrajectoryFile:
    return TrajectoryFile(
        id=task.id, agent=agent_name, attempt=attempt, answer=submission.answer, answers=submission.answers,
        finished=submission.finished, stop_reason=submission.stop_reason,
        steps=list(submission.trajectory),
    )  # fmt: skip
