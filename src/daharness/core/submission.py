"""What an agent hands back: its answers and a typed trajectory of everything that happened.

A trajectory is a list of events, each with a `type`: a model call, an action with its observation, a
turn of the (simulated) user, or a free-form note. Events are saved as JSON in
`trajectories/<id>.json` and read back with `parse_events` (the `replay` agent does).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter

from daharness.core.observation import Observation
from daharness.core.record import Suspicion


class ModelCall(BaseModel):
    type: Literal["model"] = "model"
    messages: list[dict[str, Any]]
    reply: str
    usage: dict[str, Any] = Field(default_factory=dict)
    cached: bool = False
    latency_s: float = 0.0
    finish_reason: str | None = None


class ActionEvent(BaseModel):
    """One action in the sandbox (python, bash, sql, write_file) and what it returned."""

    type: Literal["action"] = "action"
    kind: str
    args: dict[str, Any]
    observation: Observation


class UserTurn(BaseModel):
    """What the user said in a multi-turn task: a scripted query, or a simulator's answer to a question."""

    type: Literal["user"] = "user"
    content: str
    question: str | None = Field(default=None, description="The agent's question this turn answers.")
    source: Literal["task", "simulator"] = "simulator"


class Note(BaseModel):
    """Anything else worth keeping in the trajectory (a setup step, a harness notice)."""

    type: Literal["note"] = "note"
    text: str
    data: dict[str, Any] = Field(default_factory=dict)


ATTACHMENT_SCHEME = "attachment:"


def attachment_url(name: str) -> str:
    """How a trajectory names one of its sample's attachments (a file of `attachments/<id>/`)."""
    return ATTACHMENT_SCHEME + name


Event = Annotated[ModelCall | ActionEvent | UserTurn | Note, Field(discriminator="type")]


@functools.cache
def _events() -> TypeAdapter[list[Event]]:
    """The validator of saved events, built when a trajectory is first read back (a run writes them)."""
    return TypeAdapter(list[Event])


def parse_events(raw: list[Any]) -> list[Event]:
    """Events from their saved JSON form (raises pydantic's ValidationError on a malformed one)."""
    return _events().validate_python(raw)


def dump_events(events: list[Event]) -> list[dict[str, Any]]:
    return [event.model_dump(mode="json") for event in events]


@dataclass
class Submission:
    """The answers of a sample (one per turn; single-turn tasks have one) and how the agent got there."""

    answers: list[str | None] = field(default_factory=list)
    trajectory: list[Event] = field(default_factory=list)
    finished: bool = True  # the agent ended by itself (final answer / Terminate), not by a limit
    stop_reason: str = "final_answer"
    steps: int = 0
    code_actions: int = 0
    code_errors: int = 0
    saw_traceback: bool = False
    usage: dict[str, Any] = field(default_factory=dict)
    reformatted: bool = False
    # what the harness gathered after the agent ended (never the agent): a check script's output,
    # results of executing the agent's and the reference code... Scorers read it.
    evidence: dict[str, Any] = field(default_factory=dict)
    # what the harness saw the agent's code do while gathering that evidence that an honest solution has no
    # reason to do (tampering with a record, or a file where a workflow check's environment comes from); the sample's record lists them with its suspicious actions
    suspicions: list[Suspicion] = field(default_factory=list)
    # files the harness made for the record while the agent worked (never the agent's code): the screenshots a
    # desktop agent sent its model, by file name. The run keeps them in attachments/<id>/, and the trajectory
    # names them by `attachment_url(name)` where a model call's message had the image.
    attachments: dict[str, bytes] = field(default_factory=dict)

    @property
    def answer(self) -> str | None:
        """The final answer: the last turn's."""
        return self.answers[-1] if self.answers else None

    @answer.setter
    def answer(self, value: str | None) -> None:
        if self.answers:
            self.answers[-1] = value
        else:
            self.answers.append(value)

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

    def tally(self, observation: Observation) -> None:
        """Count one code action's outcome into the figures (DABench's self-debug signal included)."""
        self.code_actions += 1
        self.code_errors += not observation.ok
        self.saw_traceback |= observation.has_traceback

    def act(self, kind: str, args: dict[str, Any], observation: Observation, *, counts: bool = True) -> None:
        """Record one action and, for code actions, count its outcome."""
        self.trajectory.append(ActionEvent(kind=kind, args=args, observation=observation))
        if counts:
            self.tally(observation)
