"""Waiting for a child process to end, woken as it ends.

`Popen.wait(timeout)` looks with sleeps of 0.5, 1, 2 ... up to 50 ms between looks, so a process that
ends after 10 ms is seen up to 10 ms late; a pidfd becomes readable the moment the process ends.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
from typing import Any


def wait_for_exit(process: subprocess.Popen[Any], timeout: float) -> int | None:
    """`process`'s exit status once it ends, within `timeout` seconds; None while it still runs."""
    if process.poll() is not None or timeout <= 0:
        return process.returncode
    try:
        handle = os.pidfd_open(process.pid)
    except OSError:  # a kernel before 5.3, or the process was reaped meanwhile
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout)
        return process.returncode
    try:
        watch = select.poll()  # not select.select, which fails on descriptors past 1024
        watch.register(handle, select.POLLIN)
        watch.poll(timeout * 1000)
    finally:
        os.close(handle)
    return process.poll()
