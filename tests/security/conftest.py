"""Fixtures for the security tests: a task with a hidden gold file, and a sandbox with tight limits."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from daharness.sandbox import Limits, Sandbox, Workspace
from daharness.tasks.model import Family, Gold, GoldFile, Task, WorkspaceFile

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
        family=Family.workspace,
        instructions=["attack"],
        files=[WorkspaceFile(path="data.csv", source=tmp_path / "visible" / "data.csv")],
        gold=Gold(files=[GoldFile(name="answer.json", source=gold)]),
    )


@pytest.fixture
def box(task: Task) -> Iterator[Sandbox]:
    workspace = Workspace.create(task)
    sandbox = Sandbox(workspace, LIMITS)
    sandbox.start()
    yield sandbox
    # whatever the attack did, the same sandbox still answers ...
    assert sandbox.python("print(6 * 7)").stdout == "42\n"
    sandbox.close()
    workspace.remove()
    # ... and the next sample gets a working sandbox
    fresh = Workspace.create(task)
    with Sandbox(fresh, LIMITS) as next_box:
        assert next_box.python("print(open('data.csv').read())").stdout == "a,b\n1,2\n\n"
    fresh.remove()


def host_pids_matching(marker: str) -> list[int]:
    """Host processes whose command line contains `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found
