"""Run an agent over a suite: pick the samples still to do, run them concurrently, append records."""

from __future__ import annotations

import gc
import platform
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from daharness import __version__
from daharness.core.agent import Agent
from daharness.core.errors import UserError
from daharness.core.limits import Limits
from daharness.core.record import UNREACHABLE, sample_key
from daharness.core.runlog import RunSpec, ScoringSettings
from daharness.core.suite import Suite
from daharness.core.task import Task
from daharness.models import ModelFatalError, RunModels
from daharness.runs.executors import ExecutorSettings, SampleExecutor, SampleJob, SampleWork, make_executor
from daharness.runs.pipeline import SampleResult, SandboxSettings
from daharness.runs.rundir import RUN_FILE, RunDir
from daharness.runs.selection import TaskRange, select_tasks
from daharness.sandbox import check_backend, check_desktop, describe_isolation, prepare_run
from daharness.sandbox.scratch import process_scratch

_REPORTED_PACKAGES = ("pandas", "numpy", "scipy", "scikit-learn", "pydantic", "matplotlib")
RUNS_ROOT = Path("runs")


class RunStopped(Exception):
    """The run stopped before its end for a reason outside the agent (a model endpoint nothing answers
    at): the samples finished so far are saved, and running the same command resumes."""


@dataclass
class RunOutcome:
    run_dir: Path
    selected: int
    skipped: int
    ran: int
    errors: int


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


def unfinished_run_dir(spec: RunSpec, wanted: set[str], root: Path = RUNS_ROOT) -> Path | None:
    """The newest run under `root` made with the same suite, agent, scoring and sandbox limits that still
    lacks some of the `wanted` sample ids: running the same command without --out resumes it."""
    suffix = _dir_suffix(spec.suite["name"], spec.agent["name"])
    for candidate in sorted(root.glob(f"*-{suffix}"), reverse=True):
        if (candidate / RUN_FILE).is_file() and resume_state(candidate, spec, wanted)[0] == "unfinished":
            return candidate
    return None


def resume_state(folder: Path, spec: RunSpec, wanted: set[str]) -> tuple[str, str | None]:
    """What running `spec` into `folder` would do: "new" (no run there yet), "conflict" (another run is
    there, or an unreadable one; with why), "unfinished" (it resumes) or "finished" (every `wanted`
    sample is done)."""
    if not (folder / RUN_FILE).is_file():
        return "new", None
    run = RunDir(folder)
    try:
        if conflict := run.spec().conflicts_with(spec):
            return "conflict", conflict
        return ("finished" if wanted <= run.finished_ids() else "unfinished"), None
    except UserError as exc:
        return "conflict", str(exc)


def run_spec(
    suite: Suite, agent: Agent, scoring: ScoringSettings, sandbox: SandboxSettings, concurrency: int
) -> RunSpec:
    versions = {}
    for package in _REPORTED_PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return RunSpec(
        daharness_version=__version__,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        suite=suite.describe(),
        suite_spec=suite.reload_spec(),
        agent=agent.describe(),
        scoring=scoring,
        sandbox={
            "backend": sandbox.backend,
            "limits": asdict(sandbox.limits),
            "isolation": describe_isolation(sandbox.backend, sandbox.limits),
        },
        concurrency=concurrency,
        python=sys.version.split()[0],
        platform=platform.platform(),
        packages=versions,
        command=sys.argv,
        **({"model_requests": agent.request_settings()} if hasattr(agent, "request_settings") else {}),
    )


def planned_spec(
    suite: Suite,
    agent: Agent,
    scoring: ScoringSettings,
    sandbox: SandboxSettings,
    concurrency: int = 1,
    *,
    epochs: int = 1,
    labels: dict[str, Any] | None = None,
    sample_shuffle: int | None = None,
    all_tasks: bool = True,
) -> RunSpec:
    """run.json of a run of `suite` with `agent`: what it is (`run_spec`), its epochs, labels and shuffle,
    and the suite's tasks that cannot run here when it takes all of them (`all_tasks`: not --ids)."""
    spec = run_spec(suite, agent, scoring, sandbox, concurrency)
    spec.epochs = epochs
    spec.tags = list((labels or {}).get("tags") or [])
    spec.metadata = dict((labels or {}).get("metadata") or {})
    spec.sample_shuffle = sample_shuffle
    spec.left_out = dict(suite.unsupported) if all_tasks else {}
    return spec


