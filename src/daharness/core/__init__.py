"""The contracts every package shares. They import nothing of daharness outside this package."""

from daharness.core.agent import Agent
from daharness.core.backend import SandboxBackend, SkippedEntry, Snapshot
from daharness.core.errors import InfrastructureError, UserError, located
from daharness.core.family import FamilyBase, Mutation, SampleEnvironment, SandboxAdditions
from daharness.core.limits import Limits
from daharness.core.observation import ErrorInfo, Observation
from daharness.core.record import SampleRecord
from daharness.core.runlog import FORMAT_VERSION, RunSpec, ScoringSettings, TrajectoryFile
from daharness.core.score import Check, Score, combine
from daharness.core.scoring import (
    GoldMissing,
    GoldProblem,
    ModeGroup,
    NoOptions,
    ScorerOptions,
    ScoringContext,
)
from daharness.core.submission import ActionEvent, Event, ModelCall, Note, Submission, UserTurn
from daharness.core.suite import Suite
from daharness.core.task import Conjunction, Family, Task

__all__ = [
    "FORMAT_VERSION",
    "ActionEvent",
    "Agent",
    "Check",
    "Conjunction",
    "ErrorInfo",
    "Event",
    "Family",
    "FamilyBase",
    "GoldMissing",
    "GoldProblem",
    "InfrastructureError",
    "Limits",
    "ModeGroup",
    "ModelCall",
    "Mutation",
    "NoOptions",
    "Note",
    "Observation",
    "RunSpec",
    "SampleEnvironment",
    "SampleRecord",
    "SandboxAdditions",
    "SandboxBackend",
    "Score",
    "ScorerOptions",
    "ScoringContext",
    "ScoringSettings",
    "SkippedEntry",
    "Snapshot",
    "Submission",
    "Suite",
    "Task",
    "TrajectoryFile",
    "UserError",
    "UserTurn",
    "combine",
    "located",
]
