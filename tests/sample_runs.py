"""Run directories for the viewer and exporter tests, made by real runs of the `react` agent against the
fake OpenAI server: each sample plots a chart into the workspace, then answers (some answers wrong)."""

from __future__ import annotations

from pathlib import Path

from fake_openai import FakeOpenAI

from daharness.agents import AgentSettings, make_agent
from daharness.core.record import SampleRecord
from daharness.core.runlog import ScoringSettings, TrajectoryFile
from daharness.core.score import Check, Score
from daharness.core.submission import ModelCall, UserTurn
from daharness.core.task import Task
from daharness.models import ModelSettings
from daharness.runs.rundir import RunDir
from daharness.runs.runner import run_suite
from daharness.suites import load_suite

SUITE = load_suite("closed-form")
WRONG_EVERY = 3  # every third task (by position) gets a wrong first answer value

PLOT = """import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
frame = pd.read_csv("{path}")
frame.select_dtypes("number").iloc[:, 0].plot(title="first column")
plt.savefig("chart.png")
print(frame.shape)"""


def _task_of(request: dict) -> Task:
    text = "\n".join(str(m["content"]) for m in request["messages"])
    return next(task for task in SUITE.tasks if task.instruction in text)


def responder(request: dict) -> str:
    task = _task_of(request)
    if not any(m["role"] == "assistant" for m in request["messages"]):
        code = PLOT.format(path=task.files[0].path)
        return f"Thought: plot the data first\nAction: python_code_sandbox\nAction Input:\n```python\n{code}\n```"
    wrong = SUITE.tasks.index(task) % WRONG_EVERY == 0
    values = [(n, "999" if wrong and i == 0 else v) for i, (n, v) in enumerate(task.gold.answers)]
    return "Thought: I now know the final answer\nFinal Answer: " + " ".join(f"@{n}[{v}]" for n, v in values)


def react_run(
    out: Path,
    count: int = 6,
    cache: Path | None = None,
    model: str = "fake-model",
    tags: list[str] | None = None,
) -> Path:
    """A react run of the first `count` tasks; with `cache`, replies are kept in (and read from) that file."""
    with FakeOpenAI() as server:
        server.responder = responder
        options = AgentSettings(
            model=ModelSettings(model=model, base_url=server.base_url),
            cache_mode="on" if cache else "off",
            cache_path=cache,
        )
        outcome = run_suite(
            SUITE, make_agent("react", options), out, limit=count, concurrency=2,
            scoring=ScoringSettings(modes={"closed-form": "strict"}), labels={"tags": tags or []},
        )  # fmt: skip
    assert outcome.errors == 0
    return out


def add_dialogue_sample(out: Path) -> str:
    """A multi-turn sample with simulated user turns and a scorer with named checks, appended to the run
    (the interactive family writes such samples; this one is written directly through the run log)."""
    run = RunDir(out)
    sample_id = "dialogue-1"
    steps = [
        UserTurn(content="Which column has the most missing values?", source="task"),
        ModelCall(
            messages=[{"role": "user", "content": "Which column?"}], reply="Do you mean in the raw file?"
        ),
        UserTurn(content="Yes, the raw file.", question="Do you mean in the raw file?", source="simulator"),
        ModelCall(messages=[{"role": "user", "content": "Yes"}], reply="The column `income`."),
    ]
    run.write_trajectory(
        TrajectoryFile(
            id=sample_id,
            agent="react",
            answers=["The column `income`."],
            stop_reason="final_answer",
            steps=steps,
        )
    )
    score = Score(
        value=0.5,
        explanation="1 of 2 checks passed",
        checks=[
            Check(name="names the column", passed=True, explanation="income is named"),
            Check(name="gives the count", passed=False, explanation="no count in the answer"),
        ],
    )
    run.append(
        SampleRecord(
            id=sample_id, status="scored", agent="react", family="interactive", category="dialogue",
            score=score, answer="The column `income`.", started_at="2026-01-01T00:00:00+00:00", duration_s=2.0,
            agent_metrics={"completed": True, "stop_reason": "final_answer", "steps": 2},
        )
    )  # fmt: skip
    return sample_id
