"""Machine-wide sandbox user ids: each id is held by an exclusive lock on a file of its own, so two
daharness processes never share one (closing one sandbox kills every process of its id), and an id is
free again as soon as its holder exits, even after `kill -9`, since the kernel drops the lock then."""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import threading
from dataclasses import dataclass
from pathlib import Path

UID_BASE = 200_000
UID_COUNT = 100_000
LOCK_DIR = Path(os.environ.get("DAHARNESS_UID_LOCK_DIR", "/run/daharness/uids"))
_held: set[int] = set()
_held_lock = threading.Lock()


@dataclass
class UidLease:
    uid: int
    _descriptor: int

    def release(self) -> None:
        with _held_lock:
            _held.discard(self.uid)
        with contextlib.suppress(OSError):
            os.close(self._descriptor)


def acquire_uid(attempts: int = 1000) -> UidLease:
    """A sandbox user id no other live sandbox on this machine holds."""
    LOCK_DIR.mkdir(parents=True, exist_ok=True, mode=0o700)
    rng = random.Random()
    for _ in range(attempts):
        uid = UID_BASE + rng.randrange(UID_COUNT)
        with _held_lock:
            if uid in _held:
                continue
            descriptor = os.open(LOCK_DIR / str(uid), os.O_CREAT | os.O_RDWR, 0o600)
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(descriptor)
                continue
            _held.add(uid)
            return UidLease(uid, descriptor)
    raise RuntimeError(f"no free sandbox user id after {attempts} tries (locks in {LOCK_DIR})")
