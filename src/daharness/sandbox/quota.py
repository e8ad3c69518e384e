"""The workspace quota: how much the agent may add to its workspace (bytes and entries), checked by the
host while the sandbox lives, since the workspace is a host folder that no filesystem quota guards.

Bytes are apparent sizes, so a sparse file counts in full (it would be written out in full by any tool
that copies it). A check stops counting once the entries are over the quota, so it costs at most a walk
of quota-many entries however many the agent made.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class WorkspaceUsage:
    bytes: int = 0
    entries: int = 0  # files, folders, links and the rest


def measure(root: Path, stop_after: int | None = None) -> WorkspaceUsage:
    """Apparent bytes of the regular files under `root` and the number of entries (iterative, never
    through a link); stops early once `stop_after` entries are seen."""
    total = entries = 0
    stack = [str(root)]
    while stack:
        try:
            scanner = os.scandir(stack.pop())
        except OSError:
            continue
        with scanner:
            for entry in scanner:
                entries += 1
                # before the entry's stat, which fails for one deleted since the listing: a count
                # taken while the agent deletes (its cleanup after a quota stop) must stop at the
                # same cap as the others, or it reads as growth
                if stop_after is not None and entries > stop_after:
                    return WorkspaceUsage(total, entries)
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(info.st_mode):
                    stack.append(entry.path)
                elif stat.S_ISREG(info.st_mode):
                    total += info.st_size
    return WorkspaceUsage(total, entries)


class QuotaGuard:
    """Watches a workspace in a thread; calls `on_exceeded(reason)` when the agent's additions go over
    the quota and have grown since the last call (so that the agent can still clean up afterwards)."""

    def __init__(
        self,
        root: Path,
        *,
        max_bytes: int,
        max_entries: int,
        on_exceeded: Callable[[str], None],
        interval_s: float = 0.5,
        lock: threading.RLock | None = None,
    ) -> None:
        self.root = root
        self.max_bytes, self.max_entries = max_bytes, max_entries
        self.on_exceeded = on_exceeded
        self.interval_s = interval_s
        self.baseline = measure(root)
        self.exceeded_at: WorkspaceUsage | None = None  # the usage when the quota was last enforced
        self.times_exceeded = 0
        # held from the measurement until `on_exceeded` has acted on it (the sandbox passes the lock its
        # restarts take, so what is killed is what was measured)
        self._lock = lock if lock is not None else threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def added(self) -> WorkspaceUsage:
        usage = measure(self.root, stop_after=self.baseline.entries + self.max_entries + 1)
        return WorkspaceUsage(usage.bytes - self.baseline.bytes, usage.entries - self.baseline.entries)

    def check(self) -> str | None:
        """Check now; enforce (call `on_exceeded`) and return the reason when over quota and growing."""
        with self._lock:
            added = self.added()
            over = added.bytes > self.max_bytes or added.entries > self.max_entries
            if not over:
                self.exceeded_at = None
                return None
            last = self.exceeded_at
            if last is not None and added.bytes <= last.bytes and added.entries <= last.entries:
                return None  # still over, but shrinking or idle: the agent may be cleaning up
            self.exceeded_at = added
            self.times_exceeded += 1
            reason = self.describe(added)
            self.on_exceeded(reason)
        return reason

    def describe(self, added: WorkspaceUsage) -> str:
        entries = (
            f"{added.entries:,}" if added.entries <= self.max_entries else f"more than {self.max_entries:,}"
        )
        return (
            f"the workspace quota is exceeded: the agent added {added.bytes / 2**20:,.1f} MB in {entries} "
            f"files and folders, the quota is {self.max_bytes / 2**20:,.0f} MB and {self.max_entries:,}"
        )

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._watch, name="workspace-quota", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def _watch(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.check()
            except Exception:  # the watch must never die of a vanished folder or the like
                continue
