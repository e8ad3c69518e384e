"""Finding a running sandbox's namespaces from the host."""

from __future__ import annotations

import contextlib
from pathlib import Path


def namespace_init(bwrap_pid: int) -> int | None:
    """The host pid of a sandbox's first process (PID 1 of its namespaces, a child of bwrap), whose
    namespaces are the sandbox's; None when bwrap has none (any more)."""
    children = Path(f"/proc/{bwrap_pid}/task/{bwrap_pid}/children")
    try:
        pids = [int(pid) for pid in children.read_text().split()]
    except OSError:
        pids = []
    for pid in pids:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("NSpid:") and line.split()[-1] == "1":
                    return pid
    return None
