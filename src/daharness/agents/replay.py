"""The `replay` agent: re-runs the actions of a saved trajectory without any model.

Given the run directory of an earlier run, each sample's recorded actions (Python, Bash, SQL, file
writes) are executed again in a fresh sandbox, in order, and the recorded final answer is handed in.
Output files are recreated, so a run can be reproduced and rescored, e.g. after a scorer fix.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from daharness.agents.base import InfrastructureError, Submission, action_step, tally
from daharness.errors import UserError
from daharness.runs.rundir import trajectory_path
from daharness.sandbox import Observation, Sandbox
from daharness.tasks.model import Task


class ReplayAgent:
    name = "replay"

    def __init__(self, source: Path) -> None:
        if not (source / "trajectories").is_dir():
            raise UserError(f"{source}: not a run directory with trajectories/ (needed by --agent replay)")
        self.source = source

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "source": str(self.source.resolve())}

    def solve(self, task: Task, sandbox: Sandbox) -> Submission:
        path = trajectory_path(self.source, task.id)
        if not path.is_file():
            raise InfrastructureError(f"no saved trajectory for task {task.id} in {self.source}")
        saved = json.loads(path.read_text(encoding="utf-8"))
        submission = Submission(answer=saved.get("answer"), finished=saved.get("finished", True))
        submission.stop_reason = saved.get("stop_reason", "replayed")
        for step in saved.get("steps", []):
            if step.get("type") != "action":
                continue
            observation = _run(sandbox, step["kind"], step["args"])
            submission.trajectory.append(action_step(step["kind"], step["args"], observation))
            if step["kind"] != "write_file":
                tally(submission, observation)
        submission.steps = sum(1 for step in saved.get("steps", []) if step.get("type") == "model") or len(
            submission.trajectory
        )
        return submission


def _run(sandbox: Sandbox, kind: str, args: dict[str, Any]) -> Observation:
    if kind == "python":
        return sandbox.python(args["code"])
    if kind == "bash":
        return sandbox.bash(args["command"])
    if kind == "sql":
        return sandbox.sql(args["database"], args["query"], output=args.get("output"))
    if kind == "write_file":
        return sandbox.write_file(args["path"], args["content"])
    raise InfrastructureError(f"saved trajectory has an unknown action kind {kind!r}")
