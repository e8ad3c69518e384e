"""Where the test suite's CPU goes: runs pytest (the README's command, with any arguments given) and prints
the CPU-seconds of each test file and of the costliest tests.

On 2 cores the suite is CPU-bound (vmstat: about 8 % idle during a full run): its wall time falls only
when its CPU does, and time a test spends waiting is used by the other worker. Per-test durations
cannot show this, and neither can /usr/bin/time, which misses the services and browsers that leave the
test's process tree. This samples the whole machine's CPU (/proc/stat, every 0.5 s) and splits each
moment's CPU among the tests running then (on every xdist worker). Run it on an otherwise quiet machine:
whatever else runs is counted too.

Run: python benchmarks/suite_cpu.py [PYTEST ARGS...]    e.g. tests/test_runs.py, or nothing for the suite
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from itertools import pairwise
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHOWN = 25
TARGET_S = 480  # issue 27: the whole suite in 8 minutes


def attribute(folder: Path) -> tuple[Counter[str], float, float]:
    """CPU-seconds per test id (and "(between tests)"), the machine's CPU-seconds, and the wall seconds."""
    timeline = json.loads((folder / "timeline.json").read_text())
    intervals = [
        tuple(entry) for path in folder.glob("tests-*.json") for entry in json.loads(path.read_text())
    ]
    cores = os.cpu_count() or 1
    spent: Counter[str] = Counter()
    total = 0.0
    for (start, all_before, idle_before), (end, all_after, idle_after) in pairwise(timeline):
        ticks = max(all_after - all_before, 1)
        busy = (1 - (idle_after - idle_before) / ticks) * cores * (end - start)
        total += busy
        running = [test for test, began, ended in intervals if began < end and ended > start]
        for test in running or ["(between tests)"]:
            spent[test] += busy / max(len(running), 1)
    return spent, total, timeline[-1][0] - timeline[0][0]


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="daharness-suite-cpu-") as folder:
        env = {
            **os.environ,
            "DAHARNESS_SUITE_CPU": folder,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])),
        }
        command = [sys.executable, "-m", "pytest", "-p", "suite_cpu_plugin", "-q", *sys.argv[1:]]
        done = subprocess.run(command, env=env, cwd=HERE.parent, check=False, capture_output=True, text=True)
        print(done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-2000:])
        if not (Path(folder) / "timeline.json").is_file():
            raise SystemExit(f"pytest exited with {done.returncode} before the plugin wrote its figures")
        spent, total, wall = attribute(Path(folder))
    cores = os.cpu_count() or 1
    busy = total / (wall * cores)
    print(f"{total:.0f} CPU-seconds in {wall:.0f} s on {cores} cores ({busy:.0%} busy)")
    print(f"{TARGET_S / 60:g} minutes at this share allow {TARGET_S * cores * busy:.0f} CPU-seconds")
    by_file: Counter[str] = Counter()
    by_folder: Counter[str] = Counter()
    for test, seconds in spent.items():
        file = test.split("::")[0]
        by_file[file] += seconds
        by_folder[file.rpartition("/")[0] or file] += seconds  # "(between tests)" stays itself
    print_largest("CPU-seconds by folder:", by_folder)
    print_largest("CPU-seconds by file:", by_file)
    print_largest("CPU-seconds by test:", spent)


def print_largest(title: str, seconds: Counter[str]) -> None:
    """The SHOWN largest CPU-second counts under a title (suite_processes.py prints its own this way)."""
    print(f"\n{title}")
    for name, value in seconds.most_common(SHOWN):
        print(f"{value:8.1f}  {name or '(not seen)'}")


if __name__ == "__main__":
    main()
