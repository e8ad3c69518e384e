"""The one Task schema shared by every benchmark family.

Loaders translate official formats into `Task`; nothing downstream reads an official format directly.
Paths inside a task are absolute on the host: a loader resolves them once so that agents, sandboxes and
scorers never need to know where a suite came from.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Conjunction(StrEnum):
    """How the values of several scorers combine into one task score."""

    avg = "avg"
    and_ = "and"
    or_ = "or"
    max = "max"
    min = "min"
    all_mean = "all_mean"  # 0 when any scorer scores 0, else the mean (Spider2-V's `and`)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


class WorkspaceFile(_Model):
    """A file the agent sees: copied from `source` on the host to `path` inside the workspace."""

    path: str = Field(description="Relative path inside the agent's workspace.")
    source: Path = Field(description="Absolute path of the file on the host.")


class GoldFile(_Model):
    """A hidden file that only scorers read (expected table, chart data, filled database...)."""

    name: str = Field(description="Logical name scorers refer to, usually the expected output file name.")
    source: Path


class Gold(_Model):
    """Everything hidden from the agent."""

    answers: list[tuple[str, str]] = Field(
        default_factory=list,
        description="Closed-form labels as ordered (name, value) pairs; duplicates are kept as found.",
    )
    choice: str | None = Field(default=None, description="Correct letter for multiple-choice tasks.")
    files: list[GoldFile] = Field(default_factory=list)
    data: dict[str, Any] = Field(default_factory=dict, description="Any other family-specific gold value.")


class AnswerFormat(_Model):
    """What the agent must hand back."""

    kind: Literal["at_name", "json", "text", "choice", "files", "code"] = "at_name"
    text: str = Field(default="", description="The format requirement as shown to the agent.")
    names: list[str] = Field(default_factory=list, description="Answer names for `at_name` answers.")


class ScorerSpec(_Model):
    """One scorer applied to a task, with its options (e.g. mode, tolerance, columns)."""

    name: str
    options: dict[str, Any] = Field(default_factory=dict)


class TaskMetadata(_Model):
    concepts: list[str] = Field(default_factory=list)
    level: str | None = Field(default=None, description="easy / medium / hard, as the source names it.")
    category: str | None = None
    subcategory: str | None = None
    tags: list[str] = Field(default_factory=list)
    source: str | None = Field(default=None, description="Where the task comes from (benchmark, file).")
    source_id: int | str | None = Field(default=None, description="The id as the official files spell it.")


class DialogueTurn(_Model):
    """One turn of an interactive task's history or script."""

    role: Literal["user", "assistant", "system"]
    content: str
    code: str | None = None


class SetupStep(_Model):
    """A step run before the agent starts (workflow tasks): copy, run a command, load SQL..."""

    kind: Literal["copy", "command", "python", "sql", "download_local", "open"]
    args: dict[str, Any] = Field(default_factory=dict)


class PythonLibrary(_Model):
    """A folder of Python code (a suite's private library) mounted read-only in the sandbox and put on
    its import path; the agent is told about its functions."""

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="The import name, e.g. decision_kit.")
    source: Path = Field(description="Absolute host folder holding the package or module `name` (only it).")
    functions: dict[str, str] = Field(
        default_factory=dict,
        description="Function name -> its signature and docstring, as shown to the agent.",
    )


class ReferenceSolution(_Model):
    """Code that solves the task; the `reference` agent runs it, `validate` checks it scores 1."""

    language: Literal["python", "bash", "sql", "actions"] = "python"
    code: str = Field(
        description="The solution; for `actions`, a JSON list of screen actions run on the desktop in turn: "
        "pyautogui code (a string) or an action of the paper's JSON action space (an object)."
    )


class Task(_Model):
    id: str
    suite: str
    family: str = Field(
        pattern=r"^[a-z][a-z0-9_-]*$",
        description="The name of a registered family (`daharness families`), checked when a suite loads.",
    )
    instructions: list[str] = Field(
        min_length=1, description="The request; several entries for multi-turn tasks, in order."
    )
    constraints: str = ""
    files: list[WorkspaceFile] = Field(default_factory=list)
    gold: Gold = Field(default_factory=Gold)
    answer_format: AnswerFormat = Field(default_factory=AnswerFormat)
    scorers: list[ScorerSpec] = Field(default_factory=list)
    conjunction: Conjunction = Conjunction.avg
    metadata: TaskMetadata = Field(default_factory=TaskMetadata)
    dialogue: list[DialogueTurn] = Field(default_factory=list)
    prompt: list[DialogueTurn] = Field(
        default_factory=list,
        description="The benchmark's own prompt as chat messages, when it gives one (Tapilot-Crossing's "
        "prompt_with_hist_json): agents that reproduce its settings send it. Never an answer.",
    )
    prompt_texts: dict[str, str] = Field(
        default_factory=dict,
        description="Texts of the benchmark's own prompt, by name, for an agent that assembles it as the benchmark's "
        "baseline does (Spider2-V: the prompt templates of the user's checkout, the instruction and the retrieved "
        "documentation apart). Never an answer.",
    )
    setup: list[SetupStep] = Field(default_factory=list)
    reference: ReferenceSolution | None = None
    hidden_paths: list[str] = Field(
        default_factory=list,
        description="More to hide in the sandbox than the defaults (installed packages' bundled data): globs "
        "relative to site-packages (`mypkg/data`) or absolute paths; from the suite.json's `hide`.",
    )
    workdir: str = Field(
        default="/workspace",
        pattern=r"^/[A-Za-z0-9._/-]*$",
        description="Where the workspace is inside an isolated sandbox (e.g. /home/user for Spider2-V tasks).",
    )
    desktop: bool = Field(
        default=False,
        description="The task needs a screen: its sandbox gets a desktop (display, window manager, browser).",
    )
    warnings: list[str] = Field(
        default_factory=list, description="Defects the loader found in the official data (task still runs)."
    )
    libraries: list[PythonLibrary] = Field(
        default_factory=list, description="Private Python libraries importable inside the sandbox."
    )

    @property
    def instruction(self) -> str:
        """The first (for single-turn tasks: the only) instruction."""
        return self.instructions[0]
