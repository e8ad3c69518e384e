"""Run an agent over a suite: pick the samples still to do, run them concurrently, append records."""

from __future__ import annotations

import platform
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from daharness import __version__
from daharness.agents.base import Agent, InfrastructureError
from daharness.errors import UserError
from daharness.models import ModelFatalError
from daharness.runs.records import SampleRecord
from daharness.runs.rundir import IDENTITY_KEYS, RUN_FILE, RunDir
from daharness.sandbox import (
    Backend,
    Limits,
    Sandbox,
    SandboxError,
    Workspace,
    check_backend,
    kill_all_sandboxes,
)
from daharness.scoring.dispatch import score_submission
from daharness.suites import Suite
from daharness.tasks.model import Task

# Set when the user interrupts: samples still in flight are then not recorded, so a resume redoes them.
_stopping = threading.Event()
_REPORTED_PACKAGES = ("pandas", "numpy", "scipy", "scikit-learn", "pydantic", "matplotlib")


@dataclass
class RunOutcome:
    run_dir: Path
    selected: int
    skipped: int
    ran: int
    errors: int


RUNS_ROOT = Path("runs")


def _dir_suffix(suite: str, agent: str) -> str:
    safe_suite = "".join(c if c.isalnum() or c in "-_" else "_" for c in suite)
    return f"{safe_suite}-{agent}"


def default_run_dir(suite: str, agent: str, root: Path = RUNS_ROOT) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    candidate = root / f"{stamp}-{_dir_suffix(suite, agent)}"
    counter = 2
    while candidate.exists():
        candidate = root / f"{stamp}.{counter}-{_dir_suffix(suite, agent)}"
        counter += 1
    return candidate


def unfinished_run_dir(config: dict[str, Any], wanted: set[str], root: Path = RUNS_ROOT) -> Path | None:
    """The newest run under `root` made with the same suite, agent and scoring that still lacks some of
    the `wanted` sample ids: running the same command without --out resumes it."""
    suffix = _dir_suffix(config["suite"]["name"], config["agent"]["name"])
    for candidate in sorted(root.glob(f"*-{suffix}"), reverse=True):
        if not (candidate / RUN_FILE).is_file():
            continue
        run = RunDir(candidate)
        try:
            existing = run.config()
        except UserError:
            continue
        if any(existing.get(key) != config.get(key) for key in IDENTITY_KEYS):
            continue
        if not wanted <= run.finished_ids():
            return candidate
    return None


def select_tasks(tasks: Sequence[Task], *, ids: Sequence[str] | None, limit: int | None) -> list[Task]:
    selected = list(tasks)
    if ids:
        by_id = {task.id: task for task in tasks}
        unknown = [i for i in ids if i not in by_id]
        if unknown:
            raise UserError(f"--ids: no task with id {', '.join(unknown)} in this suite")
        selected = [by_id[i] for i in dict.fromkeys(ids)]
    if limit is not None:
        if limit < 1:
            raise UserError("--limit must be at least 1")
        selected = selected[:limit]
    return selected


def run_config(suite: Suite, agent: Agent, scoring: dict[str, str], extra: dict[str, Any]) -> dict[str, Any]:
    versions = {}
    for package in _REPORTED_PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {
        "daharness_version": __version__,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "suite": suite.describe(),
        "agent": agent.describe(),
        "scoring": scoring,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": versions,
        "command": sys.argv,
        **extra,
    }


@dataclass(frozen=True)
class SandboxSettings:
    backend: Backend = "bwrap"
    limits: Limits = field(default_factory=Limits)


