"""The agent interface: an agent gets a task and a sandbox, and hands back a submission.

A submission carries the final answer, the trajectory (every model call and every action with its
observation) and the figures the report aggregates: whether the agent finished on its own, its steps,
its code actions and how many failed, whether it saw a Traceback, and its token usage and cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from daharness.sandbox import Observation, Sandbox
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
    finished: bool = True  # the agent ended by itself (final answer / Terminate), not by a limit
    stop_reason: str = "final_answer"
    steps: int = 0
    code_actions: int = 0
    code_errors: int = 0
    saw_traceback: bool = False
    usage: dict[str, Any] = field(default_factory=dict)
    reformatted: bool = False

    def metrics(self) -> dict[str, Any]:
        return {
            "completed": self.finished,
            "stop_reason": self.stop_reason,
            "steps": self.steps,
            "code_actions": self.code_actions,
            "code_errors": self.code_errors,
            "saw_traceback": self.saw_traceback,
            "usage": self.usage,
            "reformatted": self.reformatted,
        }


class Agent(Protocol):
    name: str

    def describe(self) -> dict[str, Any]:
        """What identifies this agent's configuration in run.json (model, sampling, limits...)."""
        ...

    def solve(self, task: Task, sandbox: Sandbox) -> Submission:
        """Work on the task inside `sandbox` (its workspace holds the task's visible files)."""
        ...


def action_step(kind: str, args: dict[str, Any], observation: Observation) -> dict[str, Any]:
    """One action of a trajectory, in the shape the `replay` agent reads back."""
    return {"type": "action", "kind": kind, "args": args, "observation": observation.model_dump()}


def has_traceback(observation: Observation) -> bool:
    """DABench's self-debug signal: the interpreter reported a Traceback."""
    texts = (observation.stdout, observation.stderr, observation.error.traceback if observation.error else "")
    return any("Traceback" in text for text in texts)


def tally(submission: Submission, observation: Observation) -> None:
    """Count one code action's outcome into the submission's figures."""
    submission.code_actions += 1
    submission.code_errors += not observation.ok
    submission.saw_traceback |= has_traceback(observation)
