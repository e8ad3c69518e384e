"""Scoring worker processes: where scorers read what an agent left, confined like a sandbox and under a
memory and CPU cap.

A worker is a fresh interpreter running this module (`_worker_command`). Unless scoring is unconfined
(`--sandbox unsafe-local`), it runs in bubblewrap (`sandbox.bwrap.confined_command`): no network, the
system and Python read-only, a private /tmp, and of the host nothing but daharness's code, the folders
of plugins' scorers and one folder of inputs, into which the harness links each job's files
(`scoring_inputs.py`); when daharness runs as root, the worker becomes a sandbox user id of its own.
It imports the scorers once, then, for each job, forks a child that sets its rlimits, scores and writes
the score back (the libraries a child imported, numpy, pandas, scikit-learn..., the worker imports after
it, so that the next children start with them); a runaway child takes nothing but itself down, and the
worker stays clean for the next job. The harness keeps a small pool of idle workers (one per job in
flight at most) and kills a worker whose job outlives its wall-time limit.

Jobs travel to the worker as length-prefixed pickles (the harness's own objects: the worker trusts its
harness, and unpickles only daharness's classes and plain types, `_JobUnpickler`); outcomes come back
as length-prefixed JSON of at most MAX_REPLY_BYTES, so that nothing a scorer produced from agent data is
ever unpickled, or read without a bound, by the harness. A worker exits when its stdin closes (the
harness exited, or was killed).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import io
import json
import os
import pickle
import resource
import select
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

from daharness.core.exits import wait_for_exit
from daharness.core.limits import Limits
from daharness.sandbox.workspace import remove_tree

_HEADER = struct.Struct("!Q")
_START_TIMEOUT_S = 120.0  # a worker's imports, on a busy machine
MAX_REPLY_BYTES = (8 << 20) + (1 << 16)  # a score's JSON (scoring.apply.MAX_SCORE_BYTES) and its frame
_FILE_BYTES = 64 << 20  # largest file a scoring child may write (in its private /tmp)
_PROCESSES = 256  # processes and threads of a worker's own user id
_own_user = False  # the worker runs as a sandbox user id of its own (daharness runs as root)
# [kind, payload]: ["ok", score] | ["memory", ""] | ["time", ""] | ["died", exit code]
# | ["unsendable", why] | ["harness", why] | ["worker", why]
Outcome = tuple[str, Any]


# ---- the worker (runs in its own interpreter) ------------------------------------------------------


def _serve(uid: int | None) -> None:
    global _own_user
    if uid is not None:  # root: become the worker's own unprivileged id before reading anything
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        _own_user = True
    from daharness.core.registry import discover

    # every family's scorers and plugins' entry points, once here rather than in every job's child
    discover()

    jobs, results = sys.stdin.buffer, sys.stdout.buffer
    _send(results, json.dumps(["ready", ""]).encode())  # the imports are done: a job's time starts now
    while (job := _receive(jobs)) is not None:
        reply, learned = _run_job(*job)
        _send(results, reply)
        _preload(learned)


# The libraries scorers import when they first score (the families register without them). A job's child
# names those it imported, and the worker imports them after replying, so that the next jobs' children
# start with them: numpy, pandas, scikit-learn, SciPy and scikit-image took a child about 0.35 s of CPU.
_LIBRARIES = frozenset(
    {"numpy", "pandas", "scipy", "sklearn", "skimage", "PIL", "rapidfuzz", "json5", "openpyxl"}
)
_LEARNED_BYTES = 1 << 16


def _library(name: str) -> bool:
    """A module of one of _LIBRARIES, at most one level down (importing it imports what it needs)."""
    return name.partition(".")[0] in _LIBRARIES and name.count(".") <= 1


def _preload(names: list[str]) -> None:
    for name in names:
        if _library(name) and name not in sys.modules:
            with contextlib.suppress(Exception):
                importlib.import_module(name)


def _run_job(
    paths: list[str], call: str, modules: list[str], arguments: tuple[Any, ...], memory: int, cpu: int
) -> tuple[bytes, list[str]]:
    """The job's outcome, and the libraries its child imported (see _LIBRARIES)."""
    for path in paths:
        if path not in sys.path:
            sys.path.append(path)
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: limits, score, answer (after the line naming what it imported), exit
        os.close(reader)
        with os.fdopen(writer, "wb") as out:
            before = set(sys.modules)
            reply = _score_limited(call, modules, arguments, memory, cpu)
            learned = sorted(name for name in set(sys.modules) - before if _library(name))
            out.write(json.dumps(learned).encode()[:_LEARNED_BYTES] + b"\n" + reply)
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as answer:
        learned_line = answer.readline(_LEARNED_BYTES + 1)
        data = answer.read(MAX_REPLY_BYTES + 1)
        if len(data) > MAX_REPLY_BYTES:  # it would block writing the rest: stop it
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    try:
        learned = [name for name in json.loads(learned_line) if isinstance(name, str)]
    except (ValueError, TypeError):  # cut short (the child died) or too long: nothing learned
        learned = []
    if len(data) > MAX_REPLY_BYTES:
        why = f"the score takes more than {MAX_REPLY_BYTES >> 20} MB"
        return json.dumps(["unsendable", why]).encode(), learned
    return data or json.dumps(["died", os.waitstatus_to_exitcode(status)]).encode(), learned


