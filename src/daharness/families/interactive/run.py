"""Running a dialogue turn's code in a sandbox and recording its results (the interactive family).

A turn's code is judged by what it leaves behind, never by its text: in a sandbox holding the task's
untouched files, the dialogue's earlier code runs first (the history), then the turn's code, then the
probe (``probe.py``) writes each intent's result as JSON; that file and the plots are
copied out, with their chart captures, unread and each within its cap (``scorers/record.py``).
The suite's code on a task is run once per process (the reference's code is asked for by every sample
of a task); the agent's once, into its sample's scratch folder.
"""

from __future__ import annotations

import atexit
import copy
import hashlib
import json
import secrets
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from daharness.core.backend import FileTooLarge, SandboxBackend, Snapshot
from daharness.core.desktop import Desktop
from daharness.core.errors import InfrastructureError
from daharness.core.family import OpenFresh
from daharness.core.observation import Observation
from daharness.core.registry import scorers
from daharness.core.task import Task
from daharness.families.interactive.calls import CallRecorder, PrivateCalls
from daharness.families.interactive.scorers.code import InteractiveCodeOptions
from daharness.families.interactive.scorers.record import (
    MAX_CAPTURE_BYTES,
    MAX_PLOT_BYTES,
    MAX_RESULTS_BYTES,
    read_record,
)

PROBE_SOURCE = (Path(__file__).with_name("probe.py")).read_text(encoding="utf-8")


@dataclass(frozen=True)
class HistoryStep:
    turn: int
    code: str


def where(task: Task) -> str:
    """How errors name a task: its id and its turn in the dialogue."""
    turn = task.gold.data.get("turn")
    return f"task {task.id} (turn {turn})" if turn is not None else f"task {task.id}"


def history_of(task: Task) -> list[HistoryStep]:
    return [HistoryStep(int(step["turn"]), str(step["code"])) for step in task.gold.data.get("history", [])]


def code_options(task: Task) -> InteractiveCodeOptions | None:
    """The options of the task's `interactive_code` scorer; None for a multiple-choice turn."""
    for spec in task.scorers:
        if spec.name == "interactive_code":
            parsed = scorers.get(spec.name).parse_options(spec.options, f"task {task.id}")
            assert isinstance(parsed, InteractiveCodeOptions)
            return parsed
    return None


def failure(observation: Observation) -> str:
    """One line saying why a step failed."""
    if observation.timed_out:
        return f"timed out ({observation.error.value if observation.error else 'no answer in time'})"
    if observation.error is not None:
        return f"{observation.error.name}: {observation.error.value}".strip()[:500]
    return f"exit status {observation.exit_status}"


def run_history(task: Task, box: SandboxBackend) -> None:
    """Bring a sandbox to the dialogue's state; a history that does not run is the suite's fault."""
    for step in history_of(task):
        observation = box.python(step.code)
        if not observation.ok:
            raise InfrastructureError(
                f"{where(task)}: the history does not run: the code of turn {step.turn} fails: {failure(observation)}"
            )


