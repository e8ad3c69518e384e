"""A scratch workspace holding a task's visible files, and a subprocess runner with a timeout.

This is the unisolated first step: code runs as a normal child process. The sandbox issue replaces
`run_python` with namespaced, resource-limited execution behind the same calls.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from daharness.tasks.model import Task

# Only what a Python child needs; the user's API keys and tokens do not pass through.
_PASSED_ENV = ("PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "SYSTEMROOT")
_live: set[subprocess.Popen[str]] = set()
_live_lock = threading.Lock()


@dataclass
class ExecutionResult:
    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool
    duration_s: float

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


@dataclass
class Workspace:
    """A fresh directory with the task's visible files; remembers their digests to find changes later."""

    root: Path
    _initial: dict[str, str] = field(default_factory=dict)

    @classmethod
    def create(cls, task: Task, parent: Path | None = None) -> Workspace:
        root = Path(tempfile.mkdtemp(prefix=f"daharness-{_safe(task.id)}-", dir=parent))
        for item in task.files:
            target = root / item.path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(item.source, target)
        workspace = cls(root)
        workspace._initial = workspace._digests()
        return workspace

    def _digests(self) -> dict[str, str]:
        found = {}
        for path in self.root.rglob("*"):
            if path.is_file() and not path.is_symlink():
                found[path.relative_to(self.root).as_posix()] = hashlib.sha1(path.read_bytes()).hexdigest()
        return found

    def changed_files(self) -> list[str]:
        """Files created or modified since the workspace was made, as relative paths."""
        return sorted(name for name, digest in self._digests().items() if self._initial.get(name) != digest)

    def copy_changed_to(self, target: Path) -> list[str]:
        changed = self.changed_files()
        for name in changed:
            destination = target / name
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.root / name, destination)
        return changed

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def run_python(code: str, cwd: Path, timeout_s: float) -> ExecutionResult:
    """Run `code` as a fresh Python process in `cwd`; kill its whole process group on timeout."""
    env = {key: os.environ[key] for key in _PASSED_ENV if key in os.environ}
    env["MPLBACKEND"] = "Agg"
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    with _live_lock:
        _live.add(process)
    try:
        stdout, stderr = process.communicate(timeout=timeout_s)
        timed_out = False
    except subprocess.TimeoutExpired:
        _kill_group(process)
        stdout, stderr = process.communicate()
        timed_out = True
    except BaseException:
        _kill_group(process)
        process.wait()
        raise
    finally:
        with _live_lock:
            _live.discard(process)
    return ExecutionResult(stdout, stderr, process.returncode, timed_out, time.perf_counter() - started)


def kill_all() -> None:
    """Kill every child process still running (used when a run is interrupted)."""
    with _live_lock:
        for process in list(_live):
            _kill_group(process)


def _kill_group(process: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in text)[:40]