def _score_limited(call: str, modules: list[str], arguments: tuple[Any, ...], memory: int, cpu: int) -> bytes:
    if (numpy := sys.modules.get("numpy")) is not None:  # a new process's seeds (`random` reseeds at fork)
        numpy.random.seed()
    # the data cap counts what this process holds already (the scorers' imports) plus the allowance
    held = _data_bytes()
    resource.setrlimit(resource.RLIMIT_DATA, (held + memory, held + memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
    resource.setrlimit(resource.RLIMIT_FSIZE, (_FILE_BYTES, _FILE_BYTES))  # only its private /tmp is writable
    if _own_user:  # the count is of this id's processes (threads included): a fork bomb stops here
        resource.setrlimit(resource.RLIMIT_NPROC, (_PROCESSES, _PROCESSES))
    try:
        for module in modules:  # plugins' scorers register when their module is imported
            importlib.import_module(module)
        module_name, _, name = call.partition(":")
        score = getattr(importlib.import_module(module_name), name)(*arguments)
        from daharness.core.jsonl import json_text

        return b'["ok", ' + json_text(score).encode() + b"]"  # the score's JSON as it is, not quoted
    except MemoryError:
        return json.dumps(["memory", ""]).encode()
    except Exception as exc:  # outside the scorers (apply.py handles theirs): the harness's failure
        from daharness.scoring.apply import describe

        return json.dumps(["harness", describe(exc)]).encode()


def _data_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmData:"):
                return int(line.split()[1]) * 1024
    return 0


def _send(stream: IO[bytes], data: bytes) -> None:
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    return _JobUnpickler(io.BytesIO(stream.read(size))).load()  # a job: the harness's own objects


# What a job's pickle may name: daharness's own classes and the plain types they are made of. A pickle
# can call any global it names; the harness writes the jobs, and this keeps it so even if something else
# ever reached the pipe (a name outside these fails the job, and the worker says which).
_JOB_MODULES = ("daharness.", "pydantic.", "pydantic_core.")
_JOB_GLOBALS = {
    "builtins": {"set", "frozenset", "bytearray", "complex", "slice", "range", "object"},
    "copyreg": {"_reconstructor", "__newobj__", "__newobj_ex__"},
    "collections": {"OrderedDict", "defaultdict", "deque"},
    "pathlib": {"PosixPath", "PurePosixPath", "Path"},
    "datetime": {"datetime", "date", "time", "timedelta", "timezone"},
    "decimal": {"Decimal"},
    "uuid": {"UUID"},
    "enum": {"Enum"},
}


class _JobUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module.startswith(_JOB_MODULES) or name in _JOB_GLOBALS.get(module, ()):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"a scoring job may not name {module}.{name}")


# ---- the harness side ------------------------------------------------------------------------------


# A confined worker (-I: no PYTHONPATH) imports the daharness the harness runs, the only copy mounted
# for it, also where that copy is found through PYTHONPATH rather than installed (its folder goes first
# only then: an installed copy's site-packages keeps its place after the standard library)
_CONFINED_START = """import runpy, sys
if {root!r} not in sys.path:
    sys.path.insert(0, {root!r})
runpy.run_module("daharness.runs.score_worker", run_name="__main__")
"""


def _worker_command(*, confined: bool) -> list[str]:
    """The interpreter running this module: unconfined, as the harness's own environment finds it."""
    if not confined:
        return [sys.executable, "-m", "daharness.runs.score_worker"]
    root = str(Path(__file__).resolve().parents[2])
    return [sys.executable, "-I", "-c", _CONFINED_START.format(root=root)]


# A confined worker's private /tmp and /dev/shm (memory of the host: kept small; matplotlib's cache)
_LIMITS = Limits(tmp_mb=64, shm_mb=16)
# Workers are started from one long-lived thread: bubblewrap kills its sandbox when the thread that
# started it ends (PR_SET_PDEATHSIG), and an idle worker outlives the thread of the sample it served.
_spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="daharness-scoring-spawner")