class HistoryFirst(SandboxBackend):
    """The agent's sandbox, brought to the dialogue's state (the history run) the first time the agent
    uses it: an agent that only writes code never pays for the history."""

    def __init__(self, task: Task, box: SandboxBackend) -> None:
        self._task, self._box, self._ready = task, box, False
        self.name = box.name  # type: ignore[misc]
        self.workdir = box.workdir

    def _prepare(self) -> SandboxBackend:
        if not self._ready:
            self._ready = True
            run_history(self._task, self._box)
        return self._box

    @property
    def restarts(self) -> int:  # type: ignore[override]
        return self._box.restarts

    def start(self) -> None:
        self._box.start()

    def python(self, code: str, timeout: float | None = None) -> Observation:
        return self._prepare().python(code, timeout)

    def bash(self, command: str, timeout: float | None = None) -> Observation:
        return self._prepare().bash(command, timeout)

    def sql(
        self, database: str, query: str, output: str | None = None, timeout: float | None = None
    ) -> Observation:
        return self._prepare().sql(database, query, output, timeout)

    def write_file(self, path: str, content: str) -> Observation:
        return self._prepare().write_file(path, content)

    def read_file(self, path: str) -> bytes:
        return self._prepare().read_file(path)

    def changed_files(self) -> list[str]:
        return self._box.changed_files()

    def snapshot(self, target: Path) -> Snapshot:
        return self._box.snapshot(target)

    def copy_file_out(self, path: str, target: Path, max_bytes: int) -> str:
        return self._prepare().copy_file_out(path, target, max_bytes)

    def chart_capture_file(self, sha256: str) -> Path | None:
        return self._box.chart_capture_file(sha256)

    @property
    def desktop(self) -> Desktop | None:
        return self._box.desktop

    def interrupt(self) -> None:
        self._box.interrupt()

    def close(self) -> None:
        self._box.close()

    @property
    def time_left_s(self) -> float:
        return self._box.time_left_s


def _probe_start(recorder: CallRecorder | None) -> str:
    code = (
        "import sys as _s, types as _t\n"
        "_m = _t.ModuleType('_daharness_probe')\n"
        f"exec(compile({PROBE_SOURCE!r}, '<daharness-probe>', 'exec'), _m.__dict__)\n"
        "_s.modules['_daharness_probe'] = _m\n"
        "_m.start()\n"
        "del _s, _t, _m\n"
    )
    return code + (recorder.start_code() if recorder else "")


def execute(
    task: Task, box: SandboxBackend, code: str, options: InteractiveCodeOptions, out: Path
) -> dict[str, Any]:
    """Run the history, then `code`, in a started sandbox; keep what it left in `out`, unread.

    Returns a raw record (``scorers/record.py``): {"error": why the code failed or None,
    "file": the probe's results file, "plots": per intent, None or its image and chart capture}, each
    copied within its cap, with "private_calls" and "tampering" from the sealed call recorder. Nothing
    the code left is read here (the scorer reads it, in the scoring worker)."""
    run_history(task, box)
    recorder = CallRecorder(options.library, options.library_functions) if options.library else None
    started = box.python(_probe_start(recorder))
    if not started.ok:
        raise InfrastructureError(f"{where(task)}: the result probe does not start: {failure(started)}")
    observation = box.python(code)
    # read before any intent is evaluated; a kernel restarted since holds no record
    private = recorder.read(box) if recorder and not observation.restarted else PrivateCalls()
    calls = {"private_calls": private.calls, "tampering": private.tampering}
    if not observation.ok:
        return {"error": f"the code fails: {failure(observation)}", "file": None, "plots": [], **calls}
    name = f".daharness-results-{secrets.token_hex(8)}.json"
    request = {"intents": [intent.model_dump() for intent in options.intents], "out": name}
    captured = box.python(f"__import__('sys').modules['_daharness_probe'].capture(globals(), {request!r})")
    if not captured.ok:
        reason = f"the results could not be recorded: {failure(captured)}"
        return {"error": reason, "file": None, "plots": [], **calls}
    out.mkdir(parents=True, exist_ok=True)
    try:
        box.copy_file_out(name, out / "results.json", MAX_RESULTS_BYTES)
    except FileNotFoundError:
        return {
            "error": "the results could not be recorded: no record written",
            "file": None,
            "plots": [],
            **calls,
        }
    except FileTooLarge as exc:
        return {"error": f"the results file {exc.args[0]}", "file": None, "plots": [], **calls}
    plots = [
        _copy_plot(box, intent.file, out, index) if intent.type == "plot" and intent.file else None
        for index, intent in enumerate(options.intents)
    ]
    return {"error": None, "file": out / "results.json", "plots": plots, **calls}


