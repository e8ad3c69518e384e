"""LLM agents against a real OpenAI-compatible HTTP server on 127.0.0.1 with prepared replies."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_openai import Fail, FakeOpenAI

from daharness.agents import AgentSettings, SampleLimits, make_agent
from daharness.core.limits import Limits
from daharness.core.task import Task
from daharness.models import ModelSettings
from daharness.report.agent_metrics import self_debug_table
from daharness.sandbox import BwrapSandbox
from daharness.suites import load_suite

SUITE = load_suite("closed-form")
BY_QUESTION = {task.instruction: task for task in SUITE.tasks}


def _task_of(request: dict) -> Task:
    text = "\n".join(m["content"] for m in request["messages"])
    return next(task for question, task in BY_QUESTION.items() if question in text)


def _answers(task: Task, wrong: bool = False) -> str:
    values = [
        (name, "999" if wrong and i == 0 else value) for i, (name, value) in enumerate(task.gold.answers)
    ]
    return " ".join(f"@{name}[{value}]" for name, value in values)


def _index(task: Task) -> int:
    return SUITE.tasks.index(task)


def react_responder(request: dict) -> str:
    """Turn 1 looks at the data; every 4th task first hits a Traceback; then the final answer (every 8th
    of those answers wrong, so that SDSR has both passes and failures)."""
    task = _task_of(request)
    turn = sum(m["role"] == "assistant" for m in request["messages"])
    debugging = _index(task) % 4 == 0
    if turn == 0:
        code = (
            "print(undefined_name)"
            if debugging
            else f"import pandas as pd\nprint(pd.read_csv('{task.files[0].path}').shape)"
        )
        return (
            f"Thought: look at the data\nAction: python_code_sandbox\nAction Input:\n```python\n{code}\n```"
        )
    if turn == 1 and debugging:
        return f"Thought: fix it\nAction: python_code_sandbox\nAction Input:\n```python\nprint(len(open('{task.files[0].path}').readlines()))\n```"
    wrong = debugging and _index(task) % 8 == 4
    return f"Thought: I now know the final answer\nFinal Answer: {_answers(task, wrong)}"


def da_responder(request: dict) -> str:
    task = _task_of(request)
    turn = sum(m["role"] == "assistant" for m in request["messages"])
    if turn == 0:
        return 'Thought: see the files\nAction: Bash(code="ls")'
    if turn == 1:
        code = f"import pandas as pd\ndf = pd.read_csv('{task.files[0].path}')\nprint(df.describe())"
        return f'Thought: explore\nAction: Python(file_path="explore.py"):\n```python\n{code}\n```'
    return f'Thought: done\nAction: Terminate(output="{_answers(task)}")'


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


def _run(server: FakeOpenAI, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "daharness", "run", "--suite", "closed-form", "--model", "test-model",
         "--base-url", server.base_url, "--out", str(out), "--cache-path", str(out.parent / "cache.sqlite"), *extra],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_react_full_run_with_self_debug_metrics_and_replay(server: FakeOpenAI, tmp_path: Path) -> None:
    server.responder = react_responder
    done = _run(server, tmp_path / "react", "--agent", "react", "-j", "2", "--cache", "off")
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "react" / "report.json").read_text())
    n = len(SUITE.tasks)
    debugging = [t for t in SUITE.tasks if _index(t) % 4 == 0]
    failed = [t for t in debugging if _index(t) % 8 == 4]
    assert report["counts"]["correct"] == n - len(failed) and report["counts"]["errors"] == 0
    agent = report["agent"]
    assert agent["completion_rate"] == 1.0
    assert agent["average_steps"] == round((2 * n + len(debugging)) / n, 2)
    assert agent["code_actions"] == n + len(debugging)
    assert agent["executable_code_rate"] == round(n / (n + len(debugging)), 4)
    assert agent["self_debug"]["passed_with_debug"] == len(debugging) - len(failed)
    assert agent["self_debug"]["failed_with_debug"] == len(failed)
    assert agent["self_debug"]["sdsr"] == round((len(debugging) - len(failed)) / len(debugging), 4)
    assert agent["usage"]["calls"] == len(server.requests) == 2 * n + len(debugging)
    assert agent["usage"]["prompt_tokens"] > 0 and agent["reformat_used"] is False
    assert all(r["stop"] == ["Observation:"] for r in server.requests)
    # the default prompt carries the format requirement; the trajectory holds prompts, replies, actions
    saved = json.loads((tmp_path / "react" / "trajectories" / f"{SUITE.tasks[1].id}.json").read_text())
    kinds = [step["type"] for step in saved["steps"]]
    assert kinds == ["model", "action", "model"]
    assert SUITE.tasks[1].answer_format.text in saved["steps"][0]["messages"][0]["content"]
    assert saved["steps"][0]["usage"]["prompt_tokens"] > 0 and saved["steps"][1]["observation"]["stdout"]
    assert "SDSR" in done.stdout
    # replay: the same actions without any model, same scores
    before = len(server.requests)
    replay = subprocess.run(
        [sys.executable, "-m", "daharness", "run", "--suite", "closed-form", "--agent", "replay",
         "--replay-from", str(tmp_path / "react"), "--out", str(tmp_path / "replay"), "-j", "2"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert replay.returncode == 0, replay.stderr
    assert len(server.requests) == before
    replayed = json.loads((tmp_path / "replay" / "report.json").read_text())
    assert replayed["counts"]["correct"] == report["counts"]["correct"]
    assert replayed["agent"]["code_actions"] == agent["code_actions"]


def test_da_agent_full_run(server: FakeOpenAI, tmp_path: Path) -> None:
    server.responder = da_responder
    done = _run(server, tmp_path / "da", "--agent", "da-agent", "-j", "2", "--cache", "off")
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "da" / "report.json").read_text())
    assert report["counts"]["correct"] == len(SUITE.tasks)
    agent = report["agent"]
    assert agent["average_steps"] == 3 and agent["executable_code_rate"] == 1.0
    assert agent["stop_reasons"] == {"terminate": len(SUITE.tasks)}
    artifacts = tmp_path / "da" / "artifacts" / SUITE.tasks[0].id / "explore.py"
    assert artifacts.read_text().startswith("import pandas as pd")  # Python actions write into the workspace


def test_cache_serves_a_second_identical_run(server: FakeOpenAI, tmp_path: Path) -> None:
    server.responder = da_responder
    first = _run(server, tmp_path / "a", "--agent", "da-agent", "--ids", "0,2", "--cache", "on")
    assert first.returncode == 0, first.stderr
    calls = len(server.requests)
    second = _run(server, tmp_path / "b", "--agent", "da-agent", "--ids", "0,2", "--cache", "on")
    assert second.returncode == 0 and len(server.requests) == calls
    assert json.loads((tmp_path / "b" / "report.json").read_text())["counts"]["correct"] == 2
    refreshed = _run(server, tmp_path / "c", "--agent", "da-agent", "--ids", "0,2", "--cache", "refresh")
    assert refreshed.returncode == 0 and len(server.requests) == 2 * calls


def test_reformat_step_is_used_and_reported(server: FakeOpenAI, tmp_path: Path) -> None:
    def responder(request: dict) -> str:
        content = request["messages"][-1]["content"]
        task = _task_of(request)
        if "Please give your answer:" in content:
            return _answers(task)
        return "Thought: I now know the final answer\nFinal Answer: the mean is about right"

    server.responder = responder
    done = _run(server, tmp_path / "r", "--agent", "react", "--ids", "0", "--dabench-compat",
                "--reformat-model", "formatter", "--cache", "off")  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["agent"]["reformat_used"] is True and report["counts"]["correct"] == 1
    first_prompt = server.requests[0]["messages"][0]["content"]
    assert SUITE.tasks[0].answer_format.text not in first_prompt  # compat: question and constraints only
    assert server.requests[1]["model"] == "formatter"
    assert "answers reformatted" in done.stdout


def test_401_stops_the_run_at_once(server: FakeOpenAI, tmp_path: Path) -> None:
    server.script([Fail(401)])
    done = _run(server, tmp_path / "x", "--agent", "react", "--limit", "5")
    assert done.returncode == 2
    assert "401" in done.stderr and "test-model" in done.stderr and "Traceback" not in done.stderr
    assert len(server.requests) == 1
    assert (
        not (tmp_path / "x" / "samples.jsonl").exists()
        or (tmp_path / "x" / "samples.jsonl").read_text() == ""
    )


def _solve(agent_name: str, server: FakeOpenAI, limits: SampleLimits, **settings: object):  # type: ignore[no-untyped-def]
    model = ModelSettings(model="m", base_url=server.base_url, **settings)  # type: ignore[arg-type]
    agent = make_agent(agent_name, AgentSettings(model=model, limits=limits, cache_mode="off"))
    task = SUITE.tasks[1]
    with BwrapSandbox(task) as box:
        return agent.solve(task, box)


def _looping(request: dict) -> str:
    return "Thought: again\nAction: python_code_sandbox\nAction Input:\n```python\nprint(1)\n```"


@pytest.mark.parametrize("agent_name", ["react", "da-agent"])
def test_step_limit_stops_a_sample(server: FakeOpenAI, agent_name: str) -> None:
    server.responder = (
        _looping if agent_name == "react" else (lambda r: f'Action: Bash(code="echo {len(r["messages"])}")')
    )
    submission = _solve(agent_name, server, SampleLimits(max_steps=3))
    assert submission.stop_reason == "max_steps" and not submission.finished
    assert submission.steps == 3 and len(server.requests) == 3


def test_token_cost_and_time_limits_stop_a_sample(server: FakeOpenAI) -> None:
    server.responder = _looping
    by_tokens = _solve("react", server, SampleLimits(max_tokens=1))
    assert by_tokens.stop_reason == "limit:tokens" and by_tokens.steps == 1
    by_cost = _solve("react", server, SampleLimits(max_cost_usd=1e-9), input_price_per_mtok=5.0)
    assert by_cost.stop_reason == "limit:cost" and by_cost.steps == 1 and by_cost.usage["cost_usd"] > 0

    def slow(request: dict) -> str:
        time.sleep(0.3)
        return _looping(request)

    server.responder = slow
    by_time = _solve("react", server, SampleLimits(max_wall_s=0.5))
    assert by_time.stop_reason == "limit:wall_time" and 1 <= by_time.steps <= 3


def test_da_agent_observations_for_bad_and_repeated_actions(server: FakeOpenAI) -> None:
    replies = iter(["I will just think.", 'Action: Bash(code="echo hi")', 'Action: Bash(code="echo hi")',
                    'Action: Bash(code="sleep 5")', 'Action: Terminate(output="@x[1]")'])  # fmt: skip
    server.responder = lambda request: next(replies)
    model = ModelSettings(model="m", base_url=server.base_url)
    agent = make_agent("da-agent", AgentSettings(model=model, cache_mode="off"))
    task = SUITE.tasks[0]
    with BwrapSandbox(task, Limits(step_timeout_s=1)) as box:
        submission = agent.solve(task, box)
    observations = [r["messages"][-1]["content"] for r in server.requests]
    assert observations[1].startswith("Observation: Unacceptable action: no action found")
    assert observations[2] == "Observation: hi"
    assert "same as the last one" in observations[3]
    assert "Execution timeout" in observations[4]
    assert submission.answer == "@x[1]" and submission.stop_reason == "terminate" and submission.steps == 5


def test_sdsr_arithmetic() -> None:
    # DABench Table 6, gpt-4-0613: 42 / (42 + 17) = 0.71
    outcomes = [(True, True)] * 42 + [(True, False)] * 161 + [(False, True)] * 17 + [(False, False)] * 37
    table = self_debug_table(outcomes)
    assert table == {"passed_with_debug": 42, "passed_without_debug": 161, "failed_with_debug": 17,
                     "failed_without_debug": 37, "sdsr": 0.7119}  # fmt: skip
    assert self_debug_table([(True, False)])["sdsr"] is None
