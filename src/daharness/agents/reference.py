"""The `reference` agent: runs the task's own reference solution in the sandbox and answers with what
it prints (or, when the task wants code as its answer, with the code). It shows that a suite is solvable
and that the harness scores a right answer as right.
"""

from __future__ import annotations

import json
import time
from typing import Any

from daharness.agents.options import AgentSettings
from daharness.core.agent import NoAgentOptions
from daharness.core.backend import SandboxBackend
from daharness.core.desktop import Desktop
from daharness.core.errors import InfrastructureError
from daharness.core.observation import Observation
from daharness.core.registry import agent
from daharness.core.submission import Submission, dump_events
from daharness.core.task import Task


@agent("reference", "runs each task's own reference solution")
class ReferenceAgent:
    name = "reference"

    @classmethod
    def build(cls, settings: AgentSettings, options: NoAgentOptions) -> ReferenceAgent:
        return cls()

    def solve(self, task: Task, sandbox: SandboxBackend) -> Submission:
        if task.reference is None:
            raise InfrastructureError(f"task {task.id} has no reference solution")
        code = task.reference.code
        submission = Submission(stop_reason="reference", steps=1)
        if task.reference.language == "python":
            observation = sandbox.python(code)
            submission.act("python", {"code": code}, observation)
        elif task.reference.language == "actions":
            observation = run_screen_actions(task, sandbox, submission)
        elif task.reference.language == "bash":
            observation = sandbox.bash(code)
            submission.act("bash", {"command": code}, observation)
        else:
            raise InfrastructureError(
                f"task {task.id}: {task.reference.language} solutions are not supported yet"
            )
        if not observation.ok:
            error = observation.error
            reason = f"{error.name}: {error.value}" if error else f"exit status {observation.exit_status}"
            turn = (
                f" (turn {task.gold.data['turn']})" if "turn" in task.gold.data else ""
            )  # a dialogue's turn
            raise InfrastructureError(
                f"reference solution of task {task.id}{turn} failed: {reason}",
                dump_events(submission.trajectory),
            )
        # a code answer (interactive turns) is the code itself, which the family runs again to score it
        submission.answer = code if task.answer_format.kind == "code" else observation.stdout.strip()
        return submission

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}


def run_screen_actions(task: Task, sandbox: SandboxBackend, submission: Submission) -> Observation:
    """A solution of screen actions, one after another on the sample's desktop; the first that fails
    ends it (its observation is returned)."""
    try:
        actions = json.loads(task.reference.code) if task.reference else None
    except ValueError as exc:
        raise InfrastructureError(f"task {task.id}: its screen actions are not JSON ({exc})") from None
    if not isinstance(actions, list):
        raise InfrastructureError(f"task {task.id}: its screen actions are not a JSON list")
    screen = sandbox.desktop
    if screen is None:
        raise InfrastructureError(f"task {task.id}: its solution acts on a screen and the sandbox has none")
    observation = Observation(kind="desktop")
    for action in actions:
        observation = screen.act(action)
        submission.act("desktop", {"action": action}, observation)
        if not observation.ok:
            break
        wait_until_still(screen)
    return observation


def wait_until_still(screen: Desktop, timeout_s: float = 30.0) -> None:
    """Wait until the screen stops changing (two screenshots in a row alike), so that the next action of a
    fixed script meets the state this one led to however slowly the application answers, as an agent
    that looks before acting would (a solution cannot look)."""
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        shot = screen.observe("screenshot").image
        if shot == last:
            return
        last = shot
        time.sleep(0.3)
