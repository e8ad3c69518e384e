"""Fixtures for the security tests: a task with a hidden gold file, and a sandbox with tight limits."""

from __future__ import annotations

import contextlib
import os
import select
from collections.abc import Iterator
from pathlib import Path

import pytest

from daharness.core.limits import Limits
from daharness.core.task import Gold, GoldFile, Task, WorkspaceFile
from daharness.sandbox import BwrapSandbox

LIMITS = Limits(
    memory_mb=1024, processes=48, file_mb=16, step_timeout_s=10, sample_timeout_s=300, output_bytes=4096
)


@pytest.fixture
def task(tmp_path: Path) -> Task:
    (tmp_path / "visible").mkdir()
    (tmp_path / "visible" / "data.csv").write_text("a,b\n1,2\n")
    (tmp_path / "gold").mkdir()
    gold = tmp_path / "gold" / "answer.json"
    gold.write_text('{"secret": "the gold answer"}')
    return Task(
        id="sec",
        suite="security",
        family="workspace",
        instructions=["attack"],
        files=[WorkspaceFile(path="data.csv", source=tmp_path / "visible" / "data.csv")],
        gold=Gold(files=[GoldFile(name="answer.json", source=gold)]),
    )


@pytest.fixture
def box(task: Task) -> Iterator[BwrapSandbox]:
    sandbox = BwrapSandbox(task, LIMITS)
    sandbox.start()
    yield sandbox
    # whatever the attack did, the same sandbox still answers ...
    assert sandbox.python("print(6 * 7)").stdout == "42\n"
    sandbox.close()
    # ... and the next sample gets a working sandbox
    with BwrapSandbox(task, LIMITS) as next_box:
        assert next_box.python("print(open('data.csv').read())").stdout == "a,b\n1,2\n\n"


def command_lines(pids: list[int]) -> list[str]:
    """The command lines of these (the sandbox's own) processes that still run; one that is gone, or a
    zombie waiting for its new parent to reap it, has none."""
    found = []
    for pid in pids:
        try:
            state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
            line = (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError):
            continue
        if state != "Z":
            found.append(line)
    return found


class Exits:
    """pidfds of a sandbox's processes, taken before it closes: a pidfd turns readable once its process
    has exited, so this says which still run without being fooled by a pid the system reused since."""

    def __init__(self, pids: list[int]) -> None:
        self.pidfds: dict[int, int] = {}
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                self.pidfds[pid] = os.pidfd_open(pid)

    def running(self) -> list[str]:
        """The processes that have not exited (a zombie has), each as "pid: command line"."""
        poller = select.poll()
        for pidfd in self.pidfds.values():
            poller.register(pidfd, select.POLLIN)
        exited = {pidfd for pidfd, _ in poller.poll(0)}
        return [f"{pid}: {_command_line(pid)}" for pid, pidfd in self.pidfds.items() if pidfd not in exited]

    def __enter__(self) -> Exits:
        return self

    def __exit__(self, *exc: object) -> None:
        for pidfd in self.pidfds.values():
            os.close(pidfd)


def _command_line(pid: int) -> str:
    with contextlib.suppress(OSError):
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    return "?"


def followed_box(task: Task) -> BwrapSandbox:
    """A started sandbox whose processes its control group lists (the test is skipped without one)."""
    sandbox = BwrapSandbox(task, LIMITS)
    sandbox.start()
    if sandbox._cgroup is None:
        sandbox.close()
        pytest.skip("no control group on this machine to follow the sandbox's processes")
    return sandbox
