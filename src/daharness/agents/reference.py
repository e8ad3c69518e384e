"""The `reference` agent: runs the task's own reference solution in the sandbox and answers with what
it prints. It shows that a suite is solvable and that the harness scores a right answer as right.
"""

from __future__ import annotations

from typing import Any

from daharness.agents.base import InfrastructureError, Submission, action_step, tally
from daharness.sandbox import Sandbox
from daharness.tasks.model import Task


class ReferenceAgent:
    name = "reference"

    def solve(self, task: Task, sandbox: Sandbox) -> Submission:
        if task.reference is None:
            raise InfrastructureError(f"task {task.id} has no reference solution")
        code = task.reference.code
        if task.reference.language == "python":
            observation = sandbox.python(code)
            step = action_step("python", {"code": code}, observation)
        elif task.reference.language == "bash":
            observation = sandbox.bash(code)
            step = action_step("bash", {"command": code}, observation)
        else:
            raise InfrastructureError(
                f"task {task.id}: {task.reference.language} solutions are not supported yet"
            )
        if not observation.ok:
            error = observation.error
            reason = f"{error.name}: {error.value}" if error else f"exit status {observation.exit_status}"
            raise InfrastructureError(f"reference solution of task {task.id} failed: {reason}", [step])
        submission = Submission(
            answer=observation.stdout.strip(), trajectory=[step], stop_reason="reference", steps=1
        )
        tally(submission, observation)
        return submission

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}
