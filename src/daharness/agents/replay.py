"""The `replay` agent: re-runs the actions of a saved trajectory without any model.

Given the run directory of an earlier run, each sample's recorded actions (Python, Bash, SQL, file
writes) are executed again in a fresh sandbox, in order, and the recorded final answer is handed in.
Output files are recreated, so a run can be reproduced and rescored, e.g. after a scorer fix.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator

from daharness.agents.options import AgentSettings
from daharness.core.agent import AgentOptions
from daharness.core.backend import SandboxBackend
from daharness.core.errors import InfrastructureError, UserError, first_problem
from daharness.core.jsonl import read_json
from daharness.core.observation import Observation
from daharness.core.registry import agent
from daharness.core.runlog import RunSpec, TrajectoryFile, file_safe
from daharness.core.submission import ActionEvent, ModelCall, Submission
from daharness.core.suite import Suite
from daharness.core.task import Task


class ReplayOptions(AgentOptions):
    replay_from: Path = Field(description="The run directory whose actions to repeat.")

    @field_validator("replay_from")
    @classmethod
    def _absolute(cls, path: Path) -> Path:
        return path.resolve()  # run.json names the same run whatever folder the command ran from


@agent("replay", "re-runs the actions saved in an earlier run (needs --replay-from)", options=ReplayOptions)
class ReplayAgent:
    name = "replay"

    def __init__(self, source: Path) -> None:
        if not (source / "trajectories").is_dir():
            raise UserError(f"{source}: not a run directory with trajectories/ (needed by --agent replay)")
        self.source = source
        self.options = ReplayOptions(replay_from=source)

    @classmethod
    def build(cls, settings: AgentSettings, options: ReplayOptions) -> ReplayAgent:
        return cls(options.replay_from)

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": str(self.source.resolve()),
            **self.options.model_dump(mode="json"),
        }

    def check_run(self, suite: Suite, tasks: list[Task]) -> None:
        """Before the first sample: the saved run must be of the suite being run (its ids would name
        other tasks), said once rather than as every sample's failure."""
        path = self.source / "run.json"
        if not path.is_file():  # trajectories written by hand, or by another tool: nothing to compare
            return
        try:
            raw = read_json(path)
            if not isinstance(raw, dict):
                raise UserError(f"{path}: expected a JSON object")
            saved = RunSpec.from_json_dict(raw)
        except UserError as exc:
            raise UserError(f"--replay-from {self.source}: {exc}") from None
        except ValidationError as exc:
            raise UserError(f"--replay-from {self.source}: {path}: {first_problem(exc)}") from None
        name = saved.suite.get("name")
        if name != suite.name:
            raise UserError(
                f"--replay-from {self.source}: that run is of suite {name!r}, not {suite.name!r}; "
                f"replay it with --suite {saved.suite_spec.get('spec') or name}"
            )

    def solve(self, task: Task, sandbox: SandboxBackend) -> Submission:
        path = self.source / "trajectories" / f"{file_safe(task.id)}.json"
        if not path.is_file():
            raise InfrastructureError(f"no saved trajectory for task {task.id} in {self.source}")
        try:
            saved = TrajectoryFile.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except ValidationError as exc:  # before ValueError, its base: one line naming the field
            raise InfrastructureError(f"{path}: not a readable trajectory ({first_problem(exc)})") from None
        except ValueError as exc:
            raise InfrastructureError(f"{path}: not a readable trajectory ({exc})") from None
        answers = saved.answers or [saved.answer]
        submission = Submission(answers=list(answers), finished=saved.finished)
        submission.stop_reason = saved.stop_reason or "replayed"
        for step in saved.steps:
            if isinstance(step, ActionEvent):
                observation = _run(sandbox, step.kind, step.args)
                submission.act(step.kind, step.args, observation, counts=step.kind != "write_file")
        model_calls = sum(isinstance(step, ModelCall) for step in saved.steps)
        submission.steps = model_calls or len(submission.trajectory)
        return submission


def _run(sandbox: SandboxBackend, kind: str, args: dict[str, Any]) -> Observation:
    if kind == "python":
        return sandbox.python(args["code"])
    if kind == "bash":
        return sandbox.bash(args["command"])
    if kind == "sql":
        return sandbox.sql(args["database"], args["query"], output=args.get("output"))
    if kind == "write_file":
        return sandbox.write_file(args["path"], args["content"])
    raise InfrastructureError(f"saved trajectory has an unknown action kind {kind!r}")
