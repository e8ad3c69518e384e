"""Small builders shared by tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from daharness.core.task import AnswerFormat, Gold, ScorerSpec, Task, TaskMetadata


def closed_task(
    answers: list[tuple[str, str]],
    *,
    task_id: str = "1",
    concepts: list[str] | None = None,
    level: str = "easy",
) -> Task:
    return Task(
        id=task_id,
        suite="test",
        family="closed-form",
        instructions=["question"],
        gold=Gold(answers=answers),
        answer_format=AnswerFormat(
            text=" ".join(f"@{n}[x]" for n, _ in answers), names=[n for n, _ in answers]
        ),
        scorers=[ScorerSpec(name="closed_form")],
        metadata=TaskMetadata(concepts=concepts or ["Summary Statistics"], level=level),
    )


def sandbox_groups(harness_pid: int) -> list[Path]:
    """The control groups of the sandboxes that the daharness process `harness_pid` started."""
    from daharness.sandbox.cgroups import PIDS_ROOT

    return sorted(PIDS_ROOT.glob(f"{harness_pid}-*")) if PIDS_ROOT.is_dir() else []


def group_processes(groups: list[Path]) -> list[int]:
    found = []
    for group in groups:
        try:
            found += [int(pid) for pid in (group / "cgroup.procs").read_text().split()]
        except OSError:
            continue  # the group is gone, and with it its processes
    return found


def wait_until(condition, timeout_s: float = 30.0, what: str = "condition") -> None:  # type: ignore[no-untyped-def]
    """Poll `condition` until it holds (for states another process reaches), failing after `timeout_s`.
    The pause between tries grows from 20 ms to 0.5 s: a state reached at once is seen at once, and a
    costly condition (a screenshot, the accessibility tree, a window list, a Python started in the
    sandbox) tried back to back would take the core the awaited process needs on a 2-core machine."""
    import time

    deadline = time.monotonic() + timeout_s
    pause = 0.02
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(pause)
        pause = min(pause * 1.5, 0.5)


def replay(
    tmp_path: Path,
    tasks: list[Task],
    steps: dict[str, list[tuple[str, dict]]],
    answer: str = "done",
    concurrency: int = 1,
) -> Path:
    """Run hand-written trajectories (task id -> [(action kind, args), ...]) with the `replay` agent in
    the real sandbox, through the runner; returns the run directory."""
    from daharness.agents import make_agent
    from daharness.core.observation import Observation
    from daharness.core.runlog import TrajectoryFile
    from daharness.core.submission import ActionEvent
    from daharness.core.suite import Suite
    from daharness.runs.runner import run_suite

    source = tmp_path / "written"
    (source / "trajectories").mkdir(parents=True, exist_ok=True)
    for task_id, actions in steps.items():
        events = [ActionEvent(kind=k, args=a, observation=Observation(kind=k)) for k, a in actions]
        saved = TrajectoryFile(id=task_id, agent="hand-written", answer=answer, steps=events)
        (source / "trajectories" / f"{task_id}.json").write_text(saved.model_dump_json())
    out = tmp_path / "run"
    agent = make_agent("replay", options={"replay_from": source})
    run_suite(Suite("attacks", tasks), agent, out, concurrency=concurrency)
    return out


def latest_records(run: Path) -> dict:  # type: ignore[type-arg]
    """The run's latest record of each sample, by id (SampleRecord objects)."""
    from daharness.runs.rundir import RunDir

    return RunDir.open_for_reading(run).latest_records()


def dabench_suite(root: Path, solutions: list[str], answer: str = "@n[1]") -> str:
    """A DABench-style suite in `root` whose reference solutions are `solutions` (Python run in the
    sandbox, hostile as they like), each followed by printing `answer`; returns its --suite spec."""
    import json

    (root / "tables").mkdir(parents=True)
    (root / "solutions").mkdir()
    (root / "tables" / "points.csv").write_text("x,y\n1,2\n3,4\n")
    questions, labels = [], []
    for number, code in enumerate(solutions, start=1):
        questions.append(
            {"id": number, "question": f"question {number}", "concepts": ["Summary Statistics"],
             "constraints": "", "format": "@n[n]", "file_name": "points.csv", "level": "easy"}
        )  # fmt: skip
        labels.append({"id": number, "common_answers": [["n", "1"]]})
        (root / "solutions" / f"{number}.py").write_text(f"{code}\nprint({answer!r})\n")
    for name, rows in (("questions", questions), ("labels", labels)):
        (root / f"{name}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return f"dabench:{root / 'questions.jsonl'}"


def cli(*args: str) -> list[str]:
    import sys

    return [sys.executable, "-m", "daharness", *args]


def records_of(run_dir: Path) -> list[dict]:
    import json

    return [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]


def shared_folder() -> Path:
    """The project's shared material (`../shared` beside the repository, as CI has it); the
    DAHARNESS_SHARED variable names another place (e.g. when working in a git worktree)."""
    import os

    return Path(os.environ.get("DAHARNESS_SHARED") or Path(__file__).parents[2] / "shared")


def load_module(path: Path, name: str) -> Any:
    """A Python file loaded as a module under `name`, outside any package (an official oracle, a sandbox
    module)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_chart_capture(name: str = "chart_capture_for_tests") -> Any:
    """The in-sandbox chart capture module, loaded by file path as the sandbox loads it."""
    return load_module(Path(__file__).parents[1] / "src" / "daharness" / "sandbox" / "chart_capture.py", name)


def last_line_printed(source: str, *args: str, env: dict[str, str] | None = None) -> str:
    """Run `source` in a fresh Python (its imports, threads and collector its own) and return the last line
    it printed; fail with its error output when it fails."""
    done = subprocess.run(
        [sys.executable, "-c", source, *args], capture_output=True, text=True, env=env, timeout=300
    )
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and lines, done.stdout[-500:] + done.stderr[-2000:]
    return lines[-1]
