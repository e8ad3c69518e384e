"""The `ray` executor: each sample is a Ray task that runs the usual pipeline on a worker node.

A worker starts its sandboxes locally (bwrap on that node) and sends back the record, the trajectory and
the files the agent created or changed; the runner, on the driver, writes them. The task's files travel
with the task through Ray's object store, once per file and run (or, with `shared_files`, are read at
their paths, for clusters that mount the same filesystem everywhere).

A sample whose worker process or node dies is recorded as an `error` attempt and started once more as the
next attempt (`lost_worker_retries`); Ray's own retries are off so that every attempt is on record.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import socket
import sys
import tarfile
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from daharness.core.agent import Agent
from daharness.core.backend import SkippedEntry, Snapshot
from daharness.core.errors import UserError
from daharness.core.record import SampleRecord, sample_key
from daharness.core.registry import executor
from daharness.core.runlog import ScoringSettings, TrajectoryFile, file_safe
from daharness.core.task import Task
from daharness.models import ModelFatalError
from daharness.runs.executors import (
    ExecutorSettings,
    Finished,
    SampleExecutor,
    SampleJob,
    SampleWork,
    run_in_epoch,
)
from daharness.runs.pipeline import SampleResult, SandboxSettings, record_fields, run_sample

if TYPE_CHECKING:
    from ray import ObjectRef

# seconds a cancelled sample gets to close its sandboxes before its worker process is killed
_CANCEL_GRACE_S = 20.0
_WAIT_POLL_S = 0.5  # ray.wait in short slices, so that Ctrl-C reaches the driver at once


def _import_ray() -> Any:
    _prepare_connection()  # Ray reads these when it is imported
    try:
        import ray
    except ImportError:
        raise UserError(
            "--backend ray needs Ray: pip install 'daharness[ray]' (and the same on every node)"
        ) from None
    return ray


def _prepare_connection() -> None:
    """Settings of Ray's own that it reads from the environment when the driver connects.

    Ray (2.5x on) starts new clusters with token authentication; a driver gives the token with
    RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH, but Ray turns its token mode on by itself only for a cluster it
    finds on this machine. A token given means the cluster wants one, so the mode follows it. Ray's C++
    core prints a warning a second while it cannot connect; the error we raise says it in one line.
    """
    token_given = os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH")
    if token_given and "RAY_AUTH_MODE" not in os.environ:
        os.environ["RAY_AUTH_MODE"] = "token"
    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "error")


def _authentication_errors(ray: Any) -> tuple[type[BaseException], ...]:
    found = getattr(ray.exceptions, "AuthenticationError", None)  # Ray 2.5x on
    return (found,) if found else ()


_NO_TOKEN_HINT = (
    " (a cluster that requires a token, as Ray 2.5x and later start them, refuses a driver without it: "
    "give its token file with RAY_AUTH_TOKEN_PATH=PATH or the token with RAY_AUTH_TOKEN)"
)


def _check_cluster_answers(address: str | None) -> None:
    """ray.init retries a HOST:PORT where nothing listens for minutes without a word to the user: try
    the port first and say at once what is wrong (other forms, like 'auto', are left to Ray)."""
    host, _, port = (address or "").rpartition(":")
    if not host or not port.isdigit():
        return
    try:
        socket.create_connection((host, int(port)), timeout=10).close()
    except OSError as exc:
        raise UserError(
            f"--ray-address {address}: no Ray cluster answers there ({exc.strerror or exc})"
        ) from None


# ---- what travels -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PackedPath:
    """One task file or folder in the object store, named by its content."""

    digest: str
    name: str
    is_dir: bool
    data: ObjectRef


@dataclass(frozen=True)
class ShippedWork:
    """What every sample of a run shares, as a worker receives it."""

    token: str  # one per run: a worker builds the run's agent once and keeps it
    agent: Agent | None
    agent_factory: Any
    sandbox: SandboxSettings
    scoring: ScoringSettings


@dataclass
class ShippedResult:
    """A finished sample on its way back to the driver: the collected files travel as bytes."""

    record: SampleRecord
    trajectory: TrajectoryFile
    files: dict[str, bytes] = field(default_factory=dict)
    captures: dict[str, bytes] = field(default_factory=dict)  # the chart captures the harness received
    attachments: dict[str, bytes] = field(default_factory=dict)  # what the harness made for the record


def _pack(path: Path) -> tuple[str, bool, bytes]:
    if path.is_dir():
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as archive:
            archive.add(path, arcname=".")
        data, is_dir = buffer.getvalue(), True
    else:
        data, is_dir = path.read_bytes(), False
    return hashlib.sha256(data).hexdigest(), is_dir, data


def task_paths(task: Task) -> list[Path]:
    """Every host path a sample reads: the files the agent gets, the hidden gold files and the folders of
    its private libraries."""
    return [item.source for item in [*task.files, *task.gold.files, *task.libraries]]


def relocated(task: Task, places: dict[str, Path]) -> Task:
    """The task with each file's host path replaced by where it was unpacked on this node."""
    moved = task.model_copy(deep=True)
    for item in [*moved.files, *moved.gold.files, *moved.libraries]:
        item.source = places[str(item.source)]
    return moved


