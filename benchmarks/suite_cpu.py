"""Where the test suite's CPU goes: runs pytest (the README's command, with any arguments given) and prints
the CPU-seconds of each test file and of the costliest tests.

On 2 cores the suite is CPU-bound (vmstat: about 8 % idle during a full run): its wall time falls only
when its CPU does, and time a test spends waiting is used by the other worker. Per-test durations
cannot show this, and neither can /usr/bin/time, which misses the services and browsers that leave the
test's process tree. This samples the whole machine's CPU (/proc/stat, every 0.5 s) and splits each
moment's CPU among the tests running then (on every xdist worker). Run so, on an otherwise quiet machine:
whatever else runs is counted too.

As root where cgroup v1 has a `cpuacct` hierarchy of its own, the run goes into an accounting group instead,
each xdist worker into one below it, and each test gets the CPU its worker's group used while it ran: every
process the tests started, and nothing else, so the figures hold on a busy machine too (its waits are
longer there, and a test that waits by polling uses more CPU).

Run: python benchmarks/suite_cpu.py [--keep FOLDER] [PYTEST ARGS...]    e.g. tests/test_runs.py, or nothing
for the suite; --keep leaves pytest's output (pytest.out) and the figures in FOLDER
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

from suite_cpu_plugin import group_cpu_s  # this folder is the script's first import path

HERE = Path(__file__).resolve().parent
SHOWN = 25
TARGET_S = 600  # issue 45: the whole suite in 10 minutes on 2 cores
CPUACCT = Path("/sys/fs/cgroup/cpuacct")


def accounting_group() -> Path | None:
    """A new cpuacct group for the run, or None where there is none to make (not root, cgroup v2, or v1's
    cpuacct mounted with cpu, where the sandboxes' CPU groups would take their processes out of it)."""
    own = [line.split(":", 2)[1] for line in Path("/proc/self/cgroup").read_text().splitlines()]
    if "cpuacct" not in own:
        return None
    group = CPUACCT / f"daharness-suite-{os.getpid()}"
    try:
        group.mkdir()
    except OSError:
        return None
    return group


def attribute(folder: Path) -> tuple[Counter[str], float, float, bool]:
    """CPU-seconds per test id (and "(between tests)"), the run's CPU-seconds, the wall seconds, and whether
    the CPU is the run's own (its accounting group's) rather than the machine's."""
    timeline = json.loads((folder / "timeline.json").read_text())
    intervals = [json.loads(line) for path in folder.glob("tests-*.jsonl") for line in path.open()]
    wall = timeline[-1][0] - timeline[0][0]
    spent: Counter[str] = Counter()
    if (folder / "group.json").is_file():  # measured per worker's group: the run's own CPU only
        total = json.loads((folder / "group.json").read_text())["cpu_s"]
        for test, _, _, used in intervals:
            spent[test] += used
        spent["(between tests)"] = total - sum(spent.values())
        return spent, total, wall, True
    cores = os.cpu_count() or 1
    total = 0.0
    for (start, all_before, idle_before), (end, all_after, idle_after) in pairwise(timeline):
        ticks = max(all_after - all_before, 1)
        busy = (1 - (idle_after - idle_before) / ticks) * cores * (end - start)
        total += busy
        running = [test for test, began, ended, _ in intervals if began < end and ended > start]
        for test in running or ["(between tests)"]:
            spent[test] += busy / max(len(running), 1)
    return spent, total, wall, False


def run_pytest(folder: Path, arguments: list[str]) -> None:
    """pytest with the plugin, in an accounting group when one can be made (its CPU then goes to
    group.json, and the group is removed once no process is left in it)."""
    group = accounting_group()
    env = {
        **os.environ,
        "DAHARNESS_SUITE_CPU": str(folder),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])),
    }
    if group is not None:
        env["DAHARNESS_SUITE_CPU_GROUP"] = str(group)
    command = [sys.executable, "-m", "pytest", "-p", "suite_cpu_plugin", "-q", *arguments]
    with open(folder / "pytest.out", "w") as out:
        joined = None if group is None else lambda: (group / "cgroup.procs").write_text(str(os.getpid()))
        done = subprocess.run(command, env=env, cwd=HERE.parent, stdout=out, stderr=subprocess.STDOUT,
                              preexec_fn=joined, check=False)  # fmt: skip
    lines = (folder / "pytest.out").read_text().strip().splitlines()
    print(lines[-1] if lines else f"pytest exited with {done.returncode} and printed nothing")
    if group is not None:
        left = [pid for path in group.rglob("cgroup.procs") for pid in path.read_text().split()]
        (folder / "group.json").write_text(json.dumps({"cpu_s": group_cpu_s(group), "left": len(left)}))
        if left:  # a leak of the tests': say so, and leave the group to whoever looks into it
            print(f"{len(left)} processes the tests started are still running, in {group}")
        else:
            for path in sorted(group.rglob("*/"), key=lambda p: len(p.parts), reverse=True):
                path.rmdir()
            group.rmdir()
    if not (folder / "timeline.json").is_file():
        raise SystemExit(f"pytest exited with {done.returncode} before the plugin wrote its figures")


def main() -> None:
    arguments = sys.argv[1:]
    keep = None
    if arguments[:1] == ["--keep"]:
        keep, arguments = Path(arguments[1]), arguments[2:]
        keep.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="daharness-suite-cpu-") as temporary:
        folder = keep or Path(temporary)
        run_pytest(folder, arguments)
        spent, total, wall, own = attribute(folder)
    cores = os.cpu_count() or 1
    measured = "the tests' processes only (cpuacct group)" if own else "the whole machine's"
    print(f"{total:.0f} CPU-seconds in {wall:.0f} s on {cores} cores ({total / (wall * cores):.0%} busy)")
    print(f"CPU counted: {measured}; on {cores} quiet cores at least {total / cores:.0f} s")
    print(f"{TARGET_S / 60:g} minutes on {cores} cores are {TARGET_S * cores} CPU-seconds")
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
