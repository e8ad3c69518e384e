"""Samples per minute on Ray with 1, 2 and 4 worker processes, against a model server with a fixed latency.

A local Ray cluster (one head node on loopback, started here) gets N CPUs, so that N samples run at once,
each in its own Ray worker process with its own bwrap sandbox. The model is the tests' OpenAI-compatible
fake on 127.0.0.1; every reply takes LATENCY seconds, as a remote model would. The `react` agent solves
each sample in two replies (one Python step, then the final answer). With the model the bottleneck,
samples/minute should grow nearly linearly with workers until the machine's cores are busy with the
sandboxes and the workers themselves.

Run: python benchmarks/ray_scaling.py [SAMPLES] [LATENCY_S]   (needs: pip install -e '.[ray,test]')
"""

from __future__ import annotations

import functools
import io
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fake_openai import FakeOpenAI
from ray_cluster import LocalRayCluster, cluster_env
from rich.console import Console

from daharness.agents import AgentSettings, make_agent
from daharness.models import ModelSettings
from daharness.runs.executors import ExecutorSettings
from daharness.runs.runner import run_suite
from daharness.suites import load_suite

WORKERS = (1, 2, 4)


def main() -> None:
    os.environ.update(cluster_env())  # the clusters' token, before Ray is imported (it reads it then)
    import ray

    samples = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    latency = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    suite = load_suite("closed-form")
    quiet = Console(file=io.StringIO())

    def responder(request: dict) -> str:
        time.sleep(latency)
        if any(m["role"] == "assistant" for m in request["messages"]):
            return "Thought: I now know the final answer\nFinal Answer: @x[1]"
        return "Thought: look at the data\nAction: python_code_sandbox\nAction Input:\n```python\nprint(6 * 7)\n```"

    print(f"{samples} samples of 2 model replies, {latency:.2f} s per reply; {os.cpu_count()} cores")
    results = {}
    with FakeOpenAI() as server:
        server.responder = responder
        options = AgentSettings(model=ModelSettings(model="slow", base_url=server.base_url), cache_mode="off")
        for workers in WORKERS:
            with (
                LocalRayCluster(worker_nodes=0, cpus_per_node=workers) as cluster,
                tempfile.TemporaryDirectory() as folder,
            ):
                ray.init(address=cluster.address, logging_level="ERROR", log_to_driver=False)
                run = functools.partial(
                    run_suite, suite, make_agent("react", options),
                    executor=ExecutorSettings("ray", ray_address=cluster.address), concurrency=None,
                    agent_factory=functools.partial(make_agent, "react", options), console=quiet,
                )  # fmt: skip
                run(Path(folder) / "warm-up", limit=workers)  # worker processes start and import once
                started = time.perf_counter()
                outcome = run(
                    Path(folder) / "run", ids=[task.id for task in suite.tasks[workers : workers + samples]]
                )
                elapsed = time.perf_counter() - started
                ray.shutdown()
            assert outcome.ran == samples and outcome.errors == 0, outcome
            results[workers] = samples / elapsed * 60
            print(
                f"{workers} worker process(es): {samples} samples in {elapsed:.1f} s = "
                f"{results[workers]:.1f} samples/minute (x{results[workers] / results[WORKERS[0]]:.2f})"
            )
    print(
        f"the model alone allows {60 / (2 * latency):.1f} samples/minute per worker (after a warm-up sample each)"
    )


if __name__ == "__main__":
    main()
