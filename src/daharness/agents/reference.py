"""The `reference` agent: runs the task's own reference solution and answers with what it prints.

It shows that a suite is solvable and that the harness scores a right answer as right.
"""

from __future__ import annotations

from daharness.agents.base import InfrastructureError, Submission
from daharness.sandbox import Workspace, run_python
from daharness.tasks.model import Task


class ReferenceAgent:
    name = "reference"

    def __init__(self, timeout_s: float = 120.0) -> None:
        self.timeout_s = timeout_s

    def solve(self, task: Task, workspace: Workspace) -> Submission:
        if task.reference is None:
            raise InfrastructureError(f"task {task.id} has no reference solution")
        if task.reference.language != "python":
            raise InfrastructureError(
                f"task {task.id}: {task.reference.language} solutions are not supported yet"
            )
        result = run_python(task.reference.code, workspace.root, self.timeout_s)
        step = {
            "action": "python",
            "code": task.reference.code,
            "observation": {"stdout": result.stdout, "stderr": result.stderr, "exit_code": result.exit_code},
            "timed_out": result.timed_out,
            "duration_s": round(result.duration_s, 4),
        }
        if result.timed_out:
            raise InfrastructureError(
                f"reference solution of task {task.id} timed out after {self.timeout_s:g}s", [step]
            )
        if result.exit_code != 0:
            last = (result.stderr.strip().splitlines() or ["no error output"])[-1]
            raise InfrastructureError(
                f"reference solution of task {task.id} exited with {result.exit_code}: {last}", [step]
            )
        return Submission(answer=result.stdout.strip(), trajectory=[step])
