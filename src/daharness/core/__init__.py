"""The contracts every package shares. They import nothing of daharness outside this package.

The names below are imported when first used (PEP 562), so that a command needing none of them,
`daharness --help` above all, does not build every model at start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from daharness.core.lazy import lazy_attributes

if TYPE_CHECKING:
    from daharness.core.agent import Agent, AgentOptions, NoAgentOptions
    from daharness.core.backend import SandboxBackend, SkippedEntry, Snapshot
    from daharness.core.errors import InfrastructureError, UserError, located
    from daharness.core.family import FamilyBase, Mutation, SampleEnvironment, SandboxAdditions
    from daharness.core.family_commands import (
        CommandOptions,
        DoctorSection,
        Generation,
        GenerationRequest,
        Rescoring,
        RescoringContext,
    )
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
    from daharness.core.task import Conjunction, Task

_PROVIDERS: dict[str, tuple[str, ...]] = {
    "agent": ("Agent", "AgentOptions", "NoAgentOptions"),
    "backend": ("SandboxBackend", "SkippedEntry", "Snapshot"),
    "errors": ("InfrastructureError", "UserError", "located"),
    "family": ("FamilyBase", "Mutation", "SampleEnvironment", "SandboxAdditions"),
    "family_commands": (
        "CommandOptions",
        "DoctorSection",
        "Generation",
        "GenerationRequest",
        "Rescoring",
        "RescoringContext",
    ),
    "limits": ("Limits",),
    "observation": ("ErrorInfo", "Observation"),
    "record": ("SampleRecord",),
    "runlog": ("FORMAT_VERSION", "RunSpec", "ScoringSettings", "TrajectoryFile"),
    "score": ("Check", "Score", "combine"),
    "scoring": ("GoldMissing", "GoldProblem", "ModeGroup", "NoOptions", "ScorerOptions", "ScoringContext"),
    "submission": ("ActionEvent", "Event", "ModelCall", "Note", "Submission", "UserTurn"),
    "suite": ("Suite",),
    "task": ("Conjunction", "Task"),
}
__getattr__ = lazy_attributes(__name__, _PROVIDERS)


__all__ = [
    "FORMAT_VERSION",
    "ActionEvent",
    "Agent",
    "AgentOptions",
    "Check",
    "CommandOptions",
    "Conjunction",
    "DoctorSection",
    "ErrorInfo",
    "Event",
    "FamilyBase",
    "Generation",
    "GenerationRequest",
    "GoldMissing",
    "GoldProblem",
    "InfrastructureError",
    "Limits",
    "ModeGroup",
    "ModelCall",
    "Mutation",
    "NoAgentOptions",
    "NoOptions",
    "Note",
    "Observation",
    "Rescoring",
    "RescoringContext",
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
