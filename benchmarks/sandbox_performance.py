"""Sandbox performance on this machine.

Measures, with the bwrap backend:
1. median latency of a trivial Python step in a warm kernel (target <= 15 ms);
2. sample start: new workspace + sandbox + `import pandas` done (target <= 1.5 s), wall time and CPU (the
   sandbox's control group, this process and the kernel template together), with the kernel started by
   bwrap and forked from the kernel template (issue 27's target: <= 0.05 s CPU and <= 0.1 s wall);
3. the same 10-step analysis run in one warm kernel vs. the papers' way (a fresh `python` process per step,
   re-reading the data each time), and the ratio;
4. optionally (--capacity N): N sandboxes at once, each with pandas imported and the data loaded, and
   the memory they take, to estimate how many fit in this machine's memory.
For comparison it also times a trivial step through jupyter_client/ipykernel when they are installed.

Run: python benchmarks/sandbox_performance.py [--capacity 100]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from daharness.core.limits import Limits
from daharness.core.task import Task, WorkspaceFile
from daharness.sandbox import BwrapSandbox, template

STEPS = [
    "df = pd.read_csv('sales.csv')",
    "print(df.shape)",
    "print(df['amount'].mean())",
    "print(df.groupby('region')['amount'].sum())",
    "df['big'] = df['amount'] > df['amount'].quantile(0.9)",
    "print(df['big'].mean())",
    "print(df[['amount', 'units']].corr())",
    "monthly = df.groupby('month')['amount'].agg(['mean', 'std'])",
    "print(monthly.head())",
    "print(df.sort_values('amount').tail(3))",
]


def make_data(folder: Path, rows: int = 300_000) -> Task:
    rng = np.random.default_rng(7)
    frame = pd.DataFrame(
        {
            "region": rng.choice(["north", "south", "east", "west"], rows),
            "month": rng.integers(1, 13, rows),
            "units": rng.integers(1, 50, rows),
            "amount": rng.gamma(2.0, 50.0, rows).round(2),
        }
    )
    frame.to_csv(folder / "sales.csv", index=False)
    return Task(
        id="bench", suite="bench", family="workspace", instructions=["bench"],
        files=[WorkspaceFile(path="sales.csv", source=folder / "sales.csv")],
    )  # fmt: skip


def warm_step_latency(task: Task, repeats: int = 300) -> float:
    with BwrapSandbox(task, Limits()) as box:
        box.python("x = 0")
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            box.python("x = x + 1")
            times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def start_with_pandas(task: Task, template: str, repeats: int = 7) -> tuple[float, float]:
    """Median wall time and CPU time of a sample's start up to `import pandas` done."""
    os.environ["DAHARNESS_KERNEL_TEMPLATE"] = template
    if template == "on":  # started and ready before the timing, as in a run of many samples
        with BwrapSandbox(task, Limits()) as box:
            assert box.forked_kernel, "the kernel template is not available here"
    walls, cpus = [], []
    for _ in range(repeats):
        template_cpu = _template_cpu()
        started, own_cpu = time.perf_counter(), time.process_time()
        with BwrapSandbox(task, Limits()) as box:
            assert box.python("import pandas as pd").ok
            walls.append(time.perf_counter() - started)
            sandbox_cpu = box.cpu_seconds()
            if sandbox_cpu is None:
                raise SystemExit("no control groups: the sandbox's CPU cannot be measured here")
            cpus.append(sandbox_cpu + time.process_time() - own_cpu + _template_cpu() - template_cpu)
    return statistics.median(walls), statistics.median(cpus)


def _template_cpu() -> float:
    found = template.current_template()
    if found is None:
        return 0.0
    fields = Path(f"/proc/{found.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ten_steps_warm(task: Task) -> float:
    started = time.perf_counter()
    with BwrapSandbox(task, Limits()) as box:
        box.python("import pandas as pd")
        for step in STEPS:
            assert box.python(step).ok, step
    elapsed = time.perf_counter() - started
    return elapsed


def ten_steps_fresh_processes(folder: Path) -> float:
    """Each step in a new interpreter that imports pandas and re-reads the data (and redoes what the
    step depends on), as the papers' tools ran agent code."""
    started = time.perf_counter()
    for index, step in enumerate(STEPS):
        needed = (
            "\n".join(["import pandas as pd", STEPS[0], *STEPS[1 : index + 1]])
            if index
            else f"import pandas as pd\n{step}"
        )
        done = subprocess.run([sys.executable, "-c", needed], cwd=folder, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    return time.perf_counter() - started


def jupyter_step_latency(repeats: int = 200) -> float | None:
    try:
        from jupyter_client.manager import start_new_kernel
    except ImportError:
        return None
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        client.execute_interactive("x = 0", timeout=30)
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            client.execute_interactive("x = x + 1", timeout=30, output_hook=lambda msg: None)
            times.append(time.perf_counter() - started)
        return statistics.median(times) * 1000
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def memory_available_mb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no MemAvailable in /proc/meminfo")


def capacity(task: Task, count: int) -> None:
    before = memory_available_mb()
    boxes: list[BwrapSandbox] = []
    started = time.perf_counter()
    try:
        for index in range(count):
            box = BwrapSandbox(task, Limits())
            box.start()
            boxes.append(box)
            result = box.python("import pandas as pd\ndf = pd.read_csv('sales.csv')\nprint(len(df))")
            if not result.ok:
                print(f"  sandbox {index + 1} failed: {result.error}")
                break
            if (index + 1) % 25 == 0:
                used = before - memory_available_mb()
                print(
                    f"  {index + 1} sandboxes running, {used:,.0f} MB used ({used / (index + 1):.0f} MB each)"
                )
        used = before - memory_available_mb()
        print(f"{len(boxes)} sandboxes at once in {time.perf_counter() - started:.1f} s, {used:,.0f} MB used; "
              f"{used / len(boxes):.0f} MB each -> about {int(before / (used / len(boxes)))} would fit in the "
              f"{before:,.0f} MB that were available")  # fmt: skip
        alive = sum(box.python("print(len(df))").stdout.strip() == "300000" for box in boxes)
        print(f"all still answering: {alive} of {len(boxes)}")
    finally:
        for box in boxes:
            box.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--capacity", type=int, default=0, help="also start this many sandboxes at once")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        task = make_data(Path(folder))
        print(f"warm kernel, trivial step: median {warm_step_latency(task):.2f} ms (target <= 15 ms)")
        jupyter = jupyter_step_latency()
        if jupyter is not None:
            print(f"  for comparison, jupyter_client + ipykernel (no sandbox): median {jupyter:.2f} ms")
        for mode, name in (("off", "kernel started by bwrap"), ("on", "kernel forked from the template")):
            wall, cpu = start_with_pandas(task, mode)
            print(f"sample start incl. `import pandas`, {name}: median {wall:.3f} s wall, {cpu:.3f} s CPU "
                  "(targets <= 0.1 s wall, <= 0.05 s CPU)")  # fmt: skip
        warm = ten_steps_warm(task)
        fresh = ten_steps_fresh_processes(Path(folder))
        print(f"10-step analysis: warm sandbox kernel {warm:.2f} s, fresh python per step {fresh:.2f} s, "
              f"ratio {fresh / warm:.1f}x")  # fmt: skip
        if args.capacity:
            capacity(task, args.capacity)


if __name__ == "__main__":
    main()
