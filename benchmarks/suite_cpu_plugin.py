"""pytest plugin of benchmarks/suite_cpu.py: the machine's CPU over time (in the controller) and each test's
interval (in each worker), written as JSON to the folder named by DAHARNESS_SUITE_CPU."""

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
_intervals: list[tuple[str, float, float]] = []  # (test id, start, end)
_stop = threading.Event()


def _folder() -> Path:
    return Path(os.environ["DAHARNESS_SUITE_CPU"])


def _read_cpu() -> tuple[int, int]:
    with open("/proc/stat") as stat:
        fields = [int(value) for value in stat.readline().split()[1:]]
    return sum(fields), fields[3] + fields[4]


def _sample() -> None:
    while not _stop.is_set():
        _timeline.append((time.time(), *_read_cpu()))
        _stop.wait(_SAMPLE_S)


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    if "DAHARNESS_SUITE_CPU" not in os.environ:
        raise pytest.UsageError("suite_cpu_plugin writes where benchmarks/suite_cpu.py says: run that")
    if not _is_worker(config):  # one sampler for the whole machine
        threading.Thread(target=_sample, daemon=True, name="suite-cpu").start()


def pytest_unconfigure(config: pytest.Config) -> None:
    if "DAHARNESS_SUITE_CPU" not in os.environ:  # refused in pytest_configure
        return
    if _is_worker(config):
        name = f"tests-{config.workerinput['workerid']}.json"  # type: ignore[attr-defined]
        (_folder() / name).write_text(json.dumps(_intervals))
        return
    _stop.set()
    _timeline.append((time.time(), *_read_cpu()))
    (_folder() / "timeline.json").write_text(json.dumps(_timeline))
    if not config.pluginmanager.hasplugin("xdist") or config.getoption("numprocesses", None) in (None, 0):
        (_folder() / "tests-main.json").write_text(json.dumps(_intervals))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Any) -> Iterator[None]:
    started = time.time()
    yield
    _intervals.append((item.nodeid, started, time.time()))
