"""The sandbox's processes: reaping zombies nobody waits for, and counting processes near the limit."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from pathlib import Path


def reap_untracked_zombies() -> None:
    """Reap exited children that no Popen or multiprocessing object will wait for (e.g. after a fork
    bomb): a zombie keeps its process slot, and the process limit would stay used up for the sample."""
    zombies = []
    for children in Path("/proc/self/task").glob("*/children"):
        for pid in children.read_text().split():
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state == "Z":
                zombies.append(int(pid))
    if not zombies:
        return
    import gc
    import multiprocessing.process

    tracked = {o.pid for o in gc.get_objects() if isinstance(o, subprocess.Popen)}
    tracked |= {child.pid for child in getattr(multiprocessing.process, "_children", set())}
    for pid in zombies:
        if pid not in tracked:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


def peak_process_count(limit: int) -> int:
    """Processes in the sandbox; when they crowd the limit, the peak of a few looks, since a fork bomb's
    processes keep exiting and being replaced."""
    peak = sum(name.isdigit() for name in os.listdir("/proc"))
    if limit and peak >= limit // 2:
        for _ in range(10):
            time.sleep(0.003)
            peak = max(peak, sum(name.isdigit() for name in os.listdir("/proc")))
    return peak
