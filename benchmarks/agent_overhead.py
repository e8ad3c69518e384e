"""Harness overhead per agent step, measured against an instant local model server.

The model server (the tests' OpenAI-compatible fake, on 127.0.0.1) answers at once, so what is left is
daharness itself: the HTTP round trip through the openai client, prompt building and parsing, the sandbox
step, trajectory and record writing. The `react` agent runs N samples of the closed-form suite, each with
a fixed number of trivial tool steps before its final answer. The run starts as `daharness run` does: the
kernel template first, then the suite and the agent.

Run: python benchmarks/agent_overhead.py [SAMPLES] [STEPS_PER_SAMPLE]
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fake_openai import FakeOpenAI

from daharness.agents import AgentSettings, make_agent
from daharness.core.limits import Limits
from daharness.models import ModelSettings
from daharness.runs.runner import run_suite
from daharness.sandbox import prepare_run
from daharness.suites import load_suite


def main() -> None:
    samples = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    tool_steps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    prepare_run("bwrap", Limits())  # as `daharness run` does first: the kernel template loads meanwhile
    suite = load_suite("closed-form")

    def responder(request: dict) -> str:
        turn = sum(m["role"] == "assistant" for m in request["messages"])
        if turn < tool_steps:
            return f"Thought: step {turn}\nAction: python_code_sandbox\nAction Input:\n```python\nx = {turn}\nprint(x)\n```"
        return "Thought: I now know the final answer\nFinal Answer: @x[1]"

    with FakeOpenAI() as server, tempfile.TemporaryDirectory() as folder:
        server.responder = responder
        model = ModelSettings(model="instant", base_url=server.base_url)
        agent = make_agent("react", AgentSettings(model=model, cache_mode="off"))
        started = time.perf_counter()
        run_suite(suite, agent, Path(folder) / "run", limit=samples)
        elapsed = time.perf_counter() - started
        steps, model_latency, action_time = 0, [], []
        for path in (Path(folder) / "run" / "trajectories").glob("*.json"):
            for step in json.loads(path.read_text())["steps"]:
                if step["type"] == "model":
                    steps += 1
                    model_latency.append(step["latency_s"])
                else:
                    action_time.append(step["observation"]["duration_s"])
    print(
        f"{samples} samples, {steps} model steps ({tool_steps} tool steps + final answer each) in {elapsed:.2f} s"
    )
    print(
        f"per step, all included (sample start and scoring spread over the steps): {elapsed / steps * 1000:.1f} ms"
    )
    print(
        f"  model call through the openai client to the instant server: median {statistics.median(model_latency) * 1000:.1f} ms"
    )
    print(f"  sandbox step (trivial Python): median {statistics.median(action_time) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
