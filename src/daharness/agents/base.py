"""The agent interface: an agent gets a task and a workspace, and hands back a submission."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from daharness.sandbox import Sandbox
from daharness.tasks.model import Task


class InfrastructureError(Exception):
    """The harness, not the agent, failed (a crashed solution process, a missing file, an API outage).

    Recorded as `error`, reported apart from wrong answers, and retried when the run resumes.
    """

    def __init__(self, message: str, trajectory: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.trajectory = trajectory or []


@dataclass
class Submission:
    """What the agent leaves behind: a final answer text, plus whatever it wrote in the workspace."""

    answer: str | None
    trajectory: list[dict[str, Any]] = field(default_factory=list)


class Agent(Protocol):
    name: str

    def solve(self, task: Task, sandbox: Sandbox) -> Submission:
        """Work on the task inside `sandbox` (its workspace holds the task's visible files)."""
        ...
