"""How much concurrency hides model latency on this machine: SAMPLES closed-form samples run with `-j 1`
and with `-j SAMPLES`, against a model server whose every reply takes LATENCY seconds (the tests'
OpenAI-compatible fake on 127.0.0.1). The `react` agent answers each sample in two replies: a Python
step that reads the sample's CSV with pandas, then the final answer. Each run is a fresh process, as a
user's `daharness run` is: the kernel template (as it is by default; `--template on|off` to choose)
starts first, then the suite loads and the agent is made.

Issue 27's target: `-j 16` at 1 s latency at least 12 times as fast as `-j 1`.

Run: python benchmarks/concurrency.py [SAMPLES] [LATENCY_S] [--template auto|on|off]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fake_openai import FakeOpenAI

_RUN = """
import sys, time
from rich.console import Console
import io
from daharness.agents import AgentSettings, make_agent
from daharness.models import ModelSettings
from daharness.runs.runner import run_suite
from daharness.suites import load_suite
from pathlib import Path
base_url, out, samples, jobs = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
from daharness.core.limits import Limits
from daharness.sandbox import prepare_run
prepare_run("bwrap", Limits())  # as `daharness run` does first: the kernel template loads meanwhile
options = AgentSettings(model=ModelSettings(model="slow", base_url=base_url), cache_mode="off")
suite = load_suite("closed-form")
started = time.perf_counter()
agent = make_agent("react", options)  # imports the openai SDK (about a second), once per process
made = time.perf_counter()
outcome = run_suite(suite, agent, out, limit=samples, concurrency=jobs, console=Console(file=io.StringIO()))
print(made - started, time.perf_counter() - started, outcome.ran, outcome.errors)
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("samples", nargs="?", type=int, default=16)
    parser.add_argument("latency", nargs="?", type=float, default=1.0)
    parser.add_argument("--template", default="auto", choices=("auto", "on", "off"))
    args = parser.parse_args()

    def responder(request: dict) -> str:
        time.sleep(args.latency)
        if any(m["role"] == "assistant" for m in request["messages"]):
            return "Thought: I now know the final answer\nFinal Answer: @x[1]"
        return (
            "Thought: look at the data\nAction: python_code_sandbox\nAction Input:\n```python\n"
            "import pandas as pd, glob\nprint(pd.read_csv(glob.glob('*.csv')[0]).shape)\n```"
        )

    env = {**os.environ, "DAHARNESS_KERNEL_TEMPLATE": args.template}
    print(
        f"{args.samples} samples of 2 model replies, {args.latency:.2f} s per reply; {os.cpu_count()} cores"
    )
    times: dict[int, float] = {}
    agent_times: dict[int, float] = {}
    process_times: dict[int, float] = {}  # the whole process: Python's start and the imports included
    with FakeOpenAI() as server, tempfile.TemporaryDirectory() as folder:
        server.responder = responder
        for jobs in (1, args.samples):
            out = Path(folder) / f"run-{jobs}"
            process_started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-c", _RUN, server.base_url, str(out), str(args.samples), str(jobs)],
                capture_output=True, text=True, env=env, check=False,
            )  # fmt: skip
            process_times[jobs] = time.perf_counter() - process_started
            if done.returncode != 0:
                raise SystemExit(f"the run failed: {done.stderr[-2000:]}")
            making, elapsed, ran, errors = done.stdout.split()[-4:]
            assert int(ran) == args.samples and int(errors) == 0, done.stdout + done.stderr
            times[jobs] = float(elapsed)
            agent_times[jobs] = float(making)
            records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
            print(
                f"-j {jobs}: {args.samples} samples in {times[jobs]:.1f} s ({len(records)} records; making the"
                f" agent, which imports the openai SDK: {agent_times[jobs]:.1f} s of it)"
            )
    ideal = args.samples * 2 * args.latency / (2 * args.latency)
    print(
        f"-j {args.samples} is {times[1] / times[args.samples]:.1f}x -j 1 (replies alone allow {ideal:.0f}x)"
    )
    runs = {jobs: times[jobs] - agent_times[jobs] for jobs in times}
    print(f"  the runs alone, after the agent is made: {runs[1] / runs[args.samples]:.1f}x")
    print(
        f"  the whole processes (Python's start and the imports too): {process_times[1]:.1f} s and"
        f" {process_times[args.samples]:.1f} s, {process_times[1] / process_times[args.samples]:.1f}x"
    )


if __name__ == "__main__":
    main()
