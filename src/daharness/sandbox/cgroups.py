"""A control group per sandbox: every process the sandbox starts stays in it (setsid and double forks
included), so the sandbox can list and kill exactly its own processes.

cgroup v1 `pids` hierarchy (what this kind of machine offers, writable as root) under
`/sys/fs/cgroup/pids/daharness/`; where it is missing or not writable, sandboxes run without one and
`available()` says so. Groups left behind by a killed harness are removed at the next start.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from collections.abc import Callable
from pathlib import Path

PIDS_ROOT = Path(os.environ.get("DAHARNESS_CGROUP_PIDS", "/sys/fs/cgroup/pids")) / "daharness"


def available() -> bool:
    try:
        PIDS_ROOT.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(PIDS_ROOT, os.W_OK)


class SandboxCgroup:
    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, max_processes: int | None = None) -> SandboxCgroup | None:
        """A new, empty group, or None when this machine gives none."""
        if not available():
            return None
        remove_stale()
        path = PIDS_ROOT / f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        try:
            path.mkdir()
            if max_processes:
                (path / "pids.max").write_text(str(max_processes))
        except OSError:
            return None
        return cls(path)

    def join_command(self, command: list[str]) -> list[str]:
        """`command`, started so that its process is in the group before it runs anything."""
        return [
            "/bin/sh",
            "-c",
            f'echo $$ > "{self.path}/cgroup.procs" && exec "$@"',
            "daharness-sandbox",
            *command,
        ]

    def pids(self) -> list[int]:
        try:
            return [int(line) for line in (self.path / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def kill_all(self, wait_s: float = 2.0) -> None:
        """SIGKILL every process of the group until none is left (or `wait_s` passes)."""
        kill_until_gone(self.pids, wait_s)

    def remove(self) -> None:
        self.kill_all()
        with contextlib.suppress(OSError):
            self.path.rmdir()


def remove_stale() -> None:
    """Remove the groups of sandboxes whose harness died (kill -9 leaves them behind): a group is named
    after the harness's pid, and one whose harness is gone is emptied and removed."""
    with contextlib.suppress(OSError):
        for group in PIDS_ROOT.iterdir():
            owner = group.name.split("-", 1)[0]
            if group.is_dir() and owner.isdigit() and not _alive(int(owner)):
                SandboxCgroup(group).remove()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def kill_until_gone(list_pids: Callable[[], list[int]], wait_s: float) -> None:
    """SIGKILL what `list_pids` lists, again and again (a fork may add more), until it lists nothing or
    `wait_s` passes."""
    deadline = time.monotonic() + wait_s
    while pids := list_pids():
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            return
        time.sleep(0.01)