class _Worker:
    """One worker process. Confined, it sees its jobs' files in `inputs`, a host folder of its own
    mounted read-only at `sandbox.bwrap.SCORING_INPUTS`, and the folders of `code` (where plugins'
    scorers are imported from); unconfined, it runs as the harness's own user and `inputs` is None."""

    def __init__(self, confined: bool, code: tuple[Path, ...]) -> None:
        self.key = (confined, code)
        self.lease: Any = None
        self.inputs: Path | None = None
        command = _worker_command(confined=confined)
        if confined:
            from daharness.sandbox.bwrap import confined_command
            from daharness.sandbox.scratch import process_scratch
            from daharness.sandbox.uids import acquire_uid

            self.inputs = Path(tempfile.mkdtemp(prefix="daharness-scoring-", dir=process_scratch()))
            self.inputs.chmod(0o755)
            if os.getuid() == 0:
                self.lease = acquire_uid()
                command += ["--uid", str(self.lease.uid)]
            command = confined_command(command, inputs=self.inputs, code=list(code), limits=_LIMITS)
        self.process = _spawner.submit(
            subprocess.Popen,
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # what scorers print is not the harness's output
            start_new_session=True,  # so that a kill takes its scoring child too
        ).result()
        self.ready = False

    def run(self, job: tuple[Any, ...], timeout_s: float) -> Outcome:
        assert self.process.stdin is not None
        if not self.ready:
            greeting = self._read(_START_TIMEOUT_S)
            if greeting[0] != "ready":
                return greeting if greeting[0] == "worker" else ("worker", f"no greeting: {greeting}")
            self.ready = True
        try:
            _send(self.process.stdin, pickle.dumps(job))
        except OSError:
            return ("worker", f"it exited (code {self.process.poll()})")
        return self._read(timeout_s)

    def _read(self, timeout_s: float) -> Outcome:
        """The next outcome, ("time", "") after `timeout_s` (the worker is killed then), ("worker", why)
        when the worker is gone, ("unsendable", why) for a reply too large or not an outcome."""
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
                return ("worker", f"it exited (code {self.process.wait()})")
            buffer += chunk
            if size is None and len(buffer) >= _HEADER.size:
                (size,) = _HEADER.unpack(buffer[: _HEADER.size])
                if size > MAX_REPLY_BYTES:
                    self.kill()
                    return (
                        "unsendable",
                        f"the scoring process sent back more than {MAX_REPLY_BYTES >> 20} MB",
                    )
        try:
            kind, payload = json.loads(buffer[_HEADER.size :])
            return (str(kind), payload)
        except (ValueError, TypeError, RecursionError):
            return ("unsendable", "the scoring process sent back something that is not an outcome")

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                stream.close()  # type: ignore[union-attr]
        self._release()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.process.stdin.close()  # type: ignore[union-attr]
        if wait_for_exit(self.process, 5) is None:
            self.kill()
        self._release()

    def _release(self) -> None:
        if self.lease is not None:
            self.lease.release()
            self.lease = None
        if self.inputs is not None:
            remove_tree(self.inputs)
            self.inputs = None


_idle: list[_Worker] = []
_idle_lock = threading.Lock()


@contextlib.contextmanager
def checked_out(confined: bool, code: tuple[Path, ...] = ()) -> Iterator[_Worker]:
    """An idle worker of this kind (or a new one) for one job; back in the pool afterwards if it lives."""
    with _idle_lock:
        worker = next((w for w in _idle if w.key == (confined, code)), None)
        if worker is not None:
            _idle.remove(worker)
    if worker is None:
        worker = _Worker(confined, code)
    try:
        yield worker
    finally:
        if worker.process.poll() is None:
            with _idle_lock:
                _idle.append(worker)
        else:
            worker._release()


def score_in_worker(
    worker: _Worker,
    call: str,
    modules: list[str],
    arguments: tuple[Any, ...],
    *,
    memory_mb: int,
    seconds: float,
) -> Outcome:
    """`call` ("module:function") on `arguments` in the worker's child, with `memory_mb` of data memory
    and `seconds` of CPU and wall time (a confined worker's inputs folder holds the job's files)."""
    job = (list(sys.path), call, modules, arguments, memory_mb << 20, max(1, int(seconds)))
    return worker.run(job, seconds)


@atexit.register
def _close_workers() -> None:
    with _idle_lock:
        workers, _idle[:] = list(_idle), []
    for worker in workers:
        worker.close()


if __name__ == "__main__":
    _serve(int(sys.argv[2]) if sys.argv[1:2] == ["--uid"] else None)
