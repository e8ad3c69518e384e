"""Scoring worker processes: where host-side scorers read agent files under a memory and CPU cap.

A worker is a fresh interpreter (`python -m daharness.runs.score_worker`) that imports the scorers
once, then, for each job, forks a child that sets its rlimits, scores and sends the score back; a
runaway child takes nothing but itself down, and the worker stays clean for the next job. The harness
keeps a small pool of idle workers (one per job in flight at most) and kills a worker whose job
outlives its wall-time limit. Jobs and results travel as length-prefixed pickles on the worker's
stdin and stdout; a worker exits when its stdin closes (the harness exited, or was killed).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import pickle
import resource
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from typing import IO, Any

_HEADER = struct.Struct("!Q")
_START_TIMEOUT_S = 120.0  # a worker's imports, on a busy machine
# ("ok", Score) | ("memory", "") | ("error", text) | ("died", exit code) | ("time", "") | ("worker", code)
Outcome = tuple[str, Any]


# ---- the worker (runs in its own interpreter) ------------------------------------------------------


def _serve() -> None:
    from daharness.core.registry import discover

    # every family's scorers (and pandas with them) and plugins' entry points, once here rather than in
    # every job's child
    discover()

    jobs, results = sys.stdin.buffer, sys.stdout.buffer
    _send(results, "ready")  # the imports are done: a job's time starts counting now
    while (job := _receive(jobs)) is not None:
        _send(results, _run_job(*job))


def _run_job(
    paths: list[str], modules: list[str], arguments: tuple[Any, ...], memory: int, cpu: int
) -> Outcome:
    for path in paths:
        if path not in sys.path:
            sys.path.append(path)
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: limits, score, answer, exit
        os.close(reader)
        outcome = _score_limited(modules, arguments, memory, cpu)
        with os.fdopen(writer, "wb") as out:
            try:
                pickle.dump(outcome, out)
            except Exception as exc:  # e.g. MemoryError while pickling a huge score
                pickle.dump(("error", f"the score could not be sent back: {type(exc).__name__}"), out)
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as answer:
        data = answer.read()
    _, status = os.waitpid(pid, 0)
    if data:
        with contextlib.suppress(Exception):
            return pickle.loads(data)
    return ("died", os.waitstatus_to_exitcode(status))


def _score_limited(modules: list[str], arguments: tuple[Any, ...], memory: int, cpu: int) -> Outcome:
    # the data cap counts what this process holds already (the scorers' imports) plus the allowance
    held = _data_bytes()
    resource.setrlimit(resource.RLIMIT_DATA, (held + memory, held + memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
    try:
        for module in modules:  # plugins' scorers register when their module is imported
            importlib.import_module(module)
        from daharness.scoring import score_submission

        return ("ok", score_submission(*arguments))
    except MemoryError:
        return ("memory", "")
    except Exception as exc:
        return ("error", f"{type(exc).__name__}: {exc}")


def _data_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmData:"):
                return int(line.split()[1]) * 1024
    return 0


def _send(stream: IO[bytes], value: Any) -> None:
    data = pickle.dumps(value)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    return pickle.loads(stream.read(size))


# ---- the harness side ------------------------------------------------------------------------------


class _Worker:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "daharness.runs.score_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # what scorers print is not the harness's output
            start_new_session=True,  # so that a kill takes its scoring child too
        )
        self.ready = False

    def run(self, job: tuple[Any, ...], timeout_s: float) -> Outcome:
        assert self.process.stdin is not None
        if not self.ready:
            greeting = self._read(_START_TIMEOUT_S)
            if greeting != "ready":
                return greeting if greeting[0] == "worker" else ("worker", f"no greeting: {greeting}")
            self.ready = True
        try:
            _send(self.process.stdin, job)
        except OSError:
            return ("worker", self.process.poll())
        return self._read(timeout_s)

    def _read(self, timeout_s: float) -> Any:
        """The next message, ("time", "") after `timeout_s` (the worker is killed then), or ("worker",
        exit code) when the worker is gone."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        buffer = b""
        size: int | None = None
        while size is None or len(buffer) < _HEADER.size + size:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                return ("time", "")
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:  # the worker itself is gone (not its scoring child): the harness's failure
                return ("worker", self.process.wait())
            buffer += chunk
            if size is None and len(buffer) >= _HEADER.size:
                (size,) = _HEADER.unpack(buffer[: _HEADER.size])
        return pickle.loads(buffer[_HEADER.size :])

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                stream.close()  # type: ignore[union-attr]

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.process.stdin.close()  # type: ignore[union-attr]
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()


_idle: list[_Worker] = []
_idle_lock = threading.Lock()


def score_in_worker(
    modules: list[str], arguments: tuple[Any, ...], *, memory_mb: int, seconds: float
) -> Outcome:
    """Score in a worker's child with `memory_mb` of data memory and `seconds` of CPU and wall time."""
    with _idle_lock:
        worker = _idle.pop() if _idle else None
    if worker is None:
        worker = _Worker()
    job = (list(sys.path), modules, arguments, memory_mb << 20, max(1, int(seconds)))
    outcome = worker.run(job, seconds)
    if worker.process.poll() is None:
        with _idle_lock:
            _idle.append(worker)
    return outcome


@atexit.register
def _close_workers() -> None:
    with _idle_lock:
        workers, _idle[:] = list(_idle), []
    for worker in workers:
        worker.close()


if __name__ == "__main__":
    _serve()
