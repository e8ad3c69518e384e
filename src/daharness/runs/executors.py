"""Sample executors: where a run's samples execute. The runner hands them jobs and writes what comes back.

Every executor runs the same pipeline (`run_sample`) and returns each finished sample to the runner's
thread, which alone writes the run directory; so resume, idempotent records and kill -9 safety do not
depend on where samples ran. `local` runs them in threads of this process; `ray` (ray_executor.py) runs
them as Ray tasks on a cluster. Executors register by name with `@executor(name)` (core.registry).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, ClassVar

from daharness.core.agent import Agent
from daharness.core.backend import SandboxBackend
from daharness.core.errors import UserError
from daharness.core.registry import executor, executors
from daharness.core.runlog import ScoringSettings
from daharness.core.task import Task
from daharness.models import requests_of_epoch
from daharness.runs.pipeline import SampleResult, SandboxSettings, run_sample, start_sandbox
from daharness.sandbox import kill_all_sandboxes


@dataclass(frozen=True)
class SampleJob:
    task: Task
    attempt: int
    epoch: int = 1


@dataclass
class Finished:
    """A job that came back. `final` is False for an attempt lost with its worker, which the executor
    already started again as the next attempt (its error record is written all the same)."""

    job: SampleJob
    result: SampleResult
    final: bool = True


@dataclass(frozen=True)
class ExecutorSettings:
    """Where samples run. The Ray fields are read only by the `ray` executor."""

    name: str = "local"
    ray_address: str | None = None  # None: start a Ray instance on this machine
    num_cpus: float = 1.0  # Ray resources reserved by each sample
    memory_mb: int | None = None
    shared_files: bool = False  # True: every node reads task files at their paths (a shared filesystem)
    lost_worker_retries: int = 1  # a sample whose worker or node died re-runs this often, as a new attempt


@dataclass(frozen=True)
class SampleWork:
    """What every sample of a run shares: how to get the agent, the sandbox and the scoring."""

    agent: Agent
    sandbox: SandboxSettings
    scoring: ScoringSettings
    # builds an equal agent in another process (agents holding clients or connections do not pickle)
    agent_factory: Callable[[], Agent] | None = None


class SampleExecutor(ABC):
    name: ClassVar[str]

    def __init__(self, settings: ExecutorSettings, work: SampleWork, concurrency: int | None) -> None:
        self.settings = settings
        self.work = work
        self.slots = concurrency or 1

    @abstractmethod
    def submit(self, job: SampleJob) -> None: ...

    def prepare(self, task: Task) -> None:  # noqa: B027 - most executors have nothing to prepare
        """`task` is likely the next to be submitted: start what its sample will need, if this executor
        can (a resumed run's first guess may be wrong: the next `prepare` replaces it)."""

    @abstractmethod
    def in_flight(self) -> int: ...

    @abstractmethod
    def wait(self) -> list[Finished]:
        """Block until at least one job in flight comes back; return every one that did."""

    @abstractmethod
    def stop(self) -> None:
        """Abandon every job in flight (Ctrl-C, a fatal model error): their sandboxes are killed and
        their results never come back."""

    @abstractmethod
    def close(self) -> None:
        """Release what the executor holds (threads, a cluster connection)."""


def run_in_epoch(epoch: int, run: Callable[..., SampleResult], *args: Any, **kwargs: Any) -> SampleResult:
    """`run(*args, **kwargs)` (a sample's pipeline) with its model requests keyed on the sample's `epoch`:
    every executor runs a sample through it, so that each repeat of a task asks the model afresh."""
    with requests_of_epoch(epoch):
        return run(*args, **kwargs)


def executor_names() -> list[str]:
    return list(executors)


def make_executor(settings: ExecutorSettings, work: SampleWork, concurrency: int | None) -> SampleExecutor:
    if settings.name not in executors:
        raise UserError(f"--backend: unknown executor {settings.name!r}; known: {', '.join(executors)}")
    return executors.get(settings.name).cls(settings, work, concurrency)  # type: ignore[no-any-return]


@executor("local")
class LocalExecutor(SampleExecutor):
    """Threads of this process, `concurrency` samples at once."""

    def __init__(self, settings: ExecutorSettings, work: SampleWork, concurrency: int | None) -> None:
        super().__init__(settings, work, concurrency)
        self._pool = ThreadPoolExecutor(max_workers=self.slots, thread_name_prefix="sample")
        self._futures: dict[Future[SampleResult], SampleJob] = {}
        self._ahead: tuple[str, SandboxBackend] | None = None  # the next sample's sandbox, starting

    def prepare(self, task: Task) -> None:
        """Start the sandbox of the next sample while the samples in flight run, or while the run makes
        its directory (its start, some 50 ms of waiting on namespaces and mounts, is then off the sample's
        path); one started for another task is closed. Not with a desktop: that is a display, a browser
        and their memory, held for nothing until a slot frees."""
        if self._ahead is not None and self._ahead[0] == task.id:
            return
        self._drop_ahead()  # started for a sample that did not come next (a resumed run's first)
        if task.desktop or self.work.sandbox.desktop:
            return
        try:
            self._ahead = (task.id, start_sandbox(task, self.work.sandbox))
        except Exception:  # the sample makes its own then, and its failure becomes the sample's record
            return

    def submit(self, job: SampleJob) -> None:
        ahead = None
        if self._ahead is not None and self._ahead[0] == job.task.id:
            ahead, self._ahead = self._ahead[1], None
        future = self._pool.submit(
            run_in_epoch,
            job.epoch,
            run_sample,
            job.task,
            self.work.agent,
            sandbox=self.work.sandbox,
            scoring=self.work.scoring,
            attempt=job.attempt,
            ahead=ahead,
        )
        self._futures[future] = job

    def _drop_ahead(self) -> None:
        if self._ahead is not None:
            self._ahead[1].close()
            self._ahead = None

    def in_flight(self) -> int:
        return len(self._futures)

    def wait(self) -> list[Finished]:
        done, _ = wait(self._futures, return_when=FIRST_COMPLETED)
        finished = []
        for future in done:
            job = self._futures.pop(future)
            finished.append(Finished(job, future.result()))  # a fatal model error is raised here
        return finished

    def stop(self) -> None:
        for future in self._futures:
            future.cancel()
        kill_all_sandboxes()
        self._drop_ahead()

    def close(self) -> None:
        self._drop_ahead()
        self._pool.shutdown(wait=True, cancel_futures=True)
        for future in self._futures:
            if future.done() and not future.cancelled() and future.exception() is None:
                future.result().discard()
        self._futures.clear()