def check_before_samples(suite: Suite, agent: Agent, selected: list[Task], sandbox: SandboxSettings) -> None:
    """What every sample would fail on, said once before the first (a one-line UserError): a desktop the
    sandbox cannot give, and what the agent finds wrong with the run (an agent's optional
    `check_run(suite, tasks)`: a replay of another suite's run)."""
    on_screen = [task.id for task in selected if task.desktop]
    if sandbox.desktop or on_screen:
        try:
            check_desktop(sandbox.backend)
        except UserError as exc:
            shown = ", ".join(on_screen[:5]) + (", ..." if len(on_screen) > 5 else "")
            who = "--desktop" if sandbox.desktop else f"tasks {shown} need a desktop"
            raise UserError(f"{who}: {exc}") from None
    if (check := getattr(agent, "check_run", None)) is not None:
        check(suite, selected)


def record_result(
    run: RunDir, task_id: str, result: SampleResult, limits: Limits | None = None, epoch: int = 1
) -> None:
    """Write one finished sample: artifacts (within the caps of `limits`), trajectory, then the record
    (the commit point). What fails while writing them becomes the sample's own error record, so one
    poisoned sample never stops the run (nor, being an error, keeps a resume from trying it again).
    A repeat of the task (`epoch` above 1) is kept under its own key (`sample_key`)."""
    key = sample_key(task_id, epoch)
    result.record.epoch = epoch
    result.trajectory.id = key
    try:
        try:
            if result.snapshot is not None:
                _keep_artifacts(run, key, result, limits or Limits())
            run.write_attachments(key, result.attachments)
            run.write_trajectory(result.trajectory)
            run.append(result.record)
        except Exception as exc:
            result.record = result.record.model_copy(
                update={
                    "status": "error",
                    "error": f"recording the sample failed: {type(exc).__name__}: {exc}",
                    "score": None,
                    "answer": None,
                    "artifacts": [],
                }
            )
            run.append(result.record)
    finally:
        result.discard()


def _keep_artifacts(run: RunDir, sample_id: str, result: SampleResult, limits: Limits) -> None:
    """Save the agent's files within the artifact caps; the record lists what was kept and says what
    was not."""
    assert result.snapshot is not None
    saved = run.save_artifacts(
        sample_id, result.snapshot, max_files=limits.artifact_files, max_bytes=limits.artifact_mb << 20
    )
    result.record.artifacts = saved.names
    notices = result.record.extra.setdefault("notices", [])
    if saved.left_out:
        notices.append(
            f"{len(saved.left_out)} files not kept in artifacts/ (caps: {limits.artifact_files} files, "
            f"{limits.artifact_mb} MB), e.g. {', '.join(saved.left_out[:5])}"
        )
    if saved.failed:
        notices.append(f"{len(saved.failed)} files could not be saved: {', '.join(saved.failed[:5])}")
    if not notices:
        del result.record.extra["notices"]


_startup_frozen = False


def keep_startup_objects_out_of_collections() -> None:
    """Once per process, before its first run's samples: what is alive by then (modules, classes, the
    openai SDK's hundreds of models, the suite) stays alive, so the cyclic garbage collector is told not
    to walk it again (gc.freeze). Otherwise a full collection over it stops every thread of the process
    for about 0.15 s in the middle of the run's first burst of samples (measured at -j 16)."""
    global _startup_frozen
    if not _startup_frozen:
        _startup_frozen = True
        gc.freeze()


