"""One temporary folder per daharness process, holding every workspace, hook copy and collected
snapshot it makes, so that what a killed harness (kill -9, a crash, a power cut) leaves behind is one
folder, and the next daharness process on the machine removes it.

The folder is named after its owner's pid and start time (`daharness-proc-<pid>-<start>`); it belongs
to a dead process when no process of that pid runs, or one does that started at another time.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import tempfile
from pathlib import Path

from daharness.sandbox.once import computed_once
from daharness.sandbox.workspace import remove_tree

PREFIX = "daharness-proc-"


def scratch_parent() -> Path:
    return Path(os.environ.get("DAHARNESS_TMPDIR") or tempfile.gettempdir())


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


@computed_once
def process_scratch() -> Path:
    """This process's temporary folder (made on first use, removed when the process exits)."""
    reap_stale()
    pid = os.getpid()
    folder = scratch_parent() / f"{PREFIX}{pid}-{_start_time(pid) or 0}"
    folder.mkdir(mode=0o711, exist_ok=True)
    folder.chmod(0o711)  # sandbox users pass through it to their own workspace, without listing it
    atexit.register(remove_tree, folder)
    return folder


def reap_stale() -> list[Path]:
    """Remove the folders of daharness processes that no longer run; returns what was removed."""
    removed = []
    with contextlib.suppress(OSError):
        for entry in scratch_parent().iterdir():
            if not entry.name.startswith(PREFIX) or entry.is_symlink() or not entry.is_dir():
                continue
            pid, _, start = entry.name.removeprefix(PREFIX).partition("-")
            if not pid.isdigit():
                continue
            if _start_time(int(pid)) == start:
                continue  # its owner still runs
            remove_tree(entry)
            removed.append(entry)
    return removed