def _unpack(packed: PackedPath, data: bytes) -> Path:
    """The content on this node's disk, unpacked once per node and kept for later samples and runs."""
    home = Path(tempfile.gettempdir()) / "daharness-ray-files" / packed.digest
    target = home / packed.name
    if target.exists():
        return target
    home.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{packed.digest[:12]}-", dir=home.parent))
    try:
        if packed.is_dir:
            with tarfile.open(fileobj=io.BytesIO(data)) as archive:
                archive.extractall(staging / packed.name, filter="data")
        else:
            (staging / packed.name).write_bytes(data)
        with contextlib.suppress(OSError):  # another worker of this node unpacked it first
            os.rename(staging, home)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


# ---- on the worker ----------------------------------------------------------------------------------

_agents: dict[str, Agent] = {}


def _agent_for(work: ShippedWork) -> Agent:
    if work.token not in _agents:
        _agents[work.token] = work.agent if work.agent is not None else work.agent_factory()
    return _agents[work.token]


def run_on_worker(
    work: ShippedWork, task: Task, attempt: int, packed: list[PackedPath], epoch: int = 1
) -> ShippedResult:
    """The body of a sample's Ray task."""
    ray = _import_ray()
    if packed:
        contents = ray.get([item.data for item in packed])
        places = {}
        for item, data, original in zip(packed, contents, task_paths(task), strict=True):
            places[str(original)] = _unpack(item, data)
        task = relocated(task, places)
    agent = _agent_for(work)
    result = run_in_epoch(
        epoch, run_sample, task, agent, sandbox=work.sandbox, scoring=work.scoring, attempt=attempt
    )
    try:
        files, captures = {}, {}
        if result.snapshot is not None:
            files = {name: (result.snapshot.root / name).read_bytes() for name in result.snapshot.changed}
            if result.snapshot.captures is not None:
                captures = {p.name: p.read_bytes() for p in result.snapshot.captures.iterdir() if p.is_file()}
        return ShippedResult(result.record, result.trajectory, files, captures, result.attachments)
    finally:
        result.discard()


def unshipped(shipped: ShippedResult) -> SampleResult:
    """The driver's SampleResult for a shipped one: its files in a local scratch folder."""
    snapshot = None
    skipped = tuple(SkippedEntry(e.path, e.kind, e.target) for e in shipped.record.skipped_files)  # type: ignore[arg-type]
    if shipped.files or shipped.captures or skipped:
        scratch = Path(tempfile.mkdtemp(prefix=f"daharness-shipped-{file_safe(shipped.record.id)[:40]}-"))
        (scratch / "files").mkdir()
        for name, data in shipped.files.items():
            target = scratch / "files" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        captures = scratch / "files-captures"
        captures.mkdir()
        for name, data in shipped.captures.items():
            (captures / name).write_bytes(data)
        names = tuple(shipped.files)
        snapshot = Snapshot(
            root=scratch / "files", files=frozenset(names), changed=names, skipped=skipped, captures=captures
        )
    return SampleResult(
        shipped.record, shipped.trajectory, snapshot=snapshot, attachments=shipped.attachments
    )


# ---- on the driver ----------------------------------------------------------------------------------


