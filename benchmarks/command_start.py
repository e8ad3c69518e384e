"""How long the command line takes as a whole process (issue 27's targets: `daharness --help` <= 0.2 s,
a one-sample reference run <= 1.2 s), and what `import daharness.cli` costs.

Each command runs N times in a fresh process; the median wall time and the CPU time of the process and
its children are printed. Run it on a quiet machine.

Run: python benchmarks/command_start.py [N]
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DAHARNESS = [sys.executable, "-m", "daharness"]


def timed(command: list[str], runs: int, scratch: Path) -> tuple[float, float]:
    """Median wall seconds and median CPU seconds (user + system, children included) of `command`
    (`OUT` in it: a new folder each time, so that a run does not resume the one before)."""
    walls, cpus = [], []
    for number in range(runs):
        given = [str(scratch / f"run{number}") if part == "OUT" else part for part in command]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(given, check=True, capture_output=True)
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    with tempfile.TemporaryDirectory() as scratch:
        cases = {
            "python -c pass (the floor)": [sys.executable, "-c", "pass"],
            "import daharness.cli": [sys.executable, "-c", "import daharness.cli"],
            "daharness --help": [*DAHARNESS, "--help"],
            "one-sample reference run": [
                *DAHARNESS, "run", "--suite", "closed-form", "--agent", "reference", "--ids", "0", "--out", "OUT",
            ],
        }  # fmt: skip
        print(f"median of {runs} runs, wall and CPU (process and children)")
        for name, command in cases.items():
            wall, cpu = timed(command, runs, Path(scratch))
            print(f"{name:32s} {wall:6.3f} s wall {cpu:6.3f} s CPU")


if __name__ == "__main__":
    main()