def run_suite(
    suite: Suite,
    agent: Agent,
    out: Path | None,
    *,
    scoring: ScoringSettings | None = None,
    ids: Sequence[str] | None = None,
    limit: int | str | TaskRange | None = None,
    concurrency: int | None = 1,
    sandbox: SandboxSettings | None = None,
    console: Console | None = None,
    executor: ExecutorSettings | None = None,
    agent_factory: Callable[[], Agent] | None = None,
    stop_after_unreachable: int = 3,
    epochs: int = 1,
    labels: dict[str, Any] | None = None,
    models: RunModels | None = None,
    sample_shuffle: int | None = None,
) -> RunOutcome:
    """Run the selected tasks of `suite` with `agent` into the run directory `out` (resuming it).

    `executor` chooses where samples run (default: threads of this process); `concurrency` None lets
    the executor choose (Ray: as many samples as the cluster has room for). `agent_factory` builds the
    agent in other processes, for executors that need one. After `stop_after_unreachable` samples in a
    row could not connect to their model endpoint, the run stops with RunStopped (0: never). Each task
    runs `epochs` times; `labels` (tags, metadata) are recorded in run.json; `sample_shuffle` seeds the
    order of the tasks before `limit` (a count, or a range `A-B` counted from 1). `models`, the models the agent
    asks: before the first sample, the run stops (RunStopped) if nothing answers at one of their endpoints,
    and says what their response cache will answer."""
    if concurrency is not None and concurrency < 1:
        raise UserError("--concurrency must be at least 1")
    console = console or Console(stderr=True, soft_wrap=True)
    sandbox = sandbox or SandboxSettings()
    scoring = scoring or ScoringSettings()
    executor = executor or ExecutorSettings()
    check_backend(sandbox.backend)
    if executor.name == "local":  # the samples run in this process's threads
        prepare_run(sandbox.backend, sandbox.limits)
        keep_startup_objects_out_of_collections()
    process_scratch()  # makes this process's scratch folder, and removes those of dead runs
    selected = select_tasks(
        suite.tasks, ids=ids, limit=limit, shuffle=sample_shuffle, unsupported=suite.unsupported
    )
    check_before_samples(suite, agent, selected, sandbox)
    work = SampleWork(agent, sandbox, scoring, agent_factory)
    samples = make_executor(executor, work, concurrency)
    try:
        if selected:  # its sandbox starts while the run's directory is made (a resumed run may drop it)
            samples.prepare(selected[0])
        spec = planned_spec(
            suite, agent, scoring, sandbox, samples.slots,
            epochs=epochs, labels=labels, sample_shuffle=sample_shuffle, all_tasks=ids is None,
        )  # fmt: skip
        if executor.name != "local":
            spec.executor = {"name": executor.name, "address": executor.ray_address}  # type: ignore[attr-defined]
        if out is None:
            wanted = {sample_key(task.id, epoch) for task in selected for epoch in range(1, epochs + 1)}
            out = unfinished_run_dir(spec, wanted) or default_run_dir(suite.name, agent.name)
        run = RunDir.open_for_writing(out, spec)
        jobs = [(task, epoch) for epoch in range(1, epochs + 1) for task in selected]
        return _run_pending(
            run,
            jobs,
            samples,
            f"{suite.name} · {agent.name}",
            console,
            sandbox.limits,
            stop_after_unreachable,
            models,
        )
    finally:
        samples.close()


def _run_pending(
    run: RunDir,
    selected: list[tuple[Task, int]],
    samples: SampleExecutor,
    title: str,
    console: Console,
    limits: Limits,
    stop_after_unreachable: int,
    models: RunModels | None = None,
) -> RunOutcome:
    latest, finished = run.latest_records(), run.finished_ids()  # each reads samples.jsonl: once here
    pending = [(task, epoch) for task, epoch in selected if sample_key(task.id, epoch) not in finished]
    skipped = len(selected) - len(pending)
    if skipped:
        console.print(f"resuming {run.root}: {skipped} of {len(selected)} samples already done")
    else:
        console.print(f"run directory: {run.root}")
    if pending and models is not None:  # a run with nothing left to do asks no model
        if problem := models.unreachable():
            raise RunStopped(problem)
        if notice := models.cache_notice(max(epoch for _, epoch in pending)):
            console.print(notice, markup=False, highlight=False)
    errors = unreachable_in_a_row = 0
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    # a bar that counts samples and seconds needs no more than 4 redraws a second (rich draws 10 by
    # default, in a thread that takes the GIL from the samples)
    with Progress(
        *columns, console=console, transient=False, disable=not pending, refresh_per_second=4
    ) as progress:
        bar = progress.add_task(title, total=len(pending))
        queue = list(reversed(pending))
        try:
            while queue or samples.in_flight():
                while queue and samples.in_flight() < samples.slots:
                    task, epoch = queue.pop()
                    key = sample_key(task.id, epoch)
                    attempt = latest[key].attempt + 1 if key in latest else 1
                    samples.submit(SampleJob(task, attempt, epoch))
                if queue:
                    samples.prepare(queue[-1][0])
                for finished in samples.wait():
                    job = finished.job
                    record_result(run, job.task.id, finished.result, limits, job.epoch)
                    if finished.final:
                        record = finished.result.record
                        errors += record.status == "error"
                        unreachable_in_a_row = (
                            unreachable_in_a_row + 1 if record.extra.get(UNREACHABLE) else 0
                        )
                        progress.advance(bar)
                        if unreachable_in_a_row == stop_after_unreachable:
                            raise RunStopped(
                                f"{unreachable_in_a_row} samples in a row could not connect to the model "
                                f"endpoint ({record.error}); the samples finished are saved: run the same "
                                "command to resume"
                            )
        except ModelFatalError as exc:
            samples.stop()
            raise UserError(f"the run stopped: {exc}") from None
        except RunStopped:
            samples.stop()  # samples in flight are not recorded: a resume redoes them
            raise
        except KeyboardInterrupt:
            samples.stop()  # samples in flight are not recorded: a resume redoes them
            raise
    return RunOutcome(run.root, len(selected), skipped, len(pending), errors)