@contextlib.contextmanager
def _stderr_held() -> Iterator[Callable[[], str]]:
    """Hold what is written to file descriptor 2 (Ray's C++ core writes there directly, a warning a second
    while it cannot connect); the caller decides whether the user sees it."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            yield lambda: (held.seek(0), held.read().decode(errors="replace"))[1]
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


def _connect(ray: Any, address: str | None) -> None:
    with _stderr_held() as said:
        try:
            ray.init(address=address, logging_level="ERROR", log_to_driver=False, configure_logging=True)
        except (ConnectionError, ValueError) as exc:  # no cluster there; an address Ray cannot parse
            hint = _NO_TOKEN_HINT if isinstance(exc, ConnectionError) else ""
            raise UserError(f"--ray-address {address}: {exc}{hint}") from None
        except _authentication_errors(ray) as exc:  # token mode on, but no token to be found
            raise UserError(f"--ray-address {address}: {str(exc).strip().splitlines()[0]}") from None
        except BaseException:
            sys.stderr.write(said())  # an unexpected failure keeps everything Ray said
            raise


@executor("ray")
class RayExecutor(SampleExecutor):
    """Ray tasks on a cluster (`ray_address`), or on a Ray instance started on this machine."""

    def __init__(self, settings: ExecutorSettings, work: SampleWork, concurrency: int | None) -> None:
        super().__init__(settings, work, concurrency)
        self._ray = ray = _import_ray()
        if settings.num_cpus <= 0:
            raise UserError("--ray-num-cpus must be above 0")
        if not ray.is_initialized():
            _check_cluster_answers(settings.ray_address)
            _connect(ray, settings.ray_address)
            self._owns_connection = True
        else:
            self._owns_connection = False
        if concurrency is None:
            cpus = ray.cluster_resources().get("CPU", 1.0)
            self.slots = max(1, int(cpus // settings.num_cpus))
        self._shipped = ray.put(self._work_for_workers(work))
        resources: dict[str, Any] = {"num_cpus": settings.num_cpus}
        if settings.memory_mb:
            resources["memory"] = settings.memory_mb * 2**20
        self._remote = ray.remote(run_on_worker).options(**resources, max_retries=0, name="daharness-sample")
        self._packed: dict[str, PackedPath] = {}
        self._refs: dict[ObjectRef, SampleJob] = {}
        self._lost: dict[str, int] = {}  # sample id -> attempts lost with their worker

    def _work_for_workers(self, work: SampleWork) -> ShippedWork:
        import cloudpickle

        token = uuid.uuid4().hex
        try:  # an agent that pickles travels as it is; one holding clients is rebuilt by its factory
            cloudpickle.dumps(work.agent)
            agent = work.agent
        except Exception:
            agent = None
        if agent is None and work.agent_factory is None:
            raise UserError(f"agent {work.agent.name} cannot be sent to Ray workers (it does not pickle)")
        return ShippedWork(token, agent, work.agent_factory, work.sandbox, work.scoring)

    def _packed_files(self, task: Task) -> list[PackedPath]:
        if self.settings.shared_files:
            return []
        packed = []
        for path in task_paths(task):
            key = str(path)
            if key not in self._packed:
                try:
                    digest, is_dir, data = _pack(path)
                except OSError as exc:
                    raise UserError(f"task {task.id}: cannot read {path}: {exc.strerror}") from None
                self._packed[key] = PackedPath(digest, path.name, is_dir, self._ray.put(data))
            packed.append(self._packed[key])
        return packed

    def submit(self, job: SampleJob) -> None:
        ref = self._remote.remote(
            self._shipped, job.task, job.attempt, self._packed_files(job.task), job.epoch
        )
        self._refs[ref] = job

    def in_flight(self) -> int:
        return len(self._refs)

    def wait(self) -> list[Finished]:
        ray = self._ray
        done: list[ObjectRef] = []
        while not done:
            done, _ = ray.wait(list(self._refs), num_returns=1, timeout=_WAIT_POLL_S)
        done, _ = ray.wait(list(self._refs), num_returns=len(self._refs), timeout=0)
        finished = []
        for ref in done:
            job = self._refs.pop(ref)
            try:
                shipped = ray.get(ref)
            except ray.exceptions.RayTaskError as exc:  # raised in the task's own code
                if isinstance(exc.cause, ModelFatalError):
                    raise exc.cause from None
                finished.append(self._failed(job, exc, retry=False))
                continue
            except (ray.exceptions.RayError, OSError) as exc:  # the worker, its node or its result was lost
                finished.append(self._failed(job, exc, retry=True))
                continue
            finished.append(Finished(job, unshipped(shipped)))
        return finished

    def _failed(self, job: SampleJob, exc: BaseException, *, retry: bool) -> Finished:
        """An error record for an attempt that brought no result back; a lost worker's sample starts
        again as the next attempt (once, by default)."""
        if retry:
            lost = self._lost.get(sample_key(job.task.id, job.epoch), 0) + 1
            self._lost[sample_key(job.task.id, job.epoch)] = lost
            retry = lost <= self.settings.lost_worker_retries
        cause = exc.cause if isinstance(exc, self._ray.exceptions.RayTaskError) and exc.cause else exc
        text = str(cause).strip()
        reason = text.splitlines()[-1] if text else ""
        what = "the sample's worker was lost" if isinstance(exc, self._lost_errors()) else "the sample failed"
        record = SampleRecord(
            status="error",
            error=f"ray: {what} ({type(cause).__name__}: {reason})",
            started_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
            duration_s=0.0,
            **record_fields(job.task, self.work.agent.name, job.attempt),
        )
        trajectory = TrajectoryFile(id=job.task.id, agent=self.work.agent.name, attempt=job.attempt)
        if retry:
            self.submit(SampleJob(job.task, job.attempt + 1, job.epoch))
        return Finished(job, SampleResult(record, trajectory), final=not retry)

    def _lost_errors(self) -> tuple[type[BaseException], ...]:
        errors = self._ray.exceptions
        return (
            errors.WorkerCrashedError,
            errors.NodeDiedError,
            errors.ObjectLostError,
            errors.RaySystemError,
        )

    def stop(self) -> None:
        ray = self._ray
        refs = list(self._refs)
        for ref in refs:  # KeyboardInterrupt inside the task: its sandboxes close as after Ctrl-C
            ray.cancel(ref, force=False)
        _, still_running = (
            ray.wait(refs, num_returns=len(refs), timeout=_CANCEL_GRACE_S) if refs else ([], [])
        )
        for ref in still_running:  # the worker process is killed; bwrap --die-with-parent takes its sandbox
            ray.cancel(ref, force=True)
        self._refs.clear()

    def close(self) -> None:
        self._refs.clear()
        if self._owns_connection:
            self._ray.shutdown()
