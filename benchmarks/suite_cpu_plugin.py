"""pytest plugin of benchmarks/suite_cpu.py, writing JSON to the folder named by DAHARNESS_SUITE_CPU.

Each test's interval (in each worker) and the machine's CPU over time (in the controller). Where
suite_cpu.py made a CPU accounting group for the run (DAHARNESS_SUITE_CPU_GROUP, cgroup v1 `cpuacct`), each
worker also moves into a group of its own and records the CPU that group used during each test: the worker
and every process it started (sandboxes, services, browsers: they stay in the group whatever they do), and
nothing of what else runs on the machine."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_SAMPLE_S = 0.5
_timeline: list[tuple[float, int, int]] = []  # (time, all jiffies, idle + iowait jiffies)
_group: list[Path] = []  # this worker's accounting group, when there is one
_stop = threading.Event()


def _folder() -> Path:
    return Path(os.environ["DAHARNESS_SUITE_CPU"])


def _read_cpu() -> tuple[int, int]:
    with open("/proc/stat") as stat:
        fields = [int(value) for value in stat.readline().split()[1:]]
    return sum(fields), fields[3] + fields[4]


def group_cpu_s(group: Path) -> float:
    """The CPU-seconds a cpuacct group and the groups below it have used."""
    return int((group / "cpuacct.usage").read_text()) / 1e9


def _sample() -> None:
    while not _stop.is_set():
        _timeline.append((time.time(), *_read_cpu()))
        _stop.wait(_SAMPLE_S)


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _worker_id(config: pytest.Config) -> str:
    return config.workerinput["workerid"] if _is_worker(config) else "main"  # type: ignore[attr-defined]


def _without_workers(config: pytest.Config) -> bool:
    """The controller runs the tests itself (no xdist, or -n 0)."""
    return not config.pluginmanager.hasplugin("xdist") or config.getoption("numprocesses", None) in (None, 0)


def pytest_configure(config: pytest.Config) -> None:
    if "DAHARNESS_SUITE_CPU" not in os.environ:
        raise pytest.UsageError("suite_cpu_plugin writes where benchmarks/suite_cpu.py says: run that")
    if not _is_worker(config):  # one sampler for the whole machine
        threading.Thread(target=_sample, daemon=True, name="suite-cpu").start()
    parent = os.environ.get("DAHARNESS_SUITE_CPU_GROUP")
    if parent and (_is_worker(config) or _without_workers(config)):
        group = Path(parent) / _worker_id(config)
        group.mkdir(exist_ok=True)
        (group / "cgroup.procs").write_text(str(os.getpid()))
        _group.append(group)


def pytest_unconfigure(config: pytest.Config) -> None:
    if "DAHARNESS_SUITE_CPU" not in os.environ:  # refused in pytest_configure
        return
    if _is_worker(config):
        return
    _stop.set()
    _timeline.append((time.time(), *_read_cpu()))
    (_folder() / "timeline.json").write_text(json.dumps(_timeline))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Any) -> Iterator[None]:
    """Each test's line (test id, start, end, CPU-seconds or null) as it ends: a run stopped half-way
    still shows where its CPU went."""
    started, cpu = time.time(), group_cpu_s(_group[0]) if _group else None
    yield
    used = group_cpu_s(_group[0]) - cpu if cpu is not None else None
    line = json.dumps([item.nodeid, started, time.time(), used])
    with open(_folder() / f"tests-{_worker_id(item.config)}.jsonl", "a") as out:
        out.write(line + "\n")