def run_sample(
    task: Task,
    agent: Agent,
    run: RunDir,
    *,
    closed_form_mode: str,
    attempt: int,
    sandbox: SandboxSettings,
    workspace_mode: str = "corrected",
) -> SampleRecord:
    """Run one sample end to end and append its record (the record is the commit point)."""
    started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
    clock = time.perf_counter()
    common: dict[str, Any] = {
        "id": task.id,
        "agent": agent.name,
        "attempt": attempt,
        "concepts": task.metadata.concepts,
        "level": task.metadata.level,
        "category": task.metadata.category,
        "subcategory": task.metadata.subcategory,
        "source_id": task.metadata.source_id,
        "started_at": started_at,
    }
    workspace = None
    trajectory: list[dict[str, Any]] = []
    outcome: dict[str, Any] = {}
    try:
        workspace = Workspace.create(task)
        with Sandbox(workspace, sandbox.limits, sandbox.backend) as box:
            submission = agent.solve(task, box)
        trajectory = submission.trajectory
        outcome = {
            "answer": submission.answer,
            "finished": submission.finished,
            "stop_reason": submission.stop_reason,
        }
        artifacts = workspace.copy_changed_to(run.artifacts_dir(task.id))
        score = score_submission(
            task,
            submission,
            closed_form_mode=closed_form_mode,
            workspace_mode=workspace_mode,
            workspace=workspace.root,
        )
        record = SampleRecord(
            status="scored", score=score, answer=submission.answer, artifacts=artifacts,
            agent_metrics=submission.metrics(), duration_s=round(time.perf_counter() - clock, 4), **common,
        )  # fmt: skip
    except ModelFatalError:
        raise  # a wrong key, model or URL: the run stops instead of failing every sample
    except Exception as exc:  # the harness failed: a crashed solution, the sandbox, a missing file, a bug
        if isinstance(exc, InfrastructureError):
            trajectory, error = exc.trajectory, str(exc)
        elif isinstance(exc, SandboxError):
            error = f"sandbox: {exc}"
        else:
            error = f"{type(exc).__name__}: {exc}"
        record = SampleRecord(status="error", error=error, duration_s=time.perf_counter() - clock, **common)
    finally:
        if workspace is not None:
            workspace.remove()
    if _stopping.is_set():
        return record
    saved = {"id": task.id, "agent": agent.name, "attempt": attempt, **outcome, "steps": trajectory}
    run.write_trajectory(task.id, saved)
    run.append(record)
    return record


def run_suite(
    suite: Suite,
    agent: Agent,
    out: Path | None,
    *,
    closed_form_mode: str = "normalized",
    workspace_mode: str = "corrected",
    ids: Sequence[str] | None = None,
    limit: int | None = None,
    concurrency: int = 1,
    sandbox: SandboxSettings | None = None,
    console: Console | None = None,
) -> RunOutcome:
    if concurrency < 1:
        raise UserError("--concurrency must be at least 1")
    console = console or Console(stderr=True, soft_wrap=True)
    sandbox = sandbox or SandboxSettings()
    check_backend(sandbox.backend)
    selected = select_tasks(suite.tasks, ids=ids, limit=limit)
    extra = {
        "concurrency": concurrency,
        "sandbox": {"backend": sandbox.backend, "limits": asdict(sandbox.limits)},
    }
    config = run_config(
        suite, agent, {"closed_form_mode": closed_form_mode, "workspace_mode": workspace_mode}, extra
    )
    if out is None:
        out = unfinished_run_dir(config, {task.id for task in selected}) or default_run_dir(
            suite.name, agent.name
        )
    run = RunDir.open_for_writing(out, config)
    latest = run.latest_records()
    pending = [task for task in selected if task.id not in run.finished_ids()]
    skipped = len(selected) - len(pending)
    if skipped:
        console.print(f"resuming {out}: {skipped} of {len(selected)} samples already done")
    else:
        console.print(f"run directory: {out}")
    errors = 0
    _stopping.clear()
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with (
        Progress(*columns, console=console, transient=False, disable=not pending) as progress,
        ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="sample") as pool,
    ):
        bar = progress.add_task(f"{suite.name} · {agent.name}", total=len(pending))
        futures: set[Future[SampleRecord]] = set()
        queue = list(reversed(pending))
        try:
            while queue or futures:
                while queue and len(futures) < concurrency:
                    task = queue.pop()
                    attempt = latest[task.id].attempt + 1 if task.id in latest else 1
                    futures.add(
                        pool.submit(
                            run_sample,
                            task,
                            agent,
                            run,
                            closed_form_mode=closed_form_mode,
                            attempt=attempt,
                            sandbox=sandbox,
                            workspace_mode=workspace_mode,
                        )
                    )
                done, futures = wait(futures, return_when=FIRST_COMPLETED)
                for future in done:
                    try:
                        errors += future.result().status == "error"
                    except ModelFatalError as exc:
                        _stopping.set()
                        for pending_future in futures:
                            pending_future.cancel()
                        kill_all_sandboxes()
                        raise UserError(f"the run stopped: {exc}") from None
                    progress.advance(bar)
        except KeyboardInterrupt:
            _stopping.set()
            for future in futures:
                future.cancel()
            kill_all_sandboxes()
            raise
    return RunOutcome(out, len(selected), skipped, len(pending), errors)
