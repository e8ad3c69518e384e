"""The agent interface: an agent gets a task and a sandbox backend, and hands back a submission."""

from __future__ import annotations

from typing import Any, Protocol

from daharness.core.backend import SandboxBackend
from daharness.core.submission import Submission
from daharness.core.task import Task


class Agent(Protocol):
    name: str

    def describe(self) -> dict[str, Any]:
        """What identifies this agent's configuration in run.json (model, sampling, limits...)."""
        ...

    def solve(self, task: Task, sandbox: SandboxBackend) -> Submission:
        """Work on the task inside `sandbox` (its workspace holds the task's visible files)."""
        ...
