"""The sandbox's processes: reaping zombies nobody waits for, and counting processes near the limit."""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
import time
import weakref
from pathlib import Path
from typing import Any

_popens: weakref.WeakSet[subprocess.Popen[Any]] = weakref.WeakSet()


def track_popen_objects() -> None:
    """Keep a weak set of the Popen objects made from now on: they wait for their own child. (Asking the
    garbage collector for every object would be refused where the interactive family records calls.)"""
    original = subprocess.Popen.__init__

    @functools.wraps(original)
    def init(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        _popens.add(self)

    subprocess.Popen.__init__ = init  # type: ignore[method-assign]


def reap_untracked_zombies() -> None:
    """Reap exited children that no Popen or multiprocessing object will wait for (e.g. after a fork
    bomb): a zombie keeps its process slot, and the process limit would stay used up for the sample."""
    zombies = []
    for children in Path("/proc/self/task").glob("*/children"):
        try:  # a thread (the agent's, a library's) may end between the listing and the read
            listed = children.read_text().split()
        except OSError:
            continue
        for pid in listed:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state == "Z":
                zombies.append(int(pid))
    if not zombies:
        return
    import multiprocessing.process

    tracked = {popen.pid for popen in list(_popens)}
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