def _copy_plot(box: SandboxBackend, file: str, out: Path, index: int) -> dict[str, Any]:
    target = out / f"{index}.png"
    try:
        digest = box.copy_file_out(file, target, MAX_PLOT_BYTES)
    except FileNotFoundError:
        return {"png": None, "capture": None}
    except FileTooLarge as exc:
        return {"png": None, "capture": None, "missing": f"the plot {exc.args[0]}"}
    # the capture the harness received for exactly these bytes (never a file the code wrote)
    received = box.chart_capture_file(digest)
    capture = out / f"{index}.capture.json"
    if received is None or received.stat().st_size > MAX_CAPTURE_BYTES:
        return {"png": target, "capture": None}
    shutil.copyfile(received, capture)
    return {"png": target, "capture": capture}


# ---- records ---------------------------------------------------------------------------------------
# Code the suite wrote (the reference's, validate's decoys) is run once per task and process: every
# sample of a task asks for the reference's record, made in a fresh sandbox the first time. The agent's
# code is run for its sample alone, into the sample's own scratch folder: nothing of it outlives the
# sample.

_cache: dict[str, dict[str, Any]] = {}
_cache_lock = threading.Lock()
_key_locks: dict[str, threading.Lock] = {}
_cache_dir: list[Path] = []


def _cache_root() -> Path:
    with _cache_lock:
        if not _cache_dir:
            folder = Path(tempfile.mkdtemp(prefix="daharness-interactive-"))
            atexit.register(shutil.rmtree, folder, True)
            _cache_dir.append(folder)
        return _cache_dir[0]


def _key(task: Task, options: InteractiveCodeOptions, code: str) -> str:
    files = []
    for item in task.files:
        info = item.source.stat()
        files.append([item.path, str(item.source), info.st_size, info.st_mtime_ns])
    identity = {
        "history": [step.code for step in history_of(task)],
        "code": code,
        "options": options.model_dump(),
        "files": files,
        "libraries": [[lib.name, str(lib.source)] for lib in task.libraries],
        "workdir": task.workdir,
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


def record_of(
    task: Task, options: InteractiveCodeOptions, code: str, open_fresh: OpenFresh
) -> dict[str, Any]:
    """The raw record of code the suite wrote, run after the task's history in a fresh sandbox (once
    per process)."""
    key = _key(task, options, code)
    with _cache_lock:
        lock = _key_locks.setdefault(key, threading.Lock())
    with lock:  # two samples asking for the same record wait for one run
        if key not in _cache:
            with open_fresh() as box:
                _cache[key] = execute(task, box, code, options, _cache_root() / key)
        return copy.deepcopy(_cache[key])


def agent_record(
    task: Task, options: InteractiveCodeOptions, code: str, open_fresh: OpenFresh, out: Path
) -> dict[str, Any]:
    """The raw record of the agent's code, run after the task's history in a fresh sandbox, kept in
    `out` (the sample's scratch folder, removed with the sample). Code that is the reference's own
    (but for blank space around it) has the reference's record: the same code after the same history,
    which `record_of` runs once per task and process."""
    if task.reference is not None and code.strip() == task.reference.code.strip():
        return record_of(task, options, task.reference.code, open_fresh)
    with open_fresh() as box:
        return execute(task, box, code, options, out)


def reference_record(task: Task, options: InteractiveCodeOptions, open_fresh: OpenFresh) -> dict[str, Any]:
    """The reference's raw record; a reference that fails, or leaves no result for an intent, is an
    error naming the task and turn (the suite's code: the harness reads its results to check them)."""
    if task.reference is None:
        raise InfrastructureError(f"{where(task)}: no reference code")
    raw = record_of(task, options, task.reference.code, open_fresh)
    record = read_record(raw)
    if record["error"]:
        raise InfrastructureError(
            f"{where(task)}: the reference code {record['error'].removeprefix('the code ')}"
        )
    for intent, result in zip(options.intents, record["results"], strict=True):
        if "missing" in result or (intent.type == "plot" and not result.get("png")):
            reason = result.get("missing") or f"no file {intent.file}"
            raise InfrastructureError(
                f"{where(task)}: the reference leaves no {intent.type} result: {reason}"
            )
    return raw
