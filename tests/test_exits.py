"""core/exits.wait_for_exit: the exit status of a real child process, or None while it runs."""

from __future__ import annotations

import subprocess
import sys

from daharness.core.exits import wait_for_exit


def test_a_running_process_gives_none_and_an_ended_one_its_status() -> None:
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        assert wait_for_exit(sleeper, 0.05) is None and sleeper.returncode is None
        assert wait_for_exit(sleeper, 0) is None
    finally:
        sleeper.kill()
    assert wait_for_exit(sleeper, 10) == -9  # reaped: Popen knows its status from now on
    assert sleeper.returncode == -9 and wait_for_exit(sleeper, 10) == -9


def test_the_status_of_a_process_that_ends_during_the_wait() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read(); sys.exit(3)"], stdin=subprocess.PIPE
    )
    assert wait_for_exit(child, 0.05) is None
    child.stdin.close()  # type: ignore[union-attr]
    assert wait_for_exit(child, 30) == 3
